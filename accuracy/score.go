package accuracy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// A metric is one row of the `aimeter accuracy score` table: a name, a
// one-line description, and a function from the JSON input object to the
// output value (a struct with snake_case JSON tags).
type metric struct {
	name  string
	doc   string
	score func(input []byte) (any, error)
}

// metrics is the table of scorers, in the order they are listed. Each
// entry's input and output fields are documented on its input and output
// types.
var metrics = []metric{}

// Metrics returns the names of the scorers that ScoreJSON knows, sorted,
// each with its one-line description.
func Metrics() [][2]string {
	out := make([][2]string, 0, len(metrics))
	for _, m := range metrics {
		out = append(out, [2]string{m.name, m.doc})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// ScoreJSON scores one JSON input object with the named metric (a name of
// Metrics) and returns the output object, ready for json.Marshal. Fields
// the metric does not know are ignored; missing, mismatched or non-finite
// inputs are an error that names the field and the entry.
func ScoreJSON(name string, input []byte) (any, error) {
	for _, m := range metrics {
		if m.name == name {
			return m.score(input)
		}
	}
	names := make([]string, 0, len(metrics))
	for _, m := range Metrics() {
		names = append(names, m[0])
	}
	return nil, fmt.Errorf("unknown metric %q (known: %s)", name, strings.Join(names, ", "))
}

// decodeInput decodes one JSON object into v. Unknown fields are allowed;
// trailing data after the object is an error.
func decodeInput(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("input: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("input: more than one JSON value")
	}
	return nil
}

// checkFinite returns an error naming field[i] when x is NaN or infinite.
func checkFinite(field string, i int, x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("%s[%d] is %v, want a finite number", field, i, x)
	}
	return nil
}
