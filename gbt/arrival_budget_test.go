package gbt

import (
	"errors"
	"runtime"
	"testing"
	"time"
)

func TestScheduleRefusesHugeSchedulesBeforeBuilding(t *testing.T) {
	tests := []struct {
		name   string
		reason string
		a      Arrival
		param  string // "" = accepted
		length float64
	}{
		{"period 1ns for 1h", "3.6e12 arrivals: the issue's memory bomb", Arrival{Mode: ModeFixedPeriod, Period: 1, N: 1, Duration: time.Hour}, "period", 3.6e12},
		{"n multiplies", "n jobs per tick count too", Arrival{Mode: ModeFixedPeriod, Period: time.Millisecond, N: 1 << 20, Duration: time.Minute}, "period", 60_000 << 20},
		{"peak rate", "mode 3's Poisson part at 1e9 jobs/s for an hour", Arrival{Mode: ModePeak, Lambda: 1e9, Duration: time.Hour, Bursts: 1,
			BurstLength: time.Second, BurstPeriod: time.Second, BurstN: 1}, "lambda", 3.6e12 + 1},
		{"at the limit", "exactly MaxArrivals still fits", Arrival{Mode: ModeFixedPeriod, Period: time.Microsecond, N: 1, Duration: MaxArrivals * time.Microsecond}, "", MaxArrivals},
		{"ordinary", "the standard's defaults for a minute", Arrival{Mode: ModeFixedPeriod, Duration: time.Minute}, "", 120},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.a.WithDefaults()
			if got := a.ScheduleLength(); got != tc.length {
				t.Errorf("%s: ScheduleLength %g, want %g", tc.reason, got, tc.length)
			}
			if tc.param == "" {
				return
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, _, err := a.Schedule()
			runtime.ReadMemStats(&after)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Param != tc.param {
				t.Fatalf("%s: got %v, want an error naming %s", tc.reason, err, tc.param)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Errorf("%s: refusing allocated %d bytes", tc.reason, n)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("%s: refusing took %v", tc.reason, d)
			}
		})
	}
}
