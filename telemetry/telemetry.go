package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Kind is what a reading measures.
type Kind uint8

// The kinds of reading.
const (
	// Power is an instantaneous power in watts.
	Power Kind = iota + 1
	// Energy is a cumulative energy counter in joules: only differences of
	// two readings of one device mean anything. Sources count a wrap of
	// the counter's range and leave any other drop out (a gap, see Gap),
	// so that a stored counter never goes down.
	Energy
	// Utilization is a device's busy share in percent (0 to 100).
	Utilization
)

var kindNames = map[Kind]string{Power: "power_w", Energy: "energy_j", Utilization: "utilization_pct"}

// String is the kind's name in telemetry.json: power_w, energy_j or
// utilization_pct.
func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// MarshalText writes the kind's name.
func (k Kind) MarshalText() ([]byte, error) {
	if _, ok := kindNames[k]; !ok {
		return nil, fmt.Errorf("telemetry: unknown kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText reads a kind's name.
func (k *Kind) UnmarshalText(b []byte) error {
	for kk, s := range kindNames {
		if s == string(b) {
			*k = kk
			return nil
		}
	}
	return fmt.Errorf("unknown reading kind %q (want power_w, energy_j or utilization_pct)", b)
}

// Reading is one value of one meter.
type Reading struct {
	// T is when the value held, in nanoseconds from the run's start (the
	// clock of the records); negative before the run.
	T int64 `json:"t_ns"`
	// Source names the source that read it, e.g. "rapl" or "replay".
	Source string `json:"source"`
	// Node is the machine ("" for the only one); Device the meter on it,
	// e.g. "package-0", "gpu0" or "cpu".
	Node   string `json:"node"`
	Device string `json:"device"`
	Kind   Kind   `json:"kind"`
	// Value is in the kind's unit: W, J or %.
	Value float64 `json:"value"`
}

// Gap is a read that gave nothing (the source failed, timed out or was
// still busy with the previous read), or a stretch of one series that a
// source or the Sampler left out: a counter step that is no wrap of the
// counter's range (a reset, a backwards step, a jump), or a reading above
// the source's ceiling (PowerCeiling). A gap of a series names its Device
// and Kind and lasts DurationNs: that stretch adds no energy and is not
// covered (Summarize).
type Gap struct {
	Source string `json:"source"`
	// Node, Device and Kind name the series of a gap of one series; empty
	// for a read that gave nothing.
	Node   string `json:"node,omitempty"`
	Device string `json:"device,omitempty"`
	Kind   Kind   `json:"kind,omitempty"`
	// T is when the read was due, on the run's clock; for a gap of a
	// series, the start of the stretch left out: the reading before it.
	T int64 `json:"t_ns"`
	// DurationNs is the length of the stretch left out (0 for a read that
	// gave nothing, whose hole the readings show by themselves).
	DurationNs int64  `json:"duration_ns,omitempty"`
	Reason     string `json:"reason"`
}

// ofSeries is true for a gap of one series with a length, the kind that
// Summarize leaves out.
func (g Gap) ofSeries() bool { return g.Device != "" && g.Kind != 0 && g.DurationNs > 0 }

// SeriesGaps is the error a Poll returns beside its readings when it left
// some step of a series out (an energy counter that went down without
// wrapping): the Sampler keeps the readings and records each gap, from the
// series' reading before to this one. Its gaps name Node, Device, Kind and
// Reason; the Sampler sets T and DurationNs.
type SeriesGaps []Gap

// Error lists the gaps' reasons.
func (g SeriesGaps) Error() string {
	var parts []string
	for _, x := range g {
		parts = append(parts, x.Device+" "+x.Kind.String()+": "+x.Reason)
	}
	return strings.Join(parts, "; ")
}

// SourceInfo describes one source of a Log.
type SourceInfo struct {
	// Name is the source's name in its readings.
	Name string `json:"name"`
	// Spec is how it was asked for, e.g. "rapl" or "replay:trace.csv".
	Spec string `json:"spec"`
	// Polled is true for a source the Sampler read once a period, false
	// for one asked for the run's window afterwards.
	Polled bool `json:"polled"`
	// Notes say what the reader should know: a root-only file, a low
	// rate, a preset's queries.
	Notes []string `json:"notes,omitempty"`
}

// Log is everything the sources read for one run: telemetry.json in the
// bundle.
type Log struct {
	// StartUnixNs is the run's start as Unix nanoseconds: the origin of
	// every T.
	StartUnixNs int64 `json:"start_unix_ns"`
	// PeriodNs is the sampling period; a stretch between two readings
	// longer than MaxGap(PeriodNs) counts as not covered.
	PeriodNs int64        `json:"period_ns"`
	Sources  []SourceInfo `json:"sources"`
	Readings []Reading    `json:"readings"`
	Gaps     []Gap        `json:"gaps,omitempty"`
	// Clocks are the measurements of the clocks of the sources on other
	// machines (Clocked), for CheckClocks.
	Clocks []ClockReading `json:"clocks,omitempty"`
}

// Rebase moves the log's clock origin to origin: every T is shifted so that
// it counts from origin instead of the old start.
func (l *Log) Rebase(origin time.Time) {
	shift := l.StartUnixNs - origin.UnixNano()
	l.StartUnixNs = origin.UnixNano()
	for i := range l.Readings {
		l.Readings[i].T += shift
	}
	for i := range l.Gaps {
		l.Gaps[i].T += shift
	}
	for i := range l.Clocks {
		l.Clocks[i].T += shift
	}
}

// Write writes l as indented JSON.
func (l *Log) Write(w io.Writer) error {
	b, err := json.MarshalIndent(l, "", " ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadLog reads a Log that Write wrote, checking each reading: errors name
// the reading's index and field.
func ReadLog(r io.Reader) (*Log, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var l Log
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("telemetry log: %w", err)
	}
	if l.PeriodNs <= 0 {
		return nil, fmt.Errorf("telemetry log: period_ns %d: want > 0", l.PeriodNs)
	}
	for i, rd := range l.Readings {
		if err := rd.check(); err != nil {
			return nil, fmt.Errorf("telemetry log: readings[%d]: %w", i, err)
		}
	}
	return &l, nil
}

func (rd Reading) check() error {
	if _, ok := kindNames[rd.Kind]; !ok {
		return fmt.Errorf("kind: want power_w, energy_j or utilization_pct")
	}
	if math.IsNaN(rd.Value) || math.IsInf(rd.Value, 0) || rd.Value < 0 {
		return fmt.Errorf("value %v: want a finite number ≥ 0", rd.Value)
	}
	if rd.Kind == Utilization && rd.Value > 100 {
		return fmt.Errorf("value %v: a utilisation is at most 100 %%", rd.Value)
	}
	return nil
}

// Source is one meter.
type Source interface {
	// Name is the source's name in its readings, e.g. "rapl".
	Name() string
	// Spec is how it was asked for, e.g. "prometheus:http://p:9090#dcgm".
	Spec() string
	// Notes are what a reader of the results should know about it.
	Notes() []string
}

// Poller is a source the Sampler reads once a period.
type Poller interface {
	Source
	// Poll reads the meter now. It returns the readings with T unset (the
	// Sampler stamps them); it should give up when ctx ends.
	Poll(ctx context.Context) ([]Reading, error)
}

// Windowed is a source asked once, after the run, for the readings of a
// window: a file, or a server that kept its own samples.
type Windowed interface {
	Source
	// Window returns the readings between from and to (wall clock), with T
	// counted from start, the run's clock origin. It may return readings
	// outside the window; Summarize clips them.
	Window(ctx context.Context, start, from, to time.Time) ([]Reading, error)
}

// sortReadings orders readings by series, then time.
func sortReadings(rs []Reading) {
	slices.SortStableFunc(rs, func(a, b Reading) int {
		if c := compareKey(keyOf(a), keyOf(b)); c != 0 {
			return c
		}
		switch {
		case a.T < b.T:
			return -1
		case a.T > b.T:
			return 1
		}
		return 0
	})
}
