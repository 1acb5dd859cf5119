package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// MarshalText writes the scenario's LoadGen name ("Server"), so that JSON
// such as settings.json reads like the detail log. A value outside the four
// scenarios is written as its number rather than failing the whole
// document; UnmarshalText rejects it, as it is no scenario.
func (s Scenario) MarshalText() ([]byte, error) {
	if s < SingleStream || s > Offline {
		return strconv.AppendInt(nil, int64(s), 10), nil
	}
	return []byte(s.String()), nil
}

// UnmarshalText accepts what ParseScenario accepts, or the C++ enum number
// ("2").
func (s *Scenario) UnmarshalText(text []byte) error {
	if n, err := strconv.ParseInt(string(text), 10, 64); err == nil {
		if n < int64(SingleStream) || n > int64(Offline) {
			return fmt.Errorf("unknown scenario %d (want 0 SingleStream, 1 MultiStream, 2 Server or 3 Offline)", n)
		}
		*s = Scenario(n)
		return nil
	}
	v, err := ParseScenario(string(text))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// UnmarshalJSON accepts a JSON string (see UnmarshalText) or number.
func (s *Scenario) UnmarshalJSON(data []byte) error {
	return unmarshalEnumJSON(data, s.UnmarshalText)
}

// MarshalText writes the mode's LoadGen name ("PerformanceOnly"); a value
// outside the four modes is written as its number (and rejected when read).
func (m Mode) MarshalText() ([]byte, error) {
	if m < SubmissionRun || m > FindPeakPerformance {
		return strconv.AppendInt(nil, int64(m), 10), nil
	}
	return []byte(m.String()), nil
}

// UnmarshalText accepts what ParseMode accepts, or the C++ enum number
// ("2", as in mlperf.conf's mode key).
func (m *Mode) UnmarshalText(text []byte) error {
	if n, err := strconv.ParseInt(string(text), 10, 64); err == nil {
		if n < int64(SubmissionRun) || n > int64(FindPeakPerformance) {
			return fmt.Errorf("unknown mode %d (want 0 SubmissionRun, 1 AccuracyOnly, 2 PerformanceOnly or 3 FindPeakPerformance)", n)
		}
		*m = Mode(n)
		return nil
	}
	v, err := ParseMode(string(text))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// UnmarshalJSON accepts a JSON string (see UnmarshalText) or number.
func (m *Mode) UnmarshalJSON(data []byte) error {
	return unmarshalEnumJSON(data, m.UnmarshalText)
}

// unmarshalEnumJSON decodes a JSON string or integer and hands its text to
// set. null leaves the value unchanged, as encoding/json does.
func unmarshalEnumJSON(data []byte, set func([]byte) error) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		return nil
	case len(data) > 0 && data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		return set([]byte(s))
	}
	if _, err := strconv.ParseInt(string(data), 10, 64); err != nil {
		return fmt.Errorf("want a name or an integer, got %s", data)
	}
	return set(data)
}
