package scrape

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/bundle"
)

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParse(t *testing.T) {
	vllm := readTestdata(t, "vllm.txt")
	tests := []struct {
		name    string
		text    string
		buckets bool
		want    []string // "name{k=v,…} value", in order
		wantErr string
	}{
		{name: "gauge and counter keep their names and labels", text: "# TYPE a gauge\na{x=\"1\"} 2\n# TYPE b_total counter\nb_total 7\n",
			want: []string{"a{x=1} 2", "b_total 7"}},
		{name: "untyped sample, as a server without TYPE lines sends it", text: "c 1.5\n", want: []string{"c 1.5"}},
		{name: "a histogram gives sum and count only, without buckets", text: vllm,
			want: []string{
				"vllm:kv_cache_usage_perc{engine=0,model_name=Qwen/Qwen3-0.6B} 0.25",
				"vllm:num_requests_running{engine=0,model_name=Qwen/Qwen3-0.6B} 3",
				"vllm:num_requests_waiting{engine=0,model_name=Qwen/Qwen3-0.6B} 1",
				"vllm:prefix_cache_hits_total{engine=0,model_name=Qwen/Qwen3-0.6B} 100",
				"vllm:prefix_cache_queries_total{engine=0,model_name=Qwen/Qwen3-0.6B} 400",
				"vllm:time_to_first_token_seconds_count{engine=0,model_name=Qwen/Qwen3-0.6B} 5",
				"vllm:time_to_first_token_seconds_sum{engine=0,model_name=Qwen/Qwen3-0.6B} 0.5",
			}},
		{name: "with buckets, a histogram keeps its cumulative buckets by le", text: "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 3\nh_sum 4\nh_count 3\n", buckets: true,
			want: []string{"h_bucket{le=+Inf} 3", "h_bucket{le=1} 2", "h_count 3", "h_sum 4"}},
		{name: "with buckets, a summary keeps its quantiles", text: "# TYPE s summary\ns{quantile=\"0.5\"} 9\ns_sum 20\ns_count 2\n", buckets: true,
			want: []string{"s{quantile=0.5} 9", "s_count 2", "s_sum 20"}},
		{name: "OpenMetrics' # EOF is a comment to the text parser", text: "# TYPE a gauge\na 1\n# EOF\n", want: []string{"a 1"}},
		{name: "NaN and infinities are values Prometheus allows", text: "a NaN\nb +Inf\n", want: []string{"a NaN", "b +Inf"}},
		{name: "HTML is not an exposition", text: "<html><body>Not found</body></html>\n", wantErr: "not the Prometheus text format"},
		{name: "a JSON body is not an exposition", text: `{"status":"ok"}`, wantErr: "not the Prometheus text format"},
		{name: "a value that is not a number names its line", text: "a 1\nb two\n", wantErr: "line 2"},
		{name: "an empty body holds no sample", text: "", wantErr: "holds no sample"},
		{name: "comments alone hold no sample", text: "# HELP a x\n# TYPE a gauge\n", wantErr: "holds no sample"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.text, tc.buckets)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, s := range got {
				lines = append(lines, sampleString(s))
			}
			if strings.Join(lines, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func sampleString(s bundle.MetricSample) string {
	var b strings.Builder
	b.WriteString(s.Name)
	if len(s.Labels) > 0 {
		keys := strings.Split(strings.TrimSuffix(labelKey(s.Labels), "\x00"), "\x00")
		b.WriteByte('{')
		for i := 0; i+1 < len(keys); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(keys[i] + "=" + keys[i+1])
		}
		b.WriteByte('}')
	}
	v := s.Value
	switch {
	case math.IsNaN(v):
		b.WriteString(" NaN")
	case math.IsInf(v, 1):
		b.WriteString(" +Inf")
	default:
		b.WriteString(" " + strconv.FormatFloat(v, 'g', -1, 64))
	}
	return b.String()
}

func TestOptionsCheck(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"no target", Options{}, "no metrics endpoint"},
		{"a path is not a URL", Options{Targets: []string{"/metrics"}}, `endpoint 1 ("/metrics")`},
		{"a scheme other than http", Options{Targets: []string{"http://a/metrics", "ftp://b/metrics"}}, `endpoint 2 ("ftp://b/metrics"): want an http`},
		{"no host", Options{Targets: []string{"http:///metrics"}}, "no host"},
		{"negative interval", Options{Targets: []string{"http://a/metrics"}, Interval: -time.Second}, "negative"},
		{"interval too short to mean anything", Options{Targets: []string{"http://a/metrics"}, Interval: time.Millisecond}, "under 10ms"},
		{"negative timeout", Options{Targets: []string{"http://a/metrics"}, Timeout: -1}, "timeout"},
		{"good", Options{Targets: []string{"https://a:9400/metrics"}, Interval: 5 * time.Second}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Check()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// handlerTransport serves requests with an http.Handler in the same
// process, so that a synctest bubble holds the whole exchange (a real
// socket's I/O is outside the bubble, and its fake clock cannot advance
// while a goroutine waits on one).
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ch := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		rec := httptest.NewRecorder()
		t.h.ServeHTTP(rec, r)
		ch <- rec
	}()
	select {
	case rec := <-ch:
		return rec.Result(), nil
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

// TestScraperSchedule checks the times of the scrapes on a fake clock: one
// at the start, then one per interval; a scrape slower than the timeout is
// a gap with its reason, and the schedule goes on; Stop returns at once
// with a scrape in flight, and drops it rather than call it a gap.
func TestScraperSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		origin := time.Now()
		var n atomic.Int64
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls := n.Add(1)
			switch calls {
			case 3: // slower than the timeout
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
				return
			case 4:
				w.Header().Set("Content-Type", "text/html")
				w.Write([]byte("<html>busy</html>"))
				return
			}
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			w.Write([]byte("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running " + string(rune('0'+calls)) + "\n"))
		})
		s, err := Start(t.Context(), Options{Targets: []string{"http://sut:8000/metrics"}, Interval: time.Second, Timeout: 500 * time.Millisecond,
			Client: &http.Client{Transport: handlerTransport{h}}})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(5100 * time.Millisecond) // scrapes at 0, 1, 2 (slow), 3 (HTML), 4, 5
		s.SetOrigin(origin)
		m, _ := s.Stop(t.Context())
		type row struct {
			t   time.Duration
			err string
			v   float64
		}
		want := []row{{0, "", 1}, {time.Second, "", 2}, {2 * time.Second, "no answer within 500ms", 0}, {3 * time.Second, `content type "text/html"`, 0},
			{4 * time.Second, "", 5}, {5 * time.Second, "", 6}}
		if len(m.Scrapes) != len(want) {
			t.Fatalf("%d scrapes, want %d: %+v", len(m.Scrapes), len(want), m.Scrapes)
		}
		for i, w := range want {
			sc := m.Scrapes[i]
			if time.Duration(sc.TimeNs) != w.t {
				t.Errorf("scrape %d at %v, want %v", i, time.Duration(sc.TimeNs), w.t)
			}
			if w.err != "" {
				if !strings.Contains(sc.Error, w.err) || sc.Samples != nil {
					t.Errorf("scrape %d: error %q with %d samples, want a gap with %q", i, sc.Error, len(sc.Samples), w.err)
				}
				continue
			}
			if sc.Error != "" || len(sc.Samples) != 1 || sc.Samples[0].Value != w.v {
				t.Errorf("scrape %d = %+v, want value %v", i, sc, w.v)
			}
		}
		if got := m.Scrapes[2].DurationNs; time.Duration(got) != 500*time.Millisecond {
			t.Errorf("the slow scrape took %v, want the 500ms timeout", time.Duration(got))
		}
		if m.IntervalNs != int64(time.Second) || len(m.Targets) != 1 {
			t.Errorf("interval %d, targets %v", m.IntervalNs, m.Targets)
		}
	})
}

