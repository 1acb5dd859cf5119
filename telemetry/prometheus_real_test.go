package telemetry

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A real Prometheus server (Debian's prometheus), started on a loopback
// port, scrapes a DCGM-shaped exporter this test controls every second: a
// GPU at a constant 250 W whose energy counter, in mJ, grows by exactly
// 250 W × the time since the exporter started. Asked through the Prometheus
// source, the energy over the window must be the exporter's known energy
// within one scrape interval (250 J).
func TestRealPrometheus(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("AIMETER_REQUIRE_PROMETHEUS") != "" {
			t.Fatal("AIMETER_REQUIRE_PROMETHEUS is set and no prometheus binary is on PATH")
		}
		t.Skip("needs Debian's prometheus (apt-get install prometheus); the recorded answers in testdata/prometheus cover the parsing")
	}
	const watts = 250.0
	born := time.Now()
	var mu sync.Mutex
	var scrapes []time.Time // when Prometheus scraped, to know the real interval under load
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		mu.Lock()
		scrapes = append(scrapes, now)
		mu.Unlock()
		mj := watts * 1000 * now.Sub(born).Seconds()
		fmt.Fprintf(w, "# TYPE %s gauge\n%s{gpu=\"0\",Hostname=\"node-a\"} %g\n", DCGMPower, DCGMPower, watts)
		fmt.Fprintf(w, "# TYPE %s gauge\n%s{gpu=\"0\",Hostname=\"node-a\"} 50\n", DCGMGPUUtil, DCGMGPUUtil)
		fmt.Fprintf(w, "# TYPE %s counter\n%s{gpu=\"0\",Hostname=\"node-a\"} %.0f\n", DCGMEnergy, DCGMEnergy, mj)
	}))
	defer exporter.Close()
	eu, _ := url.Parse(exporter.URL)

	dir := t.TempDir()
	config := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: dcgm\n    static_configs:\n      - targets: ['%s']\n", eu.Host)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	out, _ := os.Create(filepath.Join(dir, "prometheus.log"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()

	srcs, err := Open("prometheus:http://"+addr+"#dcgm", SpecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := srcs[0].(*Prometheus)
	// Wait (bounded) until six scrapes are stored.
	from := time.Now()
	var rs []Reading
	deadline := time.Now().Add(90 * time.Second)
	for {
		time.Sleep(time.Second)
		rs, err = p.Window(context.Background(), from, from, time.Now())
		n := 0
		for _, r := range rs {
			if r.Kind == Energy {
				n++
			}
		}
		if n >= 6 {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Fatalf("no six scrapes within 90 s (last error %v); prometheus said:\n%s", err, log)
		}
	}
	to := time.Now()
	rs, err = p.Window(context.Background(), from, from, to)
	if err != nil {
		t.Fatal(err)
	}
	w := Window{0, to.Sub(from).Nanoseconds()}
	s := Summarize(&Log{PeriodNs: sec, Readings: rs}, w)
	var counted *SeriesSummary
	for i := range s.Series {
		if s.Series[i].Kind == Energy {
			counted = &s.Series[i]
		}
	}
	if counted == nil || counted.EnergyJ == nil || counted.Node != "node-a" || counted.Device != "gpu0" {
		t.Fatalf("no energy counter series for node-a gpu0: %+v", s)
	}
	// The counter's readings span the covered part of the window; the
	// known energy over that span is 250 W × its length. Each end of it is
	// the last scrape before it, at most one scrape interval stale: the
	// configured 1 s, or the longest real one on a loaded machine.
	known := watts * counted.Coverage * w.Seconds()
	interval := time.Second
	mu.Lock()
	for i := 1; i < len(scrapes); i++ {
		interval = max(interval, scrapes[i].Sub(scrapes[i-1]))
	}
	mu.Unlock()
	if math.Abs(*counted.EnergyJ-known) > watts*interval.Seconds()+1 {
		t.Errorf("energy %.1f J, known %.1f J: more than one scrape interval (%v: %.0f J) apart", *counted.EnergyJ, known, interval, watts*interval.Seconds())
	}
	if val(s.EnergyJ) != *counted.EnergyJ {
		t.Errorf("total %v J: want the counter's %v J, not the power's", val(s.EnergyJ), *counted.EnergyJ)
	}
	t.Logf("window %.1f s, coverage %.2f, energy %.1f J (known %.1f J), average %.1f W", w.Seconds(), counted.Coverage, *counted.EnergyJ, known, val(counted.AvgW))
	// The server shares this host's clock: its time() is this host's
	// within the round trip and PromQL's millisecond resolution.
	off, unc, err := p.ClockOffset(context.Background())
	if err != nil || off.Abs() > unc+2*time.Millisecond {
		t.Errorf("clock offset %v ± %v, %v: want 0 within the uncertainty", off, unc, err)
	}
}
