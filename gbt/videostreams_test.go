package gbt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"aimeter/loadgen"
)

// fakeProbe answers from ok(n, call), where call counts the probes of that n
// from 1; no timing, pure logic.
func fakeProbe(ok func(n, call int) bool) func(context.Context, int) (bool, error) {
	calls := map[int]int{}
	return func(_ context.Context, n int) (bool, error) {
		calls[n]++
		return ok(n, calls[n]), nil
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
		why   string
		ok    func(n, call int) bool
		opts  StreamsOptions
		want  int
		trace string
	}{
		{"monotone, up to 37 streams pass: grow to 64, bisect to 37/38, confirm 37 passes and 38 fails",
			func(n, _ int) bool { return n <= 37 }, StreamsOptions{}, 37,
			"g1+ g2+ g4+ g8+ g16+ g32+ g64- b48- b40- b36+ b38- b37+ c37+ c38-"},
		{"literal Table 21 procedure on the same SUT: n = 1, 2, … until 38 fails, report 38 − 1",
			func(n, _ int) bool { return n <= 37 }, StreamsOptions{Linear: true}, 37,
			"l1+ l2+ l3+ l4+ l5+ l6+ l7+ l8+ l9+ l10+ l11+ l12+ l13+ l14+ l15+ l16+ l17+ l18+ l19+ " +
				"l20+ l21+ l22+ l23+ l24+ l25+ l26+ l27+ l28+ l29+ l30+ l31+ l32+ l33+ l34+ l35+ l36+ l37+ l38-"},
		{"non-monotone: 38 fails in the bisection but passes when confirmed; go on linearly: 39 fails → 38",
			func(n, call int) bool { return n <= 37 || (n == 38 && call == 2) }, StreamsOptions{}, 38,
			"g1+ g2+ g4+ g8+ g16+ g32+ g64- b48- b40- b36+ b38- b37+ c37+ c38+ l39-"},
		{"non-monotone: 37 fails when confirmed; step down: 36 passes, next to 37's failure → 36",
			func(n, call int) bool { return n <= 36 || (n == 37 && call == 1) }, StreamsOptions{}, 36,
			"g1+ g2+ g4+ g8+ g16+ g32+ g64- b48- b40- b36+ b38- b37+ c37- l36+"},
		{"a hole at 10 below a pass: the search confirms 50 (passes, 51 fails), the largest n with n+1 failing near the bisection",
			func(n, _ int) bool { return n <= 50 && n != 10 }, StreamsOptions{}, 50,
			"g1+ g2+ g4+ g8+ g16+ g32+ g64- b48+ b56- b52- b50+ b51- c50+ c51-"},
		{"the same hole with the literal procedure: 10 fails first → 9",
			func(n, _ int) bool { return n <= 50 && n != 10 }, StreamsOptions{Linear: true}, 9,
			"l1+ l2+ l3+ l4+ l5+ l6+ l7+ l8+ l9+ l10-"},
		{"one stream fails: 0 streams, 1 re-run to confirm",
			func(int, int) bool { return false }, StreamsOptions{}, 0, "g1- c1-"},
		{"one stream fails once, then passes on re-run; 2 fails → 1",
			func(n, call int) bool { return n == 1 && call > 1 }, StreamsOptions{}, 1, "g1- c1+ l2-"},
		{"limit 5, up to 3 pass: grow is clamped at the limit",
			func(n, _ int) bool { return n <= 3 }, StreamsOptions{Limit: 5}, 3, "g1+ g2+ g4- b3+ c3+ c4-"},
		{"limit 6, up to 5 pass: grow probes 1, 2, 4, then the limit 6",
			func(n, _ int) bool { return n <= 5 }, StreamsOptions{Limit: 6}, 5, "g1+ g2+ g4+ g6- b5+ c5+ c6-"},
		{"confirm upwards stops at the limit",
			func(n, call int) bool { return n <= 3 || n == 5 || call > 1 }, StreamsOptions{Limit: 5}, 5, "g1+ g2+ g4- b3+ c3+ c4+ l5+"},
	}
	for _, row := range rows {
		res, err := MaxStreams(context.Background(), fakeProbe(row.ok), row.opts)
		if row.want == 5 && row.opts.Limit == 5 {
			if !errors.Is(err, ErrStreamsLimit) {
				t.Errorf("%s: error %v, want ErrStreamsLimit", row.why, err)
			}
		} else if err != nil {
			t.Errorf("%s: %v", row.why, err)
		}
		if res.MaxStreams != row.want || trace(res.Probes) != row.trace {
			t.Errorf("%s:\n got %d: %s\nwant %d: %s", row.why, res.MaxStreams, trace(res.Probes), row.want, row.trace)
		}
	}
}

func TestMaxStreamsLimit(t *testing.T) {
	for _, linear := range []bool{false, true} {
		res, err := MaxStreams(context.Background(), fakeProbe(func(int, int) bool { return true }), StreamsOptions{Limit: 10, Linear: linear})
		if !errors.Is(err, ErrStreamsLimit) || res.MaxStreams != 10 {
			t.Errorf("linear %v, all pass up to 10: %d, %v; want 10 and ErrStreamsLimit", linear, res.MaxStreams, err)
		}
		last := res.Probes[len(res.Probes)-1]
		if last.N != 10 || !last.OK {
			t.Errorf("linear %v: last probe %+v, want 10 passing", linear, last)
		}
	}
}

func TestMaxStreamsErrors(t *testing.T) {
	boom := errors.New("SUT unreachable")
	probe := func(_ context.Context, n int) (bool, error) {
		if n == 8 {
			return false, boom
		}
		return true, nil
	}
	res, err := MaxStreams(context.Background(), probe, StreamsOptions{})
	if !errors.Is(err, boom) || !slices.Equal([]int{1, 2, 4}, probeNs(res.Probes)) {
		t.Errorf("probe error at 8: %v, probes %v; want the error and probes 1, 2, 4", err, probeNs(res.Probes))
	}

	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	res, err = MaxStreams(ctx, func(context.Context, int) (bool, error) {
		if n++; n == 3 {
			cancel()
		}
		return true, nil
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
	p, err := Plan(StreamPlanInput(25, 3, time.Second, 0), loadgen.DefaultSettings(), nil)
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