// TestScraperStopInFlight checks that Stop with a scrape in flight returns
// without waiting for it, and does not record it as a gap.
func TestScraperStopInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		origin := time.Now()
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // never answers
		})
		s, err := Start(t.Context(), Options{Targets: []string{"http://sut/metrics"}, Interval: time.Minute,
			Client: &http.Client{Transport: handlerTransport{h}}})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		s.SetOrigin(origin)
		m, _ := s.Stop(t.Context())
		if time.Since(origin) != time.Second {
			t.Errorf("Stop took %v of fake time", time.Since(origin)-time.Second)
		}
		if len(m.Scrapes) != 0 {
			t.Errorf("scrapes %+v, want none: the one cut short is not the server's gap", m.Scrapes)
		}
		if m2, _ := s.Stop(t.Context()); m2 != m {
			t.Error("a second Stop returned another value")
		}
	})
}

// TestScraperRealSockets scrapes over real loopback sockets: a good
// endpoint, one that is down (its listener closed) and one that answers
// garbage. Each failure is a gap with its reason; the good one has data.
// The test waits for the scrapes it needs (not for a fixed time), so a
// slow machine only makes it slower.
func TestScraperRealSockets(t *testing.T) {
	vllm := readTestdata(t, "vllm.txt")
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "text/plain") {
			t.Errorf("Accept %q does not ask for the text format", r.Header.Get("Accept"))
		}
		w.Write([]byte(vllm))
	}))
	defer good.Close()
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("\x00\x01 this is { not metrics\n"))
	}))
	defer garbage.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/metrics"
	ln.Close()

	origin := time.Now()
	s, err := Start(context.Background(), Options{Targets: []string{good.URL + "/metrics", down, garbage.URL + "/metrics"}, Interval: 20 * time.Millisecond, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		s.mu.Lock()
		seen := map[int]int{}
		for _, d := range s.done {
			seen[d.s.Target]++
		}
		s.mu.Unlock()
		if seen[0] >= 2 && seen[1] >= 2 && seen[2] >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scrapes per target after 2 minutes: %v", seen)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.SetOrigin(origin)
	m, _ := s.Stop(t.Context())
	for _, sc := range m.Scrapes {
		switch sc.Target {
		case 0:
			if sc.Error != "" || len(sc.Samples) != 7 {
				t.Errorf("good endpoint: %q, %d samples", sc.Error, len(sc.Samples))
			}
		case 1:
			if !strings.Contains(sc.Error, "connect") {
				t.Errorf("down endpoint: error %q, want a refused connection", sc.Error)
			}
		case 2:
			if !strings.Contains(sc.Error, "not the Prometheus text format") {
				t.Errorf("garbage endpoint: error %q", sc.Error)
			}
		}
		if sc.TimeNs < 0 || sc.DurationNs < 0 {
			t.Errorf("scrape %+v before the origin or of negative length", sc)
		}
	}
	if sum := Summary(m); !strings.Contains(sum, "failed (recorded as gaps") {
		t.Errorf("Summary = %q", sum)
	}
	if err := Probe(context.Background(), nil, good.URL+"/metrics", 10*time.Second); err != nil {
		t.Errorf("Probe of a good endpoint: %v", err)
	}
	if err := Probe(context.Background(), nil, down, 10*time.Second); err == nil {
		t.Error("Probe of a closed port succeeded")
	}
	var ne *net.OpError
	if err := Probe(context.Background(), nil, down, 10*time.Second); !errors.As(err, &ne) {
		t.Errorf("Probe of a closed port: %v, want a net.OpError", err)
	}
}

func TestRedact(t *testing.T) {
	if got := redact("http://u:secret@h:1/metrics"); strings.Contains(got, "secret") {
		t.Errorf("redact kept the password: %s", got)
	}
	if got := redact("http://h:1/metrics"); got != "http://h:1/metrics" {
		t.Errorf("redact changed a URL without a password: %s", got)
	}
}

// TestStopOrigin: the record counts from SetOrigin's time zero, the run's
// start after the Scraper's (a scrape before it is at a negative time),
// and from Start without it.
func TestStopOrigin(t *testing.T) {
	for _, tc := range []struct {
		why    string
		origin time.Duration // after Start; < 0: no SetOrigin
		want   []int64       // the scrapes' times, in ms
	}{
		{"SetOrigin 1.5 s after Start", 1500 * time.Millisecond, []int64{-1500, -500, 500}},
		{"no SetOrigin", -1, []int64{0, 1000, 2000}},
	} {
		synctest.Test(t, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain; version=0.0.4")
				w.Write([]byte("up 1\n"))
			})
			start := time.Now()
			s, err := Start(t.Context(), Options{Targets: []string{"http://sut:8000/metrics"}, Interval: time.Second,
				Client: &http.Client{Transport: handlerTransport{h}}})
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(2500 * time.Millisecond)
			if tc.origin >= 0 {
				s.SetOrigin(start.Add(tc.origin))
			}
			m, err := s.Stop(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, sc := range m.Scrapes {
				got = append(got, sc.TimeNs/1e6)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: scrapes at %v ms, want %v", tc.why, got, tc.want)
			}
		})
	}
}
