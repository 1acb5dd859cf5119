package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// promServer is an HTTP server speaking Prometheus's query API with the
// answers in testdata/prometheus, chosen by the query; it keeps the
// parameters it was asked with.
func promServer(t *testing.T) (*httptest.Server, func() []map[string]string) {
	t.Helper()
	files := map[string]string{DCGMPower: "power.json", DCGMEnergy: "energy.json", DCGMGPUUtil: "util.json", "nodata": "empty.json"}
	var mu sync.Mutex
	var asked []map[string]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query_range" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		mu.Lock()
		asked = append(asked, map[string]string{"query": q.Get("query"), "start": q.Get("start"), "end": q.Get("end"), "step": q.Get("step")})
		mu.Unlock()
		name, ok := files[q.Get("query")]
		status := http.StatusOK
		if !ok {
			name, status = "error.json", http.StatusBadRequest
		}
		body, err := os.ReadFile(filepath.Join("testdata", "prometheus", name))
		if err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []map[string]string { mu.Lock(); defer mu.Unlock(); return asked }
}

var promStart = time.Unix(1795586400, 0)

func TestPrometheusDCGMPreset(t *testing.T) {
	srv, asked := promServer(t)
	srcs, err := Open("prometheus:"+srv.URL, SpecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := srcs[0].(*Prometheus)
	rs, err := p.Window(context.Background(), promStart, promStart, promStart.Add(2*time.Second))
	// gpu0's counter is reset between 1 and 2 s: a gap of that series,
	// and no other error.
	gaps, err := splitGaps(err)
	if err != nil {
		t.Fatal(err)
	}
	if len(gaps) != 1 || gaps[0].Device != "gpu0" || gaps[0].Kind != Energy || gaps[0].T != sec || gaps[0].DurationNs != sec ||
		!strings.Contains(gaps[0].Reason, "went down from 9150.0 to 100.0 J (a reset") {
		t.Errorf("gaps %+v: want gpu0's reset from 1 to 2 s", gaps)
	}
	a := asked()
	if len(a) != 3 || a[0]["query"] != DCGMEnergy || a[0]["start"] != "1795586400.000" || a[0]["end"] != "1795586402.000" || a[0]["step"] != "1" {
		t.Errorf("queries asked %v: want the three DCGM metrics over the window at a 1 s step", a)
	}
	for i := range gaps {
		gaps[i].Source = "prometheus"
	}
	l := &Log{PeriodNs: sec, Readings: rs, Gaps: gaps}
	s := Summarize(l, Window{0, 2 * sec})
	byDev := map[string]SeriesSummary{}
	for _, ss := range s.Series {
		byDev[ss.Device+" "+ss.Kind.String()] = ss
	}
	// gpu0's counter: 9,000,000 → 9,150,000 mJ (+150 J), then a reset to
	// 100,000 mJ: a gap that adds nothing (increase() would count +100 J
	// from 0), so 150 J over the first second, half the window.
	if e := byDev["gpu0 energy_j"]; val(e.EnergyJ) != 150 || e.Coverage != 0.5 || e.Node != "node-a" || e.Method != MethodCounter {
		t.Errorf("gpu0 energy %+v: want 150 J by counter on node-a, coverage 0.5", e)
	}
	// gpu1 has power only: (100+300)/2 + (300+100)/2 = 400 J.
	if e := byDev["gpu1 power_w"]; val(e.EnergyJ) != 400 {
		t.Errorf("gpu1 energy %v: want 400 J", val(e.EnergyJ))
	}
	// The total counts gpu0 by its counter (150 J), not its power (300 J):
	// 550 J; average 150 + 200 = 350 W; coverage gpu0's half.
	if val(s.EnergyJ) != 550 || val(s.AvgW) != 350 || s.Method != "counter+trapezoid" || s.Coverage != 0.5 {
		t.Errorf("total %v J %v W method %q coverage %v: want 550 J, 350 W, counter+trapezoid, 0.5", val(s.EnergyJ), val(s.AvgW), s.Method, s.Coverage)
	}
	// Utilisation: mean of 40 and 60.
	if u := byDev["gpu0 utilization_pct"]; val(u.AvgPct) != 50 {
		t.Errorf("gpu0 utilisation %+v", u)
	}
}

func TestPrometheusBadAnswers(t *testing.T) {
	srv, _ := promServer(t)
	tests := []struct {
		name, spec, want string
	}{
		{"no data over the window is an error, not zero", "prometheus:" + srv.URL + "#power_w=nodata", "no data over the window"},
		{"the server's own error is passed on", "prometheus:" + srv.URL + "#power_w=sum(x{)", "bad_data"},
		{"a server that is not Prometheus", "prometheus:" + srv.URL + "/nothing#power_w=nodata", "not a Prometheus API answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcs, err := Open(tt.spec, SpecOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = srcs[0].(Windowed).Window(context.Background(), promStart, promStart, promStart.Add(time.Second))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// A Prometheus server that never answers leaves a gap when the window
// timeout ends; Stop returns.
func TestPrometheusTimeoutLeavesGap(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hang)
	srcs, err := Open("prometheus:"+srv.URL+"#dcgm-power", SpecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := Start(time.Now(), srcs, Options{WindowTimeout: 200 * time.Millisecond})
	l, err := s.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Gaps) != 1 || !strings.Contains(l.Gaps[0].Reason, "deadline exceeded") || len(l.Readings) != 0 {
		t.Errorf("log %+v: want one gap for the timed-out query", l)
	}
}

func FuzzParsePromRange(f *testing.F) {
	for _, name := range []string{"power.json", "energy.json", "util.json", "empty.json", "error.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "prometheus", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, k := range []Kind{Power, Energy, Utilization} {
			rs, _ := parsePromRange(body, PromQuery{Kind: k, Query: "q"}, promStart, (&powerCeiling{}).PowerCeiling)
			Summarize(&Log{PeriodNs: sec, Readings: rs}, Window{0, sec})
		}
	})
}

// A DCGM counter (mJ) or power series through a Prometheus server over a
// real socket and the Sampler's Stop, with values at 0, 1, 2 and 3 s of
// the run's clock. The counter does not wrap in practice (64 bits of mJ),
// so a drop is a reset: unlike increase(), it counts nothing. Each row
// works out the energy over 0–3 s and the gap.
func TestPrometheusCounterSteps(t *testing.T) {
	tests := []struct {
		why      string
		query    string    // the source's #KIND=QUERY
		values   [4]string // at 0, 1, 2 and 3 s
		energy   float64   // J over 0–3 s
		coverage float64
		gap      string // "" for none; else what its reason says
		gapFrom  int64  // its start and length, s
		gapLen   int64
	}{
		{"a steady 250 W counter: three steps of 250 J", "energy_mj=E", [4]string{"5000000", "5250000", "5500000", "5750000"},
			750, 1, "", 0, 0},
		{"a reset to 100 J is no wrap: increase() would count 100 J, this counts nothing", "energy_mj=E",
			[4]string{"5000000", "5250000", "100000", "350000"}, 500, 2.0 / 3, "(a reset: it does not wrap)", 1, 1},
		{"a backwards step of 1 J (increase() would count 5249 J from 0)", "energy_mj=E",
			[4]string{"5000000", "5250000", "5249000", "5499000"}, 500, 2.0 / 3, "went down from 5250.0 to 5249.0 J", 1, 1},
		{"a jump of 200,000 J in 1 s (200 kW) is above the ceiling of 100 kW", "energy_mj=E",
			[4]string{"5000000", "5250000", "205250000", "205500000"}, 500, 2.0 / 3, "jumped by 200000.0 J in 1s", 1, 1},
		{"an absurd power reading of 1e12 W at 2 s is left out: 300 W over 0–1 s only", "power_w=P",
			[4]string{"300", "300", "1e12", "300"}, 300, 1.0 / 3, "1e+12 W is above the ceiling of 100000 W", 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			var vals []string
			for i, v := range tt.values {
				vals = append(vals, fmt.Sprintf(`[%d,%q]`, promStart.Unix()+int64(i), v))
			}
			body := `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"Hostname":"node-a","gpu":"0"},"values":[` + strings.Join(vals, ",") + `]}]}}`
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/v1/query_range" {
					http.NotFound(w, r) // the clock check: a gap of the source, not of the series
					return
				}
				w.Write([]byte(body))
			}))
			defer srv.Close()
			srcs, err := Open("prometheus:"+srv.URL+"#"+tt.query, SpecOptions{})
			if err != nil {
				t.Fatal(err)
			}
			l, err := Start(promStart, srcs, Options{}).Stop(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var gaps []Gap
			for _, g := range l.Gaps {
				if g.Device != "" {
					gaps = append(gaps, g)
				} else if !strings.Contains(g.Reason, "clock check") {
					t.Errorf("gap %+v: want none but the clock check's", g)
				}
			}
			if tt.gap == "" && len(gaps) != 0 || tt.gap != "" && (len(gaps) != 1 || gaps[0].Device != "gpu0" || gaps[0].Node != "node-a" ||
				gaps[0].Source != "prometheus" || gaps[0].T != tt.gapFrom*sec || gaps[0].DurationNs != tt.gapLen*sec || !strings.Contains(gaps[0].Reason, tt.gap)) {
				t.Fatalf("gaps %+v, want %q from %d s for %d s", gaps, tt.gap, tt.gapFrom, tt.gapLen)
			}
			s := Summarize(l, Window{0, 3 * sec})
			if !near(val(s.EnergyJ), tt.energy) || !near(s.Coverage, tt.coverage) {
				t.Errorf("energy %v J, coverage %v: want %v J, %v", val(s.EnergyJ), s.Coverage, tt.energy, tt.coverage)
			}
		})
	}
}
