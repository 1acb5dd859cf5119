package cli

import (
	"path/filepath"
	"testing"
	"time"

	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/sysinfo"
)

func TestServerTarget(t *testing.T) {
	tests := []struct {
		name        string
		batchMedian float64
		want        float64
	}{
		{"a 2-core laptop (70,000 samples/s): the fixed target", 70_000, 2000},
		{"the same laptop with three busy neighbours (10,000): still the fixed target", 10_000, 2000},
		{"exactly four times the target still gets it", 8_000, 2000},
		{"just below four times steps down to 1,000", 7_999, 1000},
		{"a slow machine steps down the 1-2-5 series to 500", 2_000, 500},
		{"200 from 800 samples/s", 800, 200},
		{"a machine that is barely running gets 1", 3, 1},
		{"no speed measured at all still gets a positive target", 0, 1},
		{"a very fast machine does not raise the target", 10_000_000, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := serverTarget(tt.batchMedian); got != tt.want {
				t.Errorf("serverTarget(%v) = %v, want %v", tt.batchMedian, got, tt.want)
			}
		})
	}
}

// TestDemoPlanOfflineRunsItsMinimumDuration checks the Offline sizing the
// way LoadGen does it (1.1 x min_duration x expected QPS samples in one
// query): a SUT running at the fastest calibrated speed, and even at twice
// that, still needs at least min_duration for the query.
func TestDemoPlanOfflineRunsItsMinimumDuration(t *testing.T) {
	tests := []struct {
		name string
		cal  calibration
		d    time.Duration
	}{
		{"this 2-core machine", calibration{singleNs: 21_000, batchMedian: 70_000, batchMax: 73_000}, 5 * time.Second},
		{"a slow machine", calibration{singleNs: 2_000_000, batchMedian: 500, batchMax: 900}, 5 * time.Second},
		{"a short run", calibration{singleNs: 21_000, batchMedian: 70_000, batchMax: 73_000}, 500 * time.Millisecond},
		{"a calibration that measured nothing", calibration{}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newDemoPlan(tt.cal, tt.d)
			e, err := loadgen.NewEffective(p.offline, 5000, 1024)
			if err != nil {
				t.Fatal(err)
			}
			minDur := time.Duration(p.offline.MinDurationMs) * time.Millisecond
			if minDur <= 0 {
				t.Fatalf("Offline min duration %v", minDur)
			}
			fastest := max(tt.cal.batchMax, 1)
			for _, speedup := range []float64{1, 2} {
				took := time.Duration(float64(e.SamplesPerQuery) / (speedup * fastest) * float64(time.Second))
				if took < minDur {
					t.Errorf("%d samples at %.0f x the fastest round (%.0f/s) take %v, under the %v minimum", e.SamplesPerQuery, speedup, fastest, took, minDur)
				}
			}
		})
	}
}

func TestDemoPlanSettings(t *testing.T) {
	cal := calibration{singleNs: 21_000, batchMedian: 70_000, batchMax: 73_000}
	p := newDemoPlan(cal, 5*time.Second)
	checks := []struct {
		name      string
		got, want any
	}{
		{"Server runs a fixed target", p.server.ServerTargetQPS, float64(demoServerQPS)},
		{"Server's p99 bound is the shared-machine one", p.server.ServerTargetLatencyNs, uint64(demoServerBoundNs)},
		{"Server runs four times the duration, to dilute a host stall", p.server.MinDurationMs, uint64(20_000)},
		{"SingleStream runs the duration", p.singleStream.MinDurationMs, uint64(5000)},
		{"MultiStream runs the duration and 662 queries", p.multiStream.MinQueryCount, uint64(662)},
		{"Offline runs 0.4 x the duration", p.offline.MinDurationMs, uint64(2000)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	for _, s := range []loadgen.Settings{p.singleStream, p.multiStream, p.server, p.offline} {
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", s.Scenario, err)
		}
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		v    []float64
		want float64
	}{
		{"odd count: one slow round does not move it", []float64{70, 71, 20, 69, 72}, 70},
		{"even count: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"one value", []float64{5}, 5},
	}
	for _, tt := range tests {
		if got := median(tt.v); got != tt.want {
			t.Errorf("%s: median = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestFormatRate(t *testing.T) {
	tests := []struct {
		name string
		v    float64
		want string
	}{
		{"thousands get separators", 70299.4, "70,299"},
		{"rounded to whole samples", 1999.6, "2,000"},
		{"below a thousand", 999, "999"},
		{"millions", 1234567, "1,234,567"},
		{"zero", 0, "0"},
		{"negative", -1234, "-1,234"},
	}
	for _, tt := range tests {
		if got := formatRate(tt.v); got != tt.want {
			t.Errorf("%s: formatRate(%v) = %q, want %q", tt.name, tt.v, got, tt.want)
		}
	}
}

func TestDemoSpinWindow(t *testing.T) {
	tests := []struct {
		name  string
		flag  time.Duration
		given bool
		cpus  int
		want  time.Duration
	}{
		{"2 cores, default: never spin", loadgen.DefaultSpinWindow, false, 2, -1},
		{"2 cores, given: the flag wins", 3 * time.Millisecond, true, 2, 3 * time.Millisecond},
		{"4 cores, default: spin", loadgen.DefaultSpinWindow, false, 4, loadgen.DefaultSpinWindow},
		{"1 core, given as never", -1, true, 1, -1},
	}
	for _, tt := range tests {
		if got := demoSpinWindow(tt.flag, tt.given, tt.cpus); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestRunRecordsHostLoad: aimeter run keeps the machine's load in run.json
// wherever /proc can be read.
func TestRunRecordsHostLoad(t *testing.T) {
	if _, err := sysinfo.ReadCPUUsage(); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	// Server lasts 300 ms, long enough for the CPU time counters (10 ms
	// ticks) to move; the bundle is written, VALID or not.
	out := filepath.Join(t.TempDir(), "out")
	if r := runCLI(t, "", quickArgs("Server", out)...); r.code != 0 && r.code != int(ExitInvalid) {
		t.Fatal(r)
	}
	b, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if l := b.HostLoad; l == nil || l.CPUs < 1 || l.WallSeconds <= 0 {
		t.Errorf("host load %+v, want a measured one", l)
	}
}
