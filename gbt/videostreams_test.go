package gbt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/loadgen"
)

// fakeProbe answers from ok(n, call), where call counts the probes of that n
// from 1; no timing, pure logic.
func fakeProbe(ok func(n, call int) bool) StreamProber {
	calls := map[int]int{}
	return func(_ context.Context, n int) (StreamProbe, error) {
		calls[n]++
		return StreamProbe{OK: ok(n, calls[n]), Frames: int64(n)}, nil
	}
}

// trace renders probes as "n+" (pass) or "n-" (fail) with the phase initial.
func trace(ps []StreamProbe) string {
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += " "
		}
		mark := "-"
		if p.OK {
			mark = "+"
		}
		s += fmt.Sprintf("%c%d%s", p.Phase[0], p.N, mark)
	}
	return s
}

// TestMaxStreams: the grow–bisect–confirm search and its probe trace
// (GB-7.6.7-T21-MVS, IN-78 (6)); g = grow, b = bisect, c = confirm,
// l = linear.
func TestMaxStreams(t *testing.T) {
	rows := []struct {
		why       string
		ok        func(n, call int) bool
		opts      StreamsOptions
		max, fail int
		confirmed bool
		stop      string
		trace     string
	}{
		{"monotone, up to 37 streams pass: grow ×8 to 64, bisect to 37/38, confirm 37 passes and 38 fails",
			func(n, _ int) bool { return n <= 37 }, StreamsOptions{}, 37, 38, true, "",
			"g1+ g8+ g64- b36+ b50- b43- b39- b37+ b38- c37+ c38-"},
		{"literal Table 21 procedure on the same SUT: n = 1, 2, … until 38 fails, report 38 − 1, no confirmation",
			func(n, _ int) bool { return n <= 37 }, StreamsOptions{Linear: true}, 37, 38, false, "",
			"l1+ l2+ l3+ l4+ l5+ l6+ l7+ l8+ l9+ l10+ l11+ l12+ l13+ l14+ l15+ l16+ l17+ l18+ l19+ " +
				"l20+ l21+ l22+ l23+ l24+ l25+ l26+ l27+ l28+ l29+ l30+ l31+ l32+ l33+ l34+ l35+ l36+ l37+ l38-"},
		{"a failure that does not repeat: 38 fails in the bisection, passes when confirmed; the bracket moves above it to 39's failure, which is confirmed (38 is not re-run: its latest run was a confirmation)",
			func(n, call int) bool { return n <= 37 || (n == 38 && call > 1) }, StreamsOptions{}, 38, 39, true, "",
			"g1+ g8+ g64- b36+ b50- b43- b39- b37+ b38- c37+ c38+ c39-"},
		{"a pass that does not repeat: 37 fails when confirmed; the bracket moves below it to 36, which is confirmed; 37's failure was a confirmation already; no stepping down",
			func(n, call int) bool { return n <= 36 || (n == 37 && call == 1) }, StreamsOptions{}, 36, 37, true, "",
			"g1+ g8+ g64- b36+ b50- b43- b39- b37+ b38- c37- c36+"},
		{"a hole at 10 below a pass: the search confirms 50 (passes, 51 fails), the largest n with n+1 failing near the bisection",
			func(n, _ int) bool { return n <= 50 && n != 10 }, StreamsOptions{}, 50, 51, true, "",
			"g1+ g8+ g64- b36+ b50+ b57- b53- b51- c50+ c51-"},
		{"the same hole with the literal procedure: 10 fails first → 9",
			func(n, _ int) bool { return n <= 50 && n != 10 }, StreamsOptions{Linear: true}, 9, 10, false, "",
			"l1+ l2+ l3+ l4+ l5+ l6+ l7+ l8+ l9+ l10-"},
		{"one stream fails, twice: no count passed, a confirmed 0",
			func(int, int) bool { return false }, StreamsOptions{}, 0, 1, true, "", "g1- c1-"},
		{"one stream fails once, then passes on re-run: grow again from 1, 8 fails, bisect → 1",
			func(n, call int) bool { return n == 1 && call > 1 }, StreamsOptions{}, 1, 2, true, "",
			"g1- c1+ g8- b4- b2- c2-"},
		{"limit 5, up to 3 pass: grow is clamped at the limit",
			func(n, _ int) bool { return n <= 3 }, StreamsOptions{Limit: 5}, 3, 4, true, "", "g1+ g5- b3+ b4- c3+ c4-"},
		{"every count up to the limit 5 passes: the limit is confirmed and reported as such",
			func(int, int) bool { return true }, StreamsOptions{Limit: 5}, 5, 0, false, StopLimit, "g1+ g5+ c5+"},
		{"resolution 10 %: up to 237 pass; bisection stops once the bracket is within 10 % of its lower end (232 passes, 246 fails)",
			func(n, _ int) bool { return n <= 237 }, StreamsOptions{Resolution: 0.1}, 232, 246, true, "",
			"g1+ g8+ g64+ g512- b288- b176+ b232+ b260- b246- c232+ c246-"},
		{"verdicts that never repeat (every count passes once, then fails): the search gives up after 4 contradicting confirmations and says so",
			func(n, call int) bool { return n <= 4 || call == 1 }, StreamsOptions{Limit: 64}, 60, 61, false, StopUnstable,
			"g1+ g8+ g64+ c64- b36+ b50+ b57+ b60+ b62+ b63+ c63- c62- b61+ c61-"},
	}
	for _, row := range rows {
		res, err := MaxStreams(context.Background(), fakeProbe(row.ok), row.opts)
		if row.stop == StopLimit {
			if !errors.Is(err, ErrStreamsLimit) {
				t.Errorf("%s: error %v, want ErrStreamsLimit", row.why, err)
			}
		} else if err != nil {
			t.Errorf("%s: %v", row.why, err)
		}
		if res.MaxStreams != row.max || res.FirstFail != row.fail || res.Confirmed != row.confirmed || res.Stop != row.stop || trace(res.Probes) != row.trace {
			t.Errorf("%s:\n got %d/%d confirmed %v stop %q: %s\nwant %d/%d confirmed %v stop %q: %s", row.why,
				res.MaxStreams, res.FirstFail, res.Confirmed, res.Stop, trace(res.Probes),
				row.max, row.fail, row.confirmed, row.stop, row.trace)
		}
		for _, p := range res.Probes {
			if p.Frames != int64(p.N) {
				t.Errorf("%s: probe %+v lost what the probe function reported", row.why, p)
			}
		}
	}
}

