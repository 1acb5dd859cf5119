package gbt

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestArrivalValidateNamesTheParameter(t *testing.T) {
	ok := Arrival{Mode: ModePeak, Duration: 60 * time.Second, Bursts: 2, BurstLength: 5 * time.Second,
		BurstPeriod: 10 * time.Millisecond, BurstN: 11, Timeout: 60 * time.Second}.WithDefaults()
	tests := []struct {
		name   string
		reason string
		mutate func(*Arrival)
		param  string
	}{
		{"valid peak", "IN-49's example: T = 10 ms, n = 11 → σ = 1100 jobs/s", func(*Arrival) {}, ""},
		{"lambda zero", "λ must be > 0 (IN-47)", func(a *Arrival) { a.Lambda = 0.0000 - 1 }, "lambda"},
		{"n zero", "a period with no job", func(a *Arrival) { a.Mode = ModeFixedPeriod; a.N = -1 }, "n"},
		{"burst longer than run", "j·T_G must fit in the run", func(a *Arrival) { a.BurstLength = 31 * time.Second }, "burst_length"},
		{"timeout below period", "every job would be lost before the next (mode 1)", func(a *Arrival) {
			a.Mode = ModeFixedPeriod
			a.Timeout = 100 * time.Millisecond
		}, "timeout"},
		{"no bursts", "the peak mode is defined by its bursts", func(a *Arrival) { a.Bursts = 0 }, "bursts"},
		{"burst outside", "an explicit start must fit", func(a *Arrival) { a.BurstStarts = []time.Duration{0, 58 * time.Second} }, "burst_starts"},
		{"mode 6", "Table 10 stops at 5", func(a *Arrival) { a.Mode = 6 }, "mode"},
		{"no duration", "open-loop modes need a run length", func(a *Arrival) { a.Mode = ModePoisson; a.Duration = 0 }, "duration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := ok
			tc.mutate(&a)
			err := a.Validate()
			if tc.param == "" {
				if err != nil {
					t.Fatalf("%s: %v", tc.reason, err)
				}
				return
			}
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Param != tc.param {
				t.Fatalf("%s: got %v, want an error naming %s", tc.reason, err, tc.param)
			}
		})
	}
}

func TestFixedPeriodSchedule(t *testing.T) {
	a := Arrival{Mode: ModeFixedPeriod, Period: 500 * time.Millisecond, N: 2, Duration: 2 * time.Second}.WithDefaults()
	got, _, err := a.Schedule()
	if err != nil {
		t.Fatal(err)
	}
	ms := int64(time.Millisecond)
	want := []int64{0, 0, 500 * ms, 500 * ms, 1000 * ms, 1000 * ms, 1500 * ms, 1500 * ms}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestPeakScheduleIsReproducibleAndBursts(t *testing.T) {
	a := Arrival{Mode: ModePeak, Lambda: 5, Duration: 60 * time.Second, Bursts: 2, BurstLength: 5 * time.Second,
		BurstPeriod: 10 * time.Millisecond, BurstN: 11, Seed: 42}.WithDefaults()
	s1, placed, err := a.Schedule()
	if err != nil {
		t.Fatal(err)
	}
	s2, _, _ := a.Schedule()
	if !slices.Equal(s1, s2) || ScheduleHash(s1) != ScheduleHash(s2) {
		t.Fatal("the same seed must give the same schedule")
	}
	a.Seed = 43
	if s3, _, _ := a.Schedule(); ScheduleHash(s3) == ScheduleHash(s1) {
		t.Fatal("another seed must give another schedule")
	}
	if len(placed.BurstStarts) != 2 || placed.BurstStarts[1] < placed.BurstStarts[0]+5*time.Second {
		t.Fatalf("bursts %v overlap or are missing", placed.BurstStarts)
	}
	// Each burst: 5 s / 10 ms = 500 ticks × 11 jobs; background ≈ 5 jobs/s × 60 s.
	inBurst := 0
	for _, o := range s1 {
		for _, b := range placed.BurstStarts {
			if o >= int64(b) && o < int64(b+5*time.Second) {
				inBurst++
			}
		}
	}
	if inBurst < 2*500*11 || len(s1)-inBurst < 200 || len(s1)-inBurst > 420 {
		t.Errorf("%d jobs in bursts, %d in the background", inBurst, len(s1)-inBurst)
	}
	if !slices.IsSorted(s1) {
		t.Error("arrivals must be sorted")
	}
	if c := a.Concurrency(); c != 1100 {
		t.Errorf("σ = %v, want 1100 jobs/s", c)
	}
}
