package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// PromQuery is one PromQL query of a Prometheus source and how to read its
// values.
type PromQuery struct {
	// Kind is what the values are.
	Kind Kind
	// Query is the PromQL expression, e.g. DCGM_FI_DEV_POWER_USAGE.
	Query string
	// Scale multiplies each value into the kind's unit (0.001 for a
	// counter in mJ); 0 means 1.
	Scale float64
}

// The NVIDIA DCGM exporter's metrics, the presets of a Prometheus source.
const (
	DCGMPower   = "DCGM_FI_DEV_POWER_USAGE"              // W
	DCGMEnergy  = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" // mJ since the driver loaded, a counter
	DCGMGPUUtil = "DCGM_FI_DEV_GPU_UTIL"                 // %
)

// PromPresets are the named query sets of "prometheus:URL#PRESET"; "dcgm"
// is the default.
var PromPresets = map[string][]PromQuery{
	"dcgm":        {{Energy, DCGMEnergy, 0.001}, {Power, DCGMPower, 1}, {Utilization, DCGMGPUUtil, 1}},
	"dcgm-power":  {{Power, DCGMPower, 1}},
	"dcgm-energy": {{Energy, DCGMEnergy, 0.001}},
	"dcgm-util":   {{Utilization, DCGMGPUUtil, 1}},
}

// Prometheus is a Windowed source: after the run it asks a Prometheus
// server's HTTP API for one range query per metric over the run's window
// (/api/v1/query_range), at Step. The node of a series is its Hostname
// label (the DCGM exporter's), else its instance label; its device is
// "gpu" and its gpu label, else its device label, else the metric name.
// A counter (Kind Energy) is read as the joules counted since its first
// value: the DCGM exporter's counter (64 bits of mJ) does not wrap in
// practice, so a value lower than the one before is a reset (a driver
// reload, an exporter restart); that step, or a rise above the ceiling
// (PowerCeiling), adds nothing and is a gap, unlike Prometheus's
// increase(), which counts a reset from 0.
type Prometheus struct {
	// URL is the server's base URL, e.g. http://prom:9090.
	URL string
	// Queries are the metrics to read.
	Queries []PromQuery
	// Step is the query resolution; 0 means DefaultPeriod. It is widened
	// so that no series has more than 10,000 points (Prometheus refuses
	// 11,000).
	Step time.Duration
	// Client makes the requests; nil means http.DefaultClient.
	Client *http.Client
	spec   string
	powerCeiling
}

// Name is "prometheus".
func (*Prometheus) Name() string { return "prometheus" }

// Spec is how the source was asked for.
func (p *Prometheus) Spec() string { return p.spec }

// Notes lists the queries.
func (p *Prometheus) Notes() []string {
	var qs []string
	for _, q := range p.Queries {
		qs = append(qs, q.Kind.String()+"="+q.Query)
	}
	return []string{"Prometheus range queries at the scrape interval of its exporters: " + strings.Join(qs, ", ")}
}

// Window runs each query over [from, to]. A query that fails or returns no
// data is named in the error, and the other queries' readings are still
// returned.
func (p *Prometheus) Window(ctx context.Context, start, from, to time.Time) ([]Reading, error) {
	step := p.Step
	if step <= 0 {
		step = DefaultPeriod
	}
	if min := to.Sub(from) / 10000; step < min {
		step = min
	}
	var out []Reading
	var errs []error
	var gaps SeriesGaps
	for _, q := range p.Queries {
		rs, err := p.rangeQuery(ctx, q, start, from, to, step)
		sg, err := splitGaps(err)
		gaps = append(gaps, sg...)
		if err != nil {
			errs = append(errs, fmt.Errorf("prometheus query %q: %w", q.Query, err))
		}
		out = append(out, rs...)
	}
	if gaps != nil {
		errs = append(errs, gaps)
	}
	return out, errors.Join(errs...)
}

// promResponse is the Prometheus HTTP API's answer to a range query.
type promResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

func (p *Prometheus) rangeQuery(ctx context.Context, q PromQuery, start, from, to time.Time, step time.Duration) ([]Reading, error) {
	v := url.Values{}
	v.Set("query", q.Query)
	v.Set("start", unixSeconds(from))
	v.Set("end", unixSeconds(to))
	v.Set("step", strconv.FormatFloat(step.Seconds(), 'f', -1, 64))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(p.URL, "/")+"/api/v1/query_range?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	client := p.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, err
	}
	return parsePromRange(body, q, start, p.PowerCeiling)
}

func unixSeconds(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64)
}

// parsePromRange reads a query_range answer into readings on the clock
// that starts at start; ceiling gives each device's ceiling (node,
// device). The counter steps it does not count are returned as SeriesGaps
// (alone, or joined to the error).
func parsePromRange(body []byte, q PromQuery, start time.Time, ceiling func(node, device string) float64) ([]Reading, error) {
	var pr promResponse
	if err := json.Unmarshal(body, &pr); err != nil {
		return nil, fmt.Errorf("not a Prometheus API answer: %w", err)
	}
	if pr.Status != "success" {
		return nil, fmt.Errorf("server says %s: %s: %s", pr.Status, pr.ErrorType, pr.Error)
	}
	if pr.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("result type %q: want matrix", pr.Data.ResultType)
	}
	if len(pr.Data.Result) == 0 {
		return nil, errors.New("no data over the window")
	}
	scale := q.Scale
	if scale == 0 {
		scale = 1
	}
	var out []Reading
	var gaps SeriesGaps
	for si, s := range pr.Data.Result {
		node := s.Metric["Hostname"]
		if node == "" {
			node = s.Metric["instance"]
		}
		device := s.Metric["device"]
		if g, ok := s.Metric["gpu"]; ok {
			device = "gpu" + g
		}
		if device == "" {
			device = s.Metric["__name__"]
		}
		if device == "" {
			device = q.Query
		}
		var c counter
		for vi, pair := range s.Values {
			ts, ok1 := pair[0].(float64)
			text, ok2 := pair[1].(string)
			if !ok1 || !ok2 {
				return out, withGaps(fmt.Errorf("result %d value %d: want [unix seconds, \"value\"]", si, vi), gaps)
			}
			val, err := strconv.ParseFloat(text, 64)
			if err != nil || math.IsNaN(val) || math.IsInf(val, 0) {
				return out, withGaps(fmt.Errorf("result %d value %d: %q is not a finite number", si, vi, text), gaps)
			}
			val *= scale
			t := time.Unix(0, int64(math.Round(ts*1e9))).Sub(start).Nanoseconds()
			if q.Kind == Energy {
				prevT := c.lastT
				var why string
				if val, why = c.step(val, t, ceiling(node, device)); why != "" {
					gaps = append(gaps, Gap{Node: node, Device: device, Kind: Energy, T: prevT, DurationNs: t - prevT, Reason: q.Query + ": " + why})
				}
			}
			out = append(out, Reading{T: t, Source: "prometheus", Node: node, Device: device, Kind: q.Kind, Value: val})
		}
	}
	slices.SortStableFunc(out, func(a, b Reading) int { return compareKey(keyOf(a), keyOf(b)) })
	return out, withGaps(nil, gaps)
}

// withGaps joins err and gaps (when there are any).
func withGaps(err error, gaps SeriesGaps) error {
	if gaps == nil {
		return err
	}
	return errors.Join(err, gaps)
}
