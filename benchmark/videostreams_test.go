package benchmark

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/sut/null"
)

// nullOpen opens a null SUT, which answers every frame at once: every
// stream count passes.
func nullOpen(opened *int) OpenFunc {
	return func(context.Context) (loadgen.SUT, loadgen.QSL, func(), error) {
		*opened++
		return null.SUT{}, null.QSL{Total: 64}, func() {}, nil
	}
}

// TestRunStreamsReachesTheLimit: where every count up to the limit passes,
// the search has ended (no error), the log says how it went about it, and
// the JSON file holds the plan as run and every probe.
func TestRunStreamsReachesTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var opened int
		var log strings.Builder
		out, err := RunStreams(context.Background(), StreamsPlan{Open: nullOpen(&opened), FPS: 10, Duration: time.Second, SpinWindow: -1,
			Search: gbt.StreamsOptions{Limit: 3, Linear: true}, Log: &log})
		if err != nil {
			t.Fatal(err)
		}
		if out.Result.Stop != gbt.StopLimit || out.Result.MaxStreams != 3 || len(out.Result.Probes) != 3 {
			t.Errorf("result %+v, want every count up to 3 passed", out.Result)
		}
		if !strings.HasPrefix(log.String(), "video streams at 10 fps, 1s a probe, budget 0s, resolution 0; a fresh NullSUT instance for each probe\n") {
			t.Errorf("log:\n%s", log.String())
		}
		path := filepath.Join(t.TempDir(), "streams.json")
		if err := out.WriteJSON(path); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f StreamsFile
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		if f.SUT != out.SUT || f.FPS != 10 || f.ProbeSeconds != 1 || f.JobTimeoutSecs != 4 || f.MaxStreamsLimit != 3 || len(f.Probes) != 3 {
			t.Errorf("file %+v", f)
		}
	})
}

// TestRunStreamsSingleProbe: StreamsPlan.Streams runs one probe of that
// many streams, its phase "single", no search.
func TestRunStreamsSingleProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var opened int
		out, err := RunStreams(context.Background(), StreamsPlan{Open: nullOpen(&opened), FPS: 10, Duration: time.Second, SpinWindow: -1, Streams: 5})
		if err != nil {
			t.Fatal(err)
		}
		p := out.Result.Probes
		if len(p) != 1 || p[0].N != 5 || p[0].Phase != "single" || !p[0].OK || out.Result.MaxStreams != 5 || opened != 1 {
			t.Errorf("result %+v after %d instances, want one passing probe of 5 streams", out.Result, opened)
		}
	})
}

// TestRunStreamsWithoutASUT: a SUT that does not open leaves nothing to
// report; a plan without FPS is a usage error.
func TestRunStreamsWithoutASUT(t *testing.T) {
	refused := errors.New("no SUT here")
	out, err := RunStreams(context.Background(), StreamsPlan{FPS: 10, Duration: time.Second,
		Open: func(context.Context) (loadgen.SUT, loadgen.QSL, func(), error) { return nil, nil, nil, refused }})
	if out != nil || !errors.Is(err, refused) {
		t.Errorf("outcome %v, error %v; want none and the SUT's error", out, err)
	}
	if _, err := RunStreams(context.Background(), StreamsPlan{Open: nullOpen(new(int)), Duration: time.Second}); !IsUsage(err) {
		t.Errorf("no FPS: %v, want a usage error", err)
	}
}
