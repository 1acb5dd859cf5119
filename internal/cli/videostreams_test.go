package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/benchmark"
	"aimeter/console"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/sut/null"
)

// capacitySUT serves one frame every `every`, first in first out, from one
// worker goroutine: its capacity is exactly 1/every frames per second. Like
// the reference SUT, it keeps its queue when a run ends with frames written
// off as lost; only a drain (drainableSUT) empties it.
type capacitySUT struct {
	every time.Duration

	mu      sync.Mutex
	queue   []capacityJob
	busy    bool
	lastRun *loadgen.Responder
	// backlog is, for each run, the frames queued or in progress when its
	// first frame arrived.
	backlog []int

	wake chan struct{}
	quit chan struct{}
	done chan struct{}
}

type capacityJob struct {
	r  *loadgen.Responder
	id loadgen.ResponseID
}

func newCapacitySUT(every time.Duration) *capacitySUT {
	s := &capacitySUT{every: every, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go s.work()
	return s
}

func (s *capacitySUT) Name() string { return "CapacitySUT" }

func (s *capacitySUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	s.mu.Lock()
	if r != s.lastRun {
		s.lastRun = r
		n := len(s.queue)
		if s.busy {
			n++
		}
		s.backlog = append(s.backlog, n)
	}
	for _, q := range samples {
		s.queue = append(s.queue, capacityJob{r, q.ID})
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *capacitySUT) FlushQueries() {}

func (s *capacitySUT) work() {
	defer close(s.done)
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.mu.Unlock()
			select {
			case <-s.wake:
				continue
			case <-s.quit:
				return
			}
		}
		j := s.queue[0]
		s.queue = s.queue[1:]
		s.busy = true
		s.mu.Unlock()
		time.Sleep(s.every)
		j.r.Complete(j.id, nil, 0)
		s.mu.Lock()
		s.busy = false
		s.mu.Unlock()
	}
}

func (s *capacitySUT) Close() {
	close(s.quit)
	<-s.done
}

func (s *capacitySUT) runs() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.backlog...)
}

// drainableSUT is a capacitySUT that implements loadgen.Drainer.
type drainableSUT struct{ *capacitySUT }

func (s drainableSUT) Drain(ctx context.Context) error {
	s.mu.Lock()
	s.queue = nil
	for s.busy {
		s.mu.Unlock()
		time.Sleep(s.every / 2)
		if err := ctx.Err(); err != nil {
			return err
		}
		s.mu.Lock()
	}
	s.mu.Unlock()
	return nil
}

// streamsRun is the outcome of searchStreams on fake SUTs.
type streamsRun struct {
	code   int
	stdout string
	stderr string
	took   time.Duration
	result benchmark.StreamsFile
}

// runStreamSearch runs the search of v over SUT instances from open, in a
// synctest bubble the caller provides, and reads back its --json file.
func runStreamSearch(t *testing.T, v videoFlags, open openSUT) streamsRun {
	t.Helper()
	v.jsonFile = filepath.Join(t.TempDir(), "streams.json")
	if err := checkVideoFlags(&v); err != nil {
		t.Fatal(err)
	}
	tw := newTwin(t)
	start := time.Now()
	err := searchStreams(context.Background(), tw.st, &v, open, -1)
	out := streamsRun{took: time.Since(start), stdout: tw.stdout.String(), stderr: tw.stderr.String()}
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		out.code = ee.code
	case err != nil:
		t.Fatal(err)
	}
	b, err := os.ReadFile(v.jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out.result); err != nil {
		t.Fatal(err)
	}
	return out
}

// The fake SUTs serve 100 frames/s; at 10 fps with a 150 ms timeout, 10
// streams pass (each burst of 10 frames is served within 100 ms) and 11 fail
// (the queue grows by one frame a period, and by the fifth period the last
// frame of a burst waits over 150 ms). So the answer is exactly 10.
var capacityFlags = videoFlags{fps: 10, duration: 2 * time.Second, timeout: 150 * time.Millisecond, limit: 4096, quiet: false}

func capacityOpen(instances *[]*capacitySUT, drainable bool) openSUT {
	return func(context.Context) (loadgen.SUT, loadgen.QSL, func(), error) {
		s := newCapacitySUT(10 * time.Millisecond)
		*instances = append(*instances, s)
		var sut loadgen.SUT = s
		if drainable {
			sut = drainableSUT{s}
		}
		return sut, null.QSL{Total: 1024}, s.Close, nil
	}
}

