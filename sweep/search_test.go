package sweep

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// step is a server whose goodput fraction is 1 up to knee and half above.
func step(knee uint64) ProbeFunc {
	return func(_ context.Context, c uint64, _ string) (float64, error) {
		if c <= knee {
			return 1, nil
		}
		return 0.5, nil
	}
}

func TestFindMaxConcurrency(t *testing.T) {
	for _, c := range []struct {
		knee   uint64
		opts   SearchOptions
		best   uint64 // 0: none found, Best nil
		stop   string
		probes []uint64
		reason string
	}{
		{13, SearchOptions{Max: 100, Target: 0.9}, 13, StopFound, []uint64{1, 2, 4, 8, 16, 12, 14, 13},
			"check 1; widen 2, 4, 8, 16 (fails); bisect [8,16) → 12 passes, [12,16) → 14 fails, [12,14) → 13 passes; 13 and 14 adjacent"},
		{1000, SearchOptions{Max: 10, Target: 0.9}, 10, StopLimit, []uint64{1, 2, 4, 8, 10},
			"every probe passes: widening stops at the maximum 10 (not 16)"},
		{0, SearchOptions{Max: 10, Target: 0.9}, 0, StopNone, []uint64{1},
			"an SLO no concurrency meets: the first probe fails and nothing is searched"},
		{5, SearchOptions{Start: 4, Max: 64, Target: 0.5}, 64, StopLimit, []uint64{4, 8, 16, 32, 64},
			"a fraction equal to the target (0.5) passes"},
		{5, SearchOptions{Start: 4, Max: 64, Target: 0.6}, 5, StopFound, []uint64{4, 8, 6, 5},
			"start 4 passes, 8 fails; [4,8) → 6 fails, [4,6) → 5 passes"},
	} {
		res, err := FindMaxConcurrency(context.Background(), c.opts, step(c.knee))
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, p := range res.Probes {
			got = append(got, p.Concurrency)
		}
		if bestText(res.Best) != bestText(ptr(c.best)) || res.Stop != c.stop || !slices.Equal(got, c.probes) {
			t.Errorf("knee %d, %+v: best %s (%s), probes %v; want %s (%s), %v: %s", c.knee, c.opts, bestText(res.Best), res.Stop, got, bestText(ptr(c.best)), c.stop, c.probes, c.reason)
		}
	}
}

// ptr is c as a found best concurrency; nil for 0, none found.
func ptr(c uint64) *uint64 {
	if c == 0 {
		return nil
	}
	return &c
}

// bestText is a search's best concurrency as a test compares it: the
// number, or "none" for nil.
func bestText(b *uint64) string {
	if b == nil {
		return "none"
	}
	return strconv.FormatUint(*b, 10)
}

func TestFindMaxConcurrencyPhases(t *testing.T) {
	res, _ := FindMaxConcurrency(context.Background(), SearchOptions{Max: 100, Target: 0.9}, step(3))
	var phases []string
	for _, p := range res.Probes {
		phases = append(phases, p.Phase)
	}
	// 1 check, 2 and 4 widen (4 fails), 3 bisects [2,4).
	if want := []string{PhaseCheck, PhaseWiden, PhaseWiden, PhaseBisect}; !slices.Equal(phases, want) {
		t.Errorf("phases %v, want %v", phases, want)
	}
}

func TestFindMaxConcurrencyError(t *testing.T) {
	boom := errors.New("server gone")
	res, err := FindMaxConcurrency(context.Background(), SearchOptions{Max: 100, Target: 0.9}, func(_ context.Context, c uint64, _ string) (float64, error) {
		if c == 4 {
			return 0, boom
		}
		return 1, nil
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "concurrency 4") || res.Stop != StopPartial || bestText(res.Best) != "2" || len(res.Probes) != 2 {
		t.Errorf("a probe error: %+v, %v; want the probes so far, best 2, partial, and the error naming concurrency 4", res, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := FindMaxConcurrency(ctx, SearchOptions{Max: 100, Target: 0.9}, step(10)); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled search: %v", err)
	}
}

func TestSearchOptionsRefused(t *testing.T) {
	for _, c := range []struct {
		opts   SearchOptions
		want   string
		reason string
	}{
		{SearchOptions{Max: 10, Target: 0}, "goodput target 0", "a zero target passes anything"},
		{SearchOptions{Max: 10, Target: 1.5}, "goodput target 1.5", "a fraction above 1 can never be met"},
		{SearchOptions{Start: 8, Max: 4, Target: 0.9}, "must be ≥ the start 8", "the maximum below the start"},
	} {
		if _, err := FindMaxConcurrency(context.Background(), c.opts, step(1)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q: %s", c.opts, err, c.want, c.reason)
		}
	}
}
