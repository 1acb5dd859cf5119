package bundle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// ServerMetricsFile holds what the server's own Prometheus endpoints said
// during the run (package scrape): a header line, then one JSON object a
// line per scrape of one endpoint (JSON Lines). A scrape that failed is a
// line with its error and no samples: a recorded gap.
const ServerMetricsFile = "server_metrics.jsonl"

// serverMetricsFormat names the header line of ServerMetricsFile.
const serverMetricsFormat = "aimeter-server-metrics"

// ServerMetrics are the scrapes of the server's metrics endpoints made
// while a run went, on the run's clock.
type ServerMetrics struct {
	// IntervalNs is the time between the starts of two scrapes of one
	// endpoint, in nanoseconds.
	IntervalNs int64
	// Targets are the endpoints scraped (their URLs, with any password
	// removed); Scrape.Target indexes them.
	Targets []string
	// Scrapes are the scrapes of every target, in the order they ended.
	Scrapes []Scrape
}

// Scrape is one scrape of one metrics endpoint.
type Scrape struct {
	// Target is the index of the endpoint in ServerMetrics.Targets.
	Target int
	// TimeNs is when the request was sent, in nanoseconds from the run's
	// start (loadgen.Result.StartTime; negative before it). The
	// Records' times are from their pass's start, which is
	// PassInfo.StartUnixNs − StartTime after the run's start.
	TimeNs int64
	// DurationNs is how long the request took, to the end of its body or
	// to its failure.
	DurationNs int64
	// Error, if not "", is why the scrape gave no samples: the endpoint
	// was down, too slow, or sent what is not the Prometheus text format.
	Error string
	// Samples are the values the endpoint exposed, one per series.
	Samples []MetricSample
}

// MetricSample is one series' value in one scrape: the name as exposed
// (a histogram's buckets are named NAME_bucket with their "le" label, its
// sum and count NAME_sum and NAME_count, as in the text format).
type MetricSample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

type serverMetricsHeader struct {
	Format     string   `json:"format"`
	Version    int      `json:"version"`
	IntervalNs int64    `json:"interval_ns"`
	Targets    []string `json:"targets"`
}

type scrapeLine struct {
	Target     int            `json:"target"`
	TimeNs     int64          `json:"t_ns"`
	DurationNs int64          `json:"dur_ns"`
	Error      string         `json:"error,omitempty"`
	Samples    []metricSample `json:"samples,omitempty"`
}

type metricSample struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	Value  metricValue       `json:"value"`
}

// metricValue is a sample's value: a JSON number when finite, else the
// string "NaN", "+Inf" or "-Inf" (which Prometheus allows and JSON does not).
type metricValue float64

func (v metricValue) MarshalJSON() ([]byte, error) {
	f := float64(v)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

func (v *metricValue) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*v = metricValue(math.NaN())
		return nil
	case `"+Inf"`:
		*v = metricValue(math.Inf(1))
		return nil
	case `"-Inf"`:
		*v = metricValue(math.Inf(-1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("value %s is neither a number nor \"NaN\", \"+Inf\" or \"-Inf\"", b)
	}
	*v = metricValue(f)
	return nil
}

// WriteServerMetrics writes m as JSON Lines: the header, then one line per
// scrape.
func WriteServerMetrics(w io.Writer, m *ServerMetrics) error {
	if m == nil {
		return errors.New("bundle: nil ServerMetrics")
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	targets := m.Targets
	if targets == nil {
		targets = []string{}
	}
	if err := enc.Encode(serverMetricsHeader{Format: serverMetricsFormat, Version: 1, IntervalNs: m.IntervalNs, Targets: targets}); err != nil {
		return err
	}
	var line scrapeLine
	for i, s := range m.Scrapes {
		if s.Target < 0 || s.Target >= len(m.Targets) {
			return fmt.Errorf("bundle: scrape %d: target %d is not one of the %d targets", i, s.Target, len(m.Targets))
		}
		line = scrapeLine{Target: s.Target, TimeNs: s.TimeNs, DurationNs: s.DurationNs, Error: s.Error, Samples: line.Samples[:0]}
		for _, x := range s.Samples {
			line.Samples = append(line.Samples, metricSample{Name: x.Name, Labels: x.Labels, Value: metricValue(x.Value)})
		}
		if err := enc.Encode(&line); err != nil {
			return fmt.Errorf("bundle: scrape %d: %w", i, err)
		}
	}
	return bw.Flush()
}

// ReadServerMetrics reads what WriteServerMetrics wrote. An error names
// the line and the field that is wrong.
func ReadServerMetrics(r io.Reader) (*ServerMetrics, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	lineNo := 0
	var m *ServerMetrics
	for sc.Scan() {
		lineNo++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			return nil, fmt.Errorf("%s line %d: empty line", ServerMetricsFile, lineNo)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if m == nil {
			var h serverMetricsHeader
			if err := dec.Decode(&h); err != nil {
				return nil, fmt.Errorf("%s line 1 (the header): %w", ServerMetricsFile, err)
			}
			if h.Format != serverMetricsFormat || h.Version != 1 {
				return nil, fmt.Errorf("%s line 1: format %q version %d, want %q version 1", ServerMetricsFile, h.Format, h.Version, serverMetricsFormat)
			}
			if h.IntervalNs <= 0 {
				return nil, fmt.Errorf("%s line 1: interval_ns = %d, want a positive interval", ServerMetricsFile, h.IntervalNs)
			}
			m = &ServerMetrics{IntervalNs: h.IntervalNs, Targets: h.Targets}
			continue
		}
		var l scrapeLine
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", ServerMetricsFile, lineNo, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s line %d: more than one JSON value", ServerMetricsFile, lineNo)
		}
		switch {
		case l.Target < 0 || l.Target >= len(m.Targets):
			return nil, fmt.Errorf("%s line %d: target %d is not one of the header's %d targets", ServerMetricsFile, lineNo, l.Target, len(m.Targets))
		case l.DurationNs < 0:
			return nil, fmt.Errorf("%s line %d: dur_ns = %d is negative", ServerMetricsFile, lineNo, l.DurationNs)
		case l.Error != "" && len(l.Samples) > 0:
			return nil, fmt.Errorf("%s line %d: a failed scrape (error %q) with samples", ServerMetricsFile, lineNo, l.Error)
		}
		s := Scrape{Target: l.Target, TimeNs: l.TimeNs, DurationNs: l.DurationNs, Error: l.Error}
		if len(l.Samples) > 0 {
			s.Samples = make([]MetricSample, len(l.Samples))
		}
		for i, x := range l.Samples {
			if x.Name == "" {
				return nil, fmt.Errorf("%s line %d: sample %d has no name", ServerMetricsFile, lineNo, i+1)
			}
			s.Samples[i] = MetricSample{Name: x.Name, Labels: x.Labels, Value: float64(x.Value)}
		}
		m.Scrapes = append(m.Scrapes, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s line %d: %w", ServerMetricsFile, lineNo+1, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%s: empty, without its header line", ServerMetricsFile)
	}
	return m, nil
}
