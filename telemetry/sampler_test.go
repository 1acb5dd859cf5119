package telemetry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// raplFixture lays out a powercap directory as Linux does: package 0 with a
// DRAM and a core subdomain (core is inside the package, so not read).
func raplFixture(t testing.TB, pkgUJ, dramUJ, maxUJ string) string {
	t.Helper()
	root := t.TempDir()
	for _, z := range []struct{ dir, name, energy string }{
		{"intel-rapl:0", "package-0", pkgUJ},
		{"intel-rapl:0/intel-rapl:0:0", "dram", dramUJ},
		{"intel-rapl:0/intel-rapl:0:1", "core", "5"},
	} {
		// Linux links the subzones at the top too; a fixture keeps them
		// flat under root, where the glob finds them.
		dir := filepath.Join(root, filepath.Base(z.dir))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]string{"name": z.name, "energy_uj": z.energy, "max_energy_range_uj": maxUJ} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func setCounter(t testing.TB, root, zone, v string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, zone, "energy_uj"), []byte(v+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The sampler reads RAPL at 0, 1 and 2 s and once more at Stop (2.5 s);
// the package counter wraps between 1 and 2 s. Package: 1000 µJ at 0 s,
// 3000 at 1 s (+2000), 500 at 2 s after a wrap at 10000 (+500 + 10000 −
// 3000 = +7500), so 0, 0.002, 0.0095 and 0.0095 J.
func TestSamplerReadsRAPLOnTheRunClock(t *testing.T) {
	root := raplFixture(t, "1000", "0", "10000")
	synctest.Test(t, func(t *testing.T) {
		r, err := OpenRAPL(root, "n1")
		if err != nil {
			t.Fatal(err)
		}
		s := Start(time.Now(), []Source{r}, Options{})
		time.Sleep(500 * time.Millisecond)
		setCounter(t, root, "intel-rapl:0", "3000")
		time.Sleep(time.Second)
		setCounter(t, root, "intel-rapl:0", "500")
		time.Sleep(time.Second)
		l, err := s.Stop(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got []Reading
		for _, rd := range l.Readings {
			if rd.Device == "package-0" {
				got = append(got, rd)
			}
		}
		want := []struct {
			t int64
			v float64
		}{{0, 0}, {sec, 0.002}, {2 * sec, 0.0095}, {5 * sec / 2, 0.0095}}
		if len(got) != len(want) {
			t.Fatalf("package readings %+v, want %d", got, len(want))
		}
		for i, w := range want {
			if got[i].T != w.t || !near(got[i].Value, w.v) || got[i].Kind != Energy || got[i].Node != "n1" || got[i].Source != "rapl" {
				t.Errorf("reading %d = %+v, want t %d value %v", i, got[i], w.t, w.v)
			}
		}
		if len(l.Gaps) != 0 || l.PeriodNs != sec || len(l.Sources) != 1 || !l.Sources[0].Polled {
			t.Errorf("log %+v", l)
		}
		if _, err := s.Stop(context.Background()); err == nil {
			t.Error("a second Stop did not fail")
		}
	})
}

// blockingPoller answers only when released: a meter that hangs.
type blockingPoller struct{ release chan struct{} }

func (*blockingPoller) Name() string    { return "slow" }
func (*blockingPoller) Spec() string    { return "slow" }
func (*blockingPoller) Notes() []string { return nil }
func (b *blockingPoller) Poll(context.Context) ([]Reading, error) {
	<-b.release
	return []Reading{{Device: "d", Kind: Power, Value: 1}}, nil
}

// A read that hangs leaves a gap at its timeout, the reads due while it
// still runs leave gaps instead of piling up, and once it returns the
// source is read again.
func TestSamplerRecordsGapsOfASlowSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &blockingPoller{release: make(chan struct{})}
		s := Start(time.Now(), []Source{p}, Options{})
		time.Sleep(1200 * time.Millisecond)
		close(p.release) // from now on every read answers at once
		time.Sleep(time.Second)
		l, err := s.Stop(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Gaps) != 2 || !strings.Contains(l.Gaps[0].Reason, "read timeout of 500ms") || l.Gaps[1].T != sec ||
			!strings.Contains(l.Gaps[1].Reason, "still running") {
			t.Errorf("gaps %+v: want a timeout at 0 and a busy source at 1 s", l.Gaps)
		}
		if len(l.Readings) != 2 || l.Readings[0].T != 2*sec {
			t.Errorf("readings %+v: want those of 2 s and 2.2 s", l.Readings)
		}
	})
}

type failingPoller struct{}

func (failingPoller) Name() string    { return "broken" }
func (failingPoller) Spec() string    { return "broken" }
func (failingPoller) Notes() []string { return nil }
func (failingPoller) Poll(context.Context) ([]Reading, error) {
	return nil, errors.New("meter unplugged")
}

func TestSamplerRecordsFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := Start(time.Now(), []Source{failingPoller{}}, Options{Period: 100 * time.Millisecond})
		time.Sleep(250 * time.Millisecond)
		l, _ := s.Stop(context.Background())
		// Reads at 0, 100, 200 ms and at Stop (250 ms): four gaps.
		if len(l.Gaps) != 4 || l.Gaps[0].Reason != "meter unplugged" || len(l.Readings) != 0 {
			t.Errorf("log %+v: want four gaps saying meter unplugged", l)
		}
	})
}

// Rebase: a log started 2 s after the run's origin moves every time 2 s
// later on the run's clock.
func TestRebase(t *testing.T) {
	origin := time.Unix(100, 0)
	l := &Log{StartUnixNs: time.Unix(102, 0).UnixNano(), Readings: []Reading{{T: sec}}, Gaps: []Gap{{T: 0}}}
	l.Rebase(origin)
	if l.Readings[0].T != 3*sec || l.Gaps[0].T != 2*sec || l.StartUnixNs != origin.UnixNano() {
		t.Errorf("rebased %+v", l)
	}
}

// SetOrigin: a Sampler started before the run (a warm-up) gives a Log on
// the run's clock: a replay's t_ns where the file puts it, a polled
// reading shifted by the time between the two starts.
func TestSamplerSetOrigin(t *testing.T) {
	rp, err := ReadReplay(strings.NewReader("t_ns,node,device,watts\n0,n,cpu,100\n1000000000,n,cpu,100\n"), "replay:x.csv")
	if err != nil {
		t.Fatal(err)
	}
	root := raplFixture(t, "1000", "20", "262143328850")
	r, err := OpenRAPL(root, "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s := Start(start, []Source{rp, r}, Options{Period: time.Hour})
	origin := start.Add(3 * time.Second) // the run starts 3 s after the sampler
	s.SetOrigin(origin)
	l, err := s.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if l.StartUnixNs != origin.UnixNano() {
		t.Errorf("log from %d, want the origin %d", l.StartUnixNs, origin.UnixNano())
	}
	for _, rd := range l.Readings {
		switch rd.Source {
		case "replay":
			if rd.T != 0 && rd.T != 1e9 {
				t.Errorf("replay reading at %d ns: want 0 or 1 s, where the file puts it", rd.T)
			}
		case "rapl":
			if rd.T > -2e9 || rd.T < -4e9 {
				t.Errorf("rapl reading at %d ns: want about -3 s (read as the sampler started)", rd.T)
			}
		}
	}
}
