package bundle

import (
	"bytes"
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"aimeter/loadgen"
	"aimeter/sut/null"
)

func sampleServerMetrics() *ServerMetrics {
	return &ServerMetrics{IntervalNs: 1e9, Targets: []string{"http://a:8000/metrics", "http://b:8000/metrics"}, Scrapes: []Scrape{
		{Target: 0, TimeNs: -5e6, DurationNs: 2e6, Samples: []MetricSample{
			{Name: "vllm:num_requests_running", Labels: map[string]string{"model_name": "m", "engine": "0"}, Value: 3},
			{Name: "odd", Value: math.Inf(1)}, {Name: "odder", Value: math.Inf(-1)}, {Name: "g", Value: 0.1}}},
		{Target: 1, TimeNs: 1e9, DurationNs: 1e9, Error: "no answer within 1s"},
	}}
}

func TestServerMetricsRoundTrip(t *testing.T) {
	m := sampleServerMetrics()
	var buf bytes.Buffer
	if err := WriteServerMetrics(&buf, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadServerMetrics(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, m)
	}
	// NaN does not compare equal: check it alone.
	m.Scrapes[0].Samples[0].Value = math.NaN()
	buf.Reset()
	if err := WriteServerMetrics(&buf, m); err != nil {
		t.Fatal(err)
	}
	got, err = ReadServerMetrics(&buf)
	if err != nil || !math.IsNaN(got.Scrapes[0].Samples[0].Value) {
		t.Errorf("NaN read back as %v (%v)", got.Scrapes[0].Samples[0].Value, err)
	}
	if err := WriteServerMetrics(&buf, &ServerMetrics{IntervalNs: 1, Scrapes: []Scrape{{Target: 0}}}); err == nil {
		t.Error("a scrape of no target was written")
	}
}

func TestReadServerMetricsErrors(t *testing.T) {
	header := `{"format":"aimeter-server-metrics","version":1,"interval_ns":1000000000,"targets":["http://a/metrics"]}` + "\n"
	tests := []struct {
		name, text, want string
	}{
		{"empty file", "", "without its header"},
		{"header of another format", `{"format":"x","version":1,"interval_ns":1,"targets":[]}` + "\n", `format "x"`},
		{"header with no interval", `{"format":"aimeter-server-metrics","version":1,"interval_ns":0,"targets":[]}` + "\n", "interval_ns = 0"},
		{"header is not JSON", "hello\n", "line 1 (the header)"},
		{"target out of range names its line", header + `{"target":0,"t_ns":0,"dur_ns":1}` + "\n" + `{"target":1,"t_ns":0,"dur_ns":1}` + "\n", "line 3: target 1"},
		{"negative duration", header + `{"target":0,"t_ns":0,"dur_ns":-1}` + "\n", "dur_ns = -1"},
		{"a gap with samples", header + `{"target":0,"t_ns":0,"dur_ns":1,"error":"x","samples":[{"name":"a","value":1}]}` + "\n", "failed scrape"},
		{"a sample without a name", header + `{"target":0,"t_ns":0,"dur_ns":1,"samples":[{"name":"","value":1}]}` + "\n", "sample 1 has no name"},
		{"a value that is not a number", header + `{"target":0,"t_ns":0,"dur_ns":1,"samples":[{"name":"a","value":"lots"}]}` + "\n", "neither a number"},
		{"an unknown field", header + `{"target":0,"t_ns":0,"dur_ns":1,"extra":1}` + "\n", "line 2"},
		{"an empty line", header + "\n", "line 2: empty line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadServerMetrics(strings.NewReader(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestBundleServerMetrics writes a bundle with server metrics and reads it
// back: the file is in the manifest as a raw file and comes back whole.
func TestBundleServerMetrics(t *testing.T) {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.MinDurationMs = 10
	s.OfflineExpectedQPS = 1000
	res, err := loadgen.Run(context.Background(), null.SUT{}, null.QSL{Total: 16}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	m := sampleServerMetrics()
	if err := Write(dir, &Bundle{Result: res, Version: "test", NoReport: true, ServerMetrics: m}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := b.Manifest.Entry(ServerMetricsFile); !ok || e.Role != Raw {
		t.Errorf("manifest entry %+v, %v", e, ok)
	}
	if !reflect.DeepEqual(b.ServerMetrics, m) {
		t.Errorf("read back %+v", b.ServerMetrics)
	}
	// Written again without: the old file goes.
	if err := Write(dir, &Bundle{Result: res, Version: "test", NoReport: true}, nil); err != nil {
		t.Fatal(err)
	}
	if b, err = Read(dir); err != nil || b.ServerMetrics != nil {
		t.Errorf("after a rewrite without server metrics: %v, %v", b.ServerMetrics, err)
	}
}

func FuzzReadServerMetrics(f *testing.F) {
	var buf bytes.Buffer
	WriteServerMetrics(&buf, sampleServerMetrics())
	f.Add(buf.String())
	f.Add(`{"format":"aimeter-server-metrics","version":1,"interval_ns":1,"targets":["a"]}` + "\n" + `{"target":0,"t_ns":0,"dur_ns":0,"samples":[{"name":"x","value":"NaN"}]}`)
	f.Fuzz(func(t *testing.T, text string) {
		m, err := ReadServerMetrics(strings.NewReader(text))
		if err != nil {
			return
		}
		// What reads writes, and reads back the same.
		var out bytes.Buffer
		if err := WriteServerMetrics(&out, m); err != nil {
			t.Fatalf("write of a read file: %v", err)
		}
		if _, err := ReadServerMetrics(&out); err != nil {
			t.Fatalf("read of a written file: %v", err)
		}
	})
}
