package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MaxClockOffset is the largest offset between the clock of a meter's
// host and this one that CheckClocks accepts: MLPerf Power's tolerance
// between the timestamps of its client (on the SUT) and its server (by
// the meter), TIME_DELTA_TOLERANCE = 500 ms in mlcommons/power-dev's
// compliance/check.py.
const MaxClockOffset = 500 * time.Millisecond

// Clocked is a source on another machine whose clock can be compared
// with this one's. The Sampler measures each Clocked source once, when it
// stops, and keeps the measurement in the Log.
type Clocked interface {
	Source
	// ClockOffset is the source's clock minus this host's, and the
	// uncertainty of that figure (half the round trip).
	ClockOffset(ctx context.Context) (offset, uncertainty time.Duration, err error)
}

// ClockReading is one measurement of a source's clock.
type ClockReading struct {
	Source string `json:"source"`
	// T is when it was made, on the run's clock.
	T int64 `json:"t_ns"`
	// OffsetNs is the source's clock minus this host's; UncertaintyNs
	// half the round trip of the measurement.
	OffsetNs      int64 `json:"offset_ns"`
	UncertaintyNs int64 `json:"uncertainty_ns"`
}

// ClockOffset asks the Prometheus server for its time (the PromQL
// expression time(), evaluated now) and compares it with the midpoint of
// the request on this host's clock.
func (p *Prometheus) ClockOffset(ctx context.Context) (offset, uncertainty time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(p.URL, "/")+"/api/v1/query?"+url.Values{"query": {"time()"}}.Encode(), nil)
	if err != nil {
		return 0, 0, err
	}
	client := p.Client
	if client == nil {
		client = http.DefaultClient
	}
	sent := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	got := time.Now()
	if err != nil {
		return 0, 0, err
	}
	server, err := parsePromTime(body)
	if err != nil {
		return 0, 0, err
	}
	rtt := got.Sub(sent)
	mid := sent.Add(rtt / 2)
	return server.Sub(mid), rtt / 2, nil
}

// parsePromTime reads the answer to the query time(): a scalar [t, "t"]
// in Unix seconds.
func parsePromTime(body []byte) (time.Time, error) {
	var pr struct {
		Status string `json:"status"`
		Data   struct {
			ResultType string            `json:"resultType"`
			Result     []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &pr); err != nil {
		return time.Time{}, fmt.Errorf("time(): not a Prometheus API answer: %w", err)
	}
	if pr.Status != "success" || pr.Data.ResultType != "scalar" || len(pr.Data.Result) != 2 {
		return time.Time{}, fmt.Errorf("time(): want a successful scalar answer, got status %q, type %q", pr.Status, pr.Data.ResultType)
	}
	var s string
	if err := json.Unmarshal(pr.Data.Result[1], &s); err != nil {
		return time.Time{}, fmt.Errorf("time(): value: %w", err)
	}
	// Seconds and a decimal fraction, read as integers: a float64 would
	// lose the milliseconds' last digit.
	whole, frac, _ := strings.Cut(s, ".")
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || sec <= 0 || sec > 1e11 || len(frac) > 9 || strings.Trim(frac, "0123456789") != "" {
		return time.Time{}, fmt.Errorf("time(): value %q: want Unix seconds", s)
	}
	ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	return time.Unix(sec, ns), nil
}

// ClockCheck is MLPerf Power's check of one source against a window: the
// meter read over the whole window (power_begin and power_end inside its
// measurement), and its host's clock within MaxClockOffset of this one's.
type ClockCheck struct {
	Source string `json:"source"`
	// FirstNs and LastNs are the times of the source's first and last
	// reading on the run's clock; Covers is true when they hold the
	// window.
	FirstNs int64 `json:"first_ns"`
	LastNs  int64 `json:"last_ns"`
	Covers  bool  `json:"covers_window"`
	// OffsetNs and UncertaintyNs are the largest measured offset of the
	// source's clock and its uncertainty; nil for a source on this host
	// (a polled one, whose readings this host stamps) or one that cannot
	// say (a replayed file).
	OffsetNs      *int64 `json:"offset_ns,omitempty"`
	UncertaintyNs *int64 `json:"uncertainty_ns,omitempty"`
	// Pass is Covers and an offset, where measured, within
	// MaxClockOffset.
	Pass bool   `json:"pass"`
	Note string `json:"note,omitempty"`
}

// CheckClocks checks each source of l against w (see ClockCheck).
func CheckClocks(l *Log, w Window) []ClockCheck {
	var out []ClockCheck
	for _, src := range l.Sources {
		c := ClockCheck{Source: src.Name}
		n := 0
		for _, r := range l.Readings {
			if r.Source != src.Name {
				continue
			}
			if n == 0 || r.T < c.FirstNs {
				c.FirstNs = r.T
			}
			if n == 0 || r.T > c.LastNs {
				c.LastNs = r.T
			}
			n++
		}
		var notes []string
		c.Covers = n > 0 && c.FirstNs <= w.FromNs && c.LastNs >= w.ToNs
		switch {
		case n == 0:
			notes = append(notes, "no reading")
		case !c.Covers:
			notes = append(notes, fmt.Sprintf("its readings (%.3f s to %.3f s) do not hold the window (%.3f s to %.3f s)",
				float64(c.FirstNs)/1e9, float64(c.LastNs)/1e9, float64(w.FromNs)/1e9, float64(w.ToNs)/1e9))
		}
		for _, cr := range l.Clocks {
			if cr.Source != src.Name {
				continue
			}
			if c.OffsetNs == nil || abs64(cr.OffsetNs) > abs64(*c.OffsetNs) {
				o, u := cr.OffsetNs, cr.UncertaintyNs
				c.OffsetNs, c.UncertaintyNs = &o, &u
			}
		}
		c.Pass = c.Covers
		if c.OffsetNs != nil && abs64(*c.OffsetNs) > MaxClockOffset.Nanoseconds() {
			c.Pass = false
			notes = append(notes, fmt.Sprintf("its clock is %v off this host's (± %v): more than MLPerf Power's %v",
				time.Duration(*c.OffsetNs), time.Duration(*c.UncertaintyNs), MaxClockOffset))
		}
		c.Note = strings.Join(notes, "; ")
		out = append(out, c)
	}
	return out
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