func TestMaxStreamsLimit(t *testing.T) {
	for _, linear := range []bool{false, true} {
		res, err := MaxStreams(context.Background(), fakeProbe(func(int, int) bool { return true }), StreamsOptions{Limit: 10, Linear: linear})
		if !errors.Is(err, ErrStreamsLimit) || res.MaxStreams != 10 || res.Stop != StopLimit {
			t.Errorf("linear %v, all pass up to 10: %d, %q, %v; want 10, limit and ErrStreamsLimit", linear, res.MaxStreams, res.Stop, err)
		}
		last := res.Probes[len(res.Probes)-1]
		if last.N != 10 || !last.OK {
			t.Errorf("linear %v: last probe %+v, want 10 passing", linear, last)
		}
	}
}

// TestMaxStreamsBudget: with probes of 10 s, the search starts no probe it
// expects to end after the budget, keeps two probes for the confirmation,
// and reports the best bracket when the budget runs out.
func TestMaxStreamsBudget(t *testing.T) {
	rows := []struct {
		why       string
		budget    time.Duration
		estimate  time.Duration
		max, fail int
		confirmed bool
		trace     string
	}{
		{"60 s: four probes bracket 36–64, then the two confirmations fill the budget exactly",
			time.Minute, 0, 36, 64, true, "g1+ g8+ g64- b36+ c36+ c64-"},
		{"25 s: after one probe, another and two confirmations would not fit; the pass is re-run instead: at least 1, nothing failed, unconfirmed",
			25 * time.Second, 0, 1, 0, false, "g1+ c1+"},
		{"an estimate longer than the budget: no probe starts, and nothing is claimed",
			5 * time.Second, 10 * time.Second, 0, 0, false, ""},
		{"no budget: refined to one stream",
			0, 0, 37, 38, true, "g1+ g8+ g64- b36+ b50- b43- b39- b37+ b38- c37+ c38-"},
	}
	for _, row := range rows {
		synctest.Test(t, func(t *testing.T) {
			probe := func(_ context.Context, n int) (StreamProbe, error) {
				time.Sleep(10 * time.Second)
				return StreamProbe{OK: n <= 37}, nil
			}
			start := time.Now()
			res, err := MaxStreams(context.Background(), probe, StreamsOptions{Budget: row.budget, ProbeEstimate: row.estimate})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			wantStop := StopBudget
			if row.budget == 0 {
				wantStop = ""
			}
			if res.MaxStreams != row.max || res.FirstFail != row.fail || res.Confirmed != row.confirmed || res.Stop != wantStop || trace(res.Probes) != row.trace {
				t.Errorf("%s:\n got %d/%d confirmed %v stop %q: %s\nwant %d/%d confirmed %v stop %q: %s", row.why,
					res.MaxStreams, res.FirstFail, res.Confirmed, res.Stop, trace(res.Probes),
					row.max, row.fail, row.confirmed, wantStop, row.trace)
			}
			if row.budget > 0 && took > row.budget {
				t.Errorf("%s: took %v, over the budget %v", row.why, took, row.budget)
			}
			if res.Seconds != took.Seconds() {
				t.Errorf("%s: result says %g s, took %v", row.why, res.Seconds, took)
			}
			for _, p := range res.Probes {
				if p.Seconds != 10 {
					t.Errorf("%s: probe %+v not timed", row.why, p)
				}
			}
		})
	}
}

