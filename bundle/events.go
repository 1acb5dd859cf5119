package bundle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"aimeter/loadgen"
)

// EventsFile holds the detail-log events of the run, one JSON object a line
// (JSON Lines), so that mlperf_log_detail.txt and the summary's warning and
// error counts can be regenerated exactly.
const EventsFile = "events.jsonl"

// eventLine is one line of events.jsonl. Value keeps its Go type in Type,
// because the detail log formats each type differently (an int64 of 5 is
// "5", a float64 of 5 is "5" too but a bool is "true"): "string", "bool",
// "int", "uint", "float" (written as a string so that NaN, ±Inf and every
// bit of the value survive) or "uints".
type eventLine struct {
	TimeNs  int64             `json:"time_ns"`
	Key     string            `json:"key"`
	Kind    loadgen.EventKind `json:"kind,omitempty"` // left out for a point; "interval_start", "interval_end"
	Error   bool              `json:"error,omitempty"`
	Warning bool              `json:"warning,omitempty"`
	Type    string            `json:"type"`
	Value   json.RawMessage   `json:"value"`
}

// WriteEvents writes events as JSON Lines.
func WriteEvents(w io.Writer, events []loadgen.Event) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range events {
		ev := &events[i]
		line := eventLine{TimeNs: ev.TimeNs, Key: ev.Key, Kind: ev.Kind, Error: ev.Error, Warning: ev.Warning}
		if _, err := ev.Kind.MarshalText(); err != nil {
			return fmt.Errorf("event %d (%s): %w", i, ev.Key, err)
		}
		var v any
		switch x := ev.Value.(type) {
		case string:
			line.Type, v = "string", x
		case bool:
			line.Type, v = "bool", x
		case int64:
			line.Type, v = "int", x
		case uint64:
			line.Type, v = "uint", x
		case float64:
			line.Type, v = "float", strconv.FormatFloat(x, 'g', -1, 64)
		case []uint64:
			line.Type, v = "uints", x
			if x == nil {
				v = []uint64{}
			}
		default:
			return fmt.Errorf("event %d (%s): value of type %T cannot be stored", i, ev.Key, ev.Value)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("event %d (%s): %w", i, ev.Key, err)
		}
		line.Value = raw
		if err := enc.Encode(&line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// maxEventLine bounds one line of events.jsonl; LoadGen's longest values
// (lists of sample indices) stay far below it.
const maxEventLine = 64 << 20

// ReadEvents reads events.jsonl. Errors name the line.
func ReadEvents(r io.Reader) ([]loadgen.Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	var events []loadgen.Event
	for n := 1; sc.Scan(); n++ {
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		ev, err := parseEvent(b)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", EventsFile, n, err)
		}
		events = append(events, ev)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", EventsFile, err)
	}
	return events, nil
}

func parseEvent(b []byte) (loadgen.Event, error) {
	var line eventLine
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&line); err != nil {
		return loadgen.Event{}, err
	}
	if line.Key == "" {
		return loadgen.Event{}, errors.New(`missing "key"`)
	}
	ev := loadgen.Event{TimeNs: line.TimeNs, Key: line.Key, Kind: line.Kind, Error: line.Error, Warning: line.Warning}
	var err error
	switch line.Type {
	case "string":
		var v string
		err = json.Unmarshal(line.Value, &v)
		ev.Value = v
	case "bool":
		var v bool
		err = json.Unmarshal(line.Value, &v)
		ev.Value = v
	case "int":
		var v int64
		err = json.Unmarshal(line.Value, &v)
		ev.Value = v
	case "uint":
		var v uint64
		err = json.Unmarshal(line.Value, &v)
		ev.Value = v
	case "float":
		var s string
		if err = json.Unmarshal(line.Value, &s); err == nil {
			// FormatFloat's shortest form reads back to the same bits,
			// "NaN" and "±Inf" included.
			var v float64
			v, err = strconv.ParseFloat(s, 64)
			ev.Value = v
		}
	case "uints":
		var v []uint64
		err = json.Unmarshal(line.Value, &v)
		if v == nil {
			v = []uint64{}
		}
		ev.Value = v
	default:
		return loadgen.Event{}, fmt.Errorf("key %s: unknown value type %q", line.Key, line.Type)
	}
	if err != nil {
		return loadgen.Event{}, fmt.Errorf("key %s: %s value: %w", line.Key, line.Type, err)
	}
	return ev, nil
}