// TestVideoStreamsFindsTheCapacity: on a SUT of known capacity the search
// finds the exact answer, confirms it with fresh probes, lists every probe,
// and no probe inherits the previous one's backlog, whether the SUT is
// drained or replaced.
func TestVideoStreamsFindsTheCapacity(t *testing.T) {
	for _, drainable := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			var instances []*capacitySUT
			r := runStreamSearch(t, capacityFlags, capacityOpen(&instances, drainable))
			if r.code != ExitOK || r.result.MaxStreams != 10 || r.result.FirstFail != 11 || !r.result.Confirmed {
				t.Fatalf("drainable %v: exit %d, %+v\n%s%s", drainable, r.code, r.result.StreamsResult, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "Maximum video streams: 10 at 10 fps (confirmed by fresh probes: 10 passed, 11 failed;") {
				t.Errorf("verdict:\n%s", r.stdout)
			}
			wantIdle := "drained"
			if !drainable {
				wantIdle = "fresh"
			}
			if p := r.result.Probes[0]; p.Idle != "fresh" {
				t.Errorf("the first probe runs on the instance just opened: %+v", p)
			}
			var backlog []int
			for _, s := range instances {
				backlog = append(backlog, s.runs()...)
			}
			if len(backlog) != len(r.result.Probes) {
				t.Fatalf("%d runs seen by the SUTs, %d probes listed", len(backlog), len(r.result.Probes))
			}
			for i, p := range r.result.Probes {
				if backlog[i] != 0 {
					t.Errorf("probe %d (%d streams) started with %d frames of backlog", i, p.N, backlog[i])
				}
				if i > 0 && p.Idle != wantIdle || p.Frames != int64(p.N*20) || p.OK != (p.N <= 10) || (p.Lost > 0) == p.OK || p.Seconds <= 0 {
					t.Errorf("probe %d: %+v", i, p)
				}
				if !strings.Contains(r.stdout, console.StreamProbeLine(p)) {
					t.Errorf("probe %d is not printed:\n%s", i, r.stdout)
				}
			}
			if last := r.result.Probes[len(r.result.Probes)-2:]; last[0].Phase != gbt.PhaseConfirm || last[1].Phase != gbt.PhaseConfirm || last[0].N != 10 || last[1].N != 11 {
				t.Errorf("the last two probes are not the confirmation of 10 and 11: %+v", last)
			}
			if drainable && len(instances) != 1 || !drainable && len(instances) != len(r.result.Probes) {
				t.Errorf("drainable %v: %d instances for %d probes", drainable, len(instances), len(r.result.Probes))
			}
		})
	}
}

// TestVideoStreamsBudget: a search stops within its budget and says what it
// has: a coarser bracket, still confirmed (exit 0), or no confirmed answer
// (exit 3).
func TestVideoStreamsBudget(t *testing.T) {
	rows := []struct {
		why       string
		budget    time.Duration
		code      int
		max, fail int
		says      string
	}{
		{"20 s: bisection stops early, the bracket 8–11 is confirmed", 20 * time.Second, ExitOK, 8, 11,
			"Maximum video streams: 8 at 10 fps (confirmed by fresh probes: 8 passed, 11 failed; the exact maximum lies in 8–10: refining stopped when the budget ran out"},
		{"7 s: one probe and its confirmation, nothing failed", 7 * time.Second, ExitInvalid, 1, 0,
			"No confirmed maximum at 10 fps: the budget ran out before any count failed; at least 1 streams passed"},
	}
	for _, row := range rows {
		synctest.Test(t, func(t *testing.T) {
			v := capacityFlags
			v.budget = row.budget
			var instances []*capacitySUT
			r := runStreamSearch(t, v, capacityOpen(&instances, true))
			if r.code != row.code || r.result.Stop != gbt.StopBudget || r.took > v.budget || r.result.MaxStreams != row.max || r.result.FirstFail != row.fail {
				t.Fatalf("%s: exit %d after %v, %+v\n%s", row.why, r.code, r.took, r.result.StreamsResult, r.stdout)
			}
			if !strings.Contains(r.stdout, row.says) {
				t.Errorf("%s: verdict:\n%s", row.why, r.stdout)
			}
		})
	}
}

// TestVideoStreamsNoCountPasses: a SUT too slow for one stream gives a
// stated result and exit 3.
func TestVideoStreamsNoCountPasses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		open := func(context.Context) (loadgen.SUT, loadgen.QSL, func(), error) {
			s := newCapacitySUT(time.Second)
			return drainableSUT{s}, null.QSL{Total: 1024}, s.Close, nil
		}
		r := runStreamSearch(t, capacityFlags, open)
		if r.code != ExitInvalid || r.result.MaxStreams != 0 || r.result.FirstFail != 1 || len(r.result.Probes) != 2 {
			t.Fatalf("exit %d, %+v\n%s", r.code, r.result.StreamsResult, r.stdout)
		}
		if !strings.Contains(r.stdout, "no stream count passed: 1 stream lost") {
			t.Errorf("verdict:\n%s", r.stdout)
		}
	})
}

// TestVideoStreamsProbeError: a probe that cannot run (here: no fresh SUT
// for the second probe) ends the search with exit 1, the probes so far
// listed.
func TestVideoStreamsProbeError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		opened := 0
		open := func(context.Context) (loadgen.SUT, loadgen.QSL, func(), error) {
			if opened++; opened > 1 {
				return nil, nil, nil, errors.New("SUT unreachable")
			}
			s := newCapacitySUT(10 * time.Millisecond)
			return s, null.QSL{Total: 1024}, s.Close, nil
		}
		v := capacityFlags
		if err := checkVideoFlags(&v); err != nil {
			t.Fatal(err)
		}
		tw := newTwin(t)
		err := searchStreams(context.Background(), tw.st, &v, open, -1)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != ExitFailure || !strings.Contains(err.Error(), "SUT unreachable") {
			t.Fatalf("error %v, want exit 1 naming the cause", err)
		}
		if out := tw.stdout.String(); !strings.Contains(out, "grow           1") {
			t.Errorf("the probe that ran is not listed:\n%s", out)
		}
	})
}

func TestVideoStreamsRefusesBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		says string
	}{
		{[]string{"--resolution", "1"}, "--resolution"},
		{[]string{"--resolution", "-0.1"}, "--resolution"},
		{[]string{"--budget", "-1s"}, "--budget"},
		{[]string{"--streams", "-3"}, "--streams"},
		{[]string{"--fps", "0"}, "--fps"},
		{[]string{"--fps", "1", "--job-timeout", "10ms"}, "shorter than the frame period"},
	}
	for _, tc := range tests {
		r := runCLI(t, "", append([]string{"video-streams", "--sut", "null"}, tc.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.says) {
			t.Errorf("%v: want exit 2 naming %q, got %v", tc.args, tc.says, r)
		}
	}
}
