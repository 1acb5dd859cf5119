package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CheckClocks, MLPerf Power's rules: the meter read over the whole window,
// and a measured clock within 500 ms.
func TestCheckClocks(t *testing.T) {
	l := &Log{PeriodNs: sec, Sources: []SourceInfo{{Name: "rapl", Polled: true}, {Name: "prometheus"}, {Name: "replay"}, {Name: "far"}, {Name: "mute"}},
		Readings: []Reading{
			pw(-sec, "", "cpu", 1), pw(11*sec, "", "cpu", 1), // rapl: holds 0–10 s
			pw(0, "", "gpu0", 1), pw(10*sec, "", "gpu0", 1), // prometheus: exactly 0–10 s
			pw(2*sec, "", "x", 1), pw(12*sec, "", "x", 1), // replay: starts late
			pw(-sec, "", "y", 1), pw(11*sec, "", "y", 1), // far: holds it, clock off
		},
		Clocks: []ClockReading{{Source: "prometheus", OffsetNs: 499e6, UncertaintyNs: 1e6}, {Source: "far", OffsetNs: 100e6}, {Source: "far", OffsetNs: -501e6, UncertaintyNs: 2e6}},
	}
	for i, src := range []string{"rapl", "rapl", "prometheus", "prometheus", "replay", "replay", "far", "far"} {
		l.Readings[i].Source = src
	}
	got := CheckClocks(l, Window{0, 10 * sec})
	want := []struct {
		why    string
		covers bool
		pass   bool
		note   string
	}{
		{"a polled source on this host: readings around the window, no clock to compare", true, true, ""},
		{"readings exactly at the window's edges, 499 ms off: within the tolerance", true, true, ""},
		{"a replay that starts after power_begin", false, false, "do not hold the window"},
		{"the largest of two offsets, -501 ms, is past 500 ms", true, false, "-501ms off"},
		{"a source that read nothing", false, false, "no reading"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d checks, want %d", len(got), len(want))
	}
	for i, w := range want {
		c := got[i]
		if c.Covers != w.covers || c.Pass != w.pass || (w.note == "") != (c.Note == "") || !strings.Contains(c.Note, w.note) {
			t.Errorf("%s: %+v", w.why, c)
		}
	}
	if o := got[3].OffsetNs; o == nil || *o != -501e6 || *got[3].UncertaintyNs != 2e6 {
		t.Errorf("far: offset %v, want the largest, -501 ms ± 2 ms", o)
	}
	if got[0].OffsetNs != nil {
		t.Error("a polled source has no offset")
	}
}

// A Prometheus server whose clock is 3 s ahead: the Sampler measures it
// after the window query, and the log keeps it on the run's clock.
func TestPrometheusClockOffset(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/v1/query" && r.URL.Query().Get("query") == "time()" {
			now := float64(time.Now().Add(3*time.Second).UnixNano()) / 1e9
			w.Write([]byte(`{"status":"success","data":{"resultType":"scalar","result":[` + ftoa(now) + `,"` + ftoa(now) + `"]}}`))
			return
		}
		w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"Hostname":"a","gpu":"0"},"values":[[` +
			ftoa(float64(time.Now().Unix())) + `,"100"]]}]}}`))
	}))
	defer srv.Close()
	p := &Prometheus{URL: srv.URL, Queries: PromPresets["dcgm-power"], spec: "prometheus:" + srv.URL}
	s := Start(time.Now(), []Source{p}, Options{Period: 100 * time.Millisecond})
	l, err := s.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Clocks) != 1 {
		t.Fatalf("clocks %+v, gaps %+v", l.Clocks, l.Gaps)
	}
	c := l.Clocks[0]
	if d := time.Duration(c.OffsetNs) - 3*time.Second; d.Abs() > time.Duration(c.UncertaintyNs)+2*time.Millisecond {
		t.Errorf("offset %v ± %v: want 3 s", time.Duration(c.OffsetNs), time.Duration(c.UncertaintyNs))
	}
	checks := CheckClocks(l, Window{0, 1})
	if len(checks) != 1 || checks[0].Pass || !strings.Contains(checks[0].Note, "more than MLPerf Power's 500ms") {
		t.Errorf("checks %+v: want a failure for the 3 s offset", checks)
	}
}

func TestParsePromTime(t *testing.T) {
	cases := []struct {
		why, body string
		ok        bool
	}{
		{"a scalar", `{"status":"success","data":{"resultType":"scalar","result":[1795586400.123,"1795586400.123"]}}`, true},
		{"an error", `{"status":"error","errorType":"bad_data","error":"x"}`, false},
		{"a vector", `{"status":"success","data":{"resultType":"vector","result":[]}}`, false},
		{"not a number", `{"status":"success","data":{"resultType":"scalar","result":[1,"soon"]}}`, false},
		{"a negative time", `{"status":"success","data":{"resultType":"scalar","result":[1,"-5"]}}`, false},
		{"not JSON", `<html>`, false},
	}
	for _, c := range cases {
		tm, err := parsePromTime([]byte(c.body))
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, %v", c.why, tm, err)
		}
		if c.ok && tm.UnixMilli() != 1795586400123 {
			t.Errorf("%s: %v", c.why, tm)
		}
	}
}

func FuzzParsePromTime(f *testing.F) {
	f.Add([]byte(`{"status":"success","data":{"resultType":"scalar","result":[1795586400.123,"1795586400.123"]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tm, err := parsePromTime(b)
		if err == nil && (tm.Unix() <= 0 || tm.Unix() > 1e11) {
			t.Fatalf("time %v accepted", tm)
		}
	})
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
