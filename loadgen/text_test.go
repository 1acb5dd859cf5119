package loadgen

import (
	"encoding/json"
	"testing"
)

// TestStatusText: a Status reads back from its text, as records.csv and
// records.jsonl write it; an unknown status neither marshals nor parses.
func TestStatusText(t *testing.T) {
	for _, s := range []Status{StatusOK, StatusError, StatusLost} {
		b, err := s.MarshalText()
		if err != nil || string(b) != s.String() {
			t.Errorf("%v.MarshalText() = %q, %v", s, b, err)
		}
		var got Status
		if err := got.UnmarshalText(b); err != nil || got != s {
			t.Errorf("UnmarshalText(%q) = %v, %v, want %v", b, got, err, s)
		}
	}
	if b, err := Status(0).MarshalText(); err == nil {
		t.Errorf("Status(0).MarshalText() = %q, want an error", b)
	}
	var s Status
	if err := s.UnmarshalText([]byte("OK")); err == nil {
		t.Errorf("UnmarshalText(OK) = %v, want an error", s)
	}
}

// TestEventKindText: an EventKind reads back from its text; in JSON with
// omitempty a point in time is left out and an interval's end is its
// name, as events.jsonl holds them.
func TestEventKindText(t *testing.T) {
	type line struct {
		Kind EventKind `json:"kind,omitempty"`
	}
	for _, tc := range []struct {
		kind EventKind
		json string
	}{
		{EventPoint, `{}`},
		{EventIntervalStart, `{"kind":"interval_start"}`},
		{EventIntervalEnd, `{"kind":"interval_end"}`},
	} {
		b, err := json.Marshal(line{tc.kind})
		if err != nil || string(b) != tc.json {
			t.Errorf("%v: %s, %v, want %s", tc.kind, b, err, tc.json)
		}
		var got line
		if err := json.Unmarshal(b, &got); err != nil || got.Kind != tc.kind {
			t.Errorf("%s read back as %v, %v", b, got.Kind, err)
		}
		var k EventKind = 9
		if err := k.UnmarshalText([]byte(tc.kind.String())); err != nil || k != tc.kind {
			t.Errorf("UnmarshalText(%q) = %v, %v", tc.kind.String(), k, err)
		}
	}
	if _, err := json.Marshal(line{7}); err == nil {
		t.Error("an unknown kind marshals")
	}
	var k EventKind
	if err := k.UnmarshalText([]byte("interval")); err == nil {
		t.Errorf("UnmarshalText(interval) = %v, want an error", k)
	}
}
