package mllog

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"aimeter/train"
)

// Trial is one run of an MLPerf Training program: the events of its log and
// the parser's counts. aimeter train --trials N runs the program N times
// and --logs reads N result files; either way each run is one Trial.
type Trial struct {
	// Events are the run's events as parsed (Trial and Time are set by
	// MergeTrials).
	Events []train.Event
	// Stats are the parser's counts for the run's log.
	Stats Stats
}

// InfoValue returns the value of an MLLOG key that makes no event, such as
// submission_benchmark, as text: a JSON string unquoted, anything else as
// its JSON text; "" when the log did not have the key.
func (s Stats) InfoValue(key string) string {
	raw, ok := s.Info[key]
	if !ok {
		return ""
	}
	var str string
	if json.Unmarshal([]byte(raw), &str) == nil {
		return str
	}
	return raw
}

// MergeTrials puts the events of several runs on one clock and numbers
// them as trials 1, 2, …, in the order given: every event's Trial is its
// run's number (whatever aimeter_trial_* records the log had), and its
// Time is its Wall minus origin, the earliest Wall of any event, so that
// the times between runs are the logged ones (MLLOG's time_ms), never when
// a file was read. Events without a Wall keep their Time. The result is
// in the order given, run by run.
func MergeTrials(trials []Trial) (events []train.Event, origin time.Time) {
	for _, t := range trials {
		for _, e := range t.Events {
			if !e.Wall.IsZero() && (origin.IsZero() || e.Wall.Before(origin)) {
				origin = e.Wall
			}
		}
	}
	n := 0
	for _, t := range trials {
		n += len(t.Events)
	}
	events = make([]train.Event, 0, n)
	for i, t := range trials {
		for _, e := range t.Events {
			e.Trial = i + 1
			if !e.Wall.IsZero() {
				e.Time = e.Wall.Sub(origin).Nanoseconds()
			}
			events = append(events, e)
		}
	}
	return events, origin
}

// ReadFile parses the MLLOG records of a result log, such as a submission
// folder's result_0.txt, as one trial. A file with no record at all is an
// error: it is not an MLPerf log.
func ReadFile(path string, opts Options) (Trial, error) {
	fh, err := os.Open(path)
	if err != nil {
		return Trial{}, err
	}
	defer fh.Close()
	return ReadTrial(fh, path, opts)
}

// ReadTrial parses r, named name in errors, as one trial (see ReadFile).
func ReadTrial(r io.Reader, name string, opts Options) (Trial, error) {
	evs, st, err := ParseAll(r, opts)
	if err != nil {
		return Trial{}, fmt.Errorf("%s: %w", name, err)
	}
	if st.Records == 0 {
		return Trial{}, fmt.Errorf("%s: no %s record in %d lines: not an MLPerf Training log", name, Marker, st.Lines)
	}
	return Trial{Events: evs, Stats: st}, nil
}