func TestMaxStreamsErrors(t *testing.T) {
	boom := errors.New("SUT unreachable")
	probe := func(_ context.Context, n int) (StreamProbe, error) {
		if n == 64 {
			return StreamProbe{}, boom
		}
		return StreamProbe{OK: true}, nil
	}
	res, err := MaxStreams(context.Background(), probe, StreamsOptions{})
	if !errors.Is(err, boom) || !slices.Equal([]int{1, 8}, probeNs(res.Probes)) {
		t.Errorf("probe error at 64: %v, probes %v; want the error and probes 1, 8", err, probeNs(res.Probes))
	}

	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	res, err = MaxStreams(ctx, func(context.Context, int) (StreamProbe, error) {
		if n++; n == 3 {
			cancel()
		}
		return StreamProbe{OK: true}, nil
	}, StreamsOptions{})
	if !errors.Is(err, context.Canceled) || len(res.Probes) != 3 {
		t.Errorf("cancelled after 3 probes: %v, %d probes", err, len(res.Probes))
	}
}

func probeNs(ps []StreamProbe) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.N)
	}
	return out
}

// A stream probe is a mode-1 test planned like any other (IN-78 (3)): n
// frames every 1/fps, the mode-1 timeout of Table 10 by default.
func TestStreamPlanInput(t *testing.T) {
	p, err := NewRunPlan(StreamPlanInput(25, 3, time.Second, 0), loadgen.DefaultSettings(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Arrivals) != 75 || p.SampleTimeout != 4*time.Second || p.Test.Arrival.Period != 40*time.Millisecond || p.Settings.ServerTargetQPS != 75 {
		t.Errorf("plan %+v", p)
	}
	tests := []struct {
		reason string
		m      Metrics
		want   bool
	}{
		{"every frame returned", Metrics{}, true},
		{"a lost frame fails the probe (IN-78 (5))", Metrics{Loss: Loss{Lost: 1}}, false},
		{"a failed frame fails the probe", Metrics{Throughput: Throughput{Errors: 1}}, false},
	}
	for _, tc := range tests {
		if got := StreamProbePassed(tc.m); got != tc.want {
			t.Errorf("%s: %v", tc.reason, got)
		}
	}
}
