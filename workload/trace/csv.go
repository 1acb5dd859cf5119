package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// csvColumns are the columns of a CSV trace, in order; the last is
// optional.
var csvColumns = []string{"t_ms", "input_tokens", "output_tokens", "session"}

// csvFields name the fields of a CSV line in errors.
var csvFields = map[string]string{"time": "t_ms", "input": "input_tokens", "output": "output_tokens"}

// parseCSV reads t_ms,input_tokens,output_tokens[,session] lines. A first
// line whose first field is t_ms is a header and must name the columns in
// that order; lines starting with # are comments.
func (t *Trace) parseCSV(r io.Reader) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	cr.ReuseRecord = true
	field := func(f string) string { return csvFields[f] }
	first := true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return &lineError{name: t.Name, line: pe.Line, msg: pe.Err.Error()}
			}
			return fmt.Errorf("trace %s: %w", t.Name, err)
		}
		line, _ := cr.FieldPos(0) // only valid after a successful Read
		if first {
			first = false
			rec[0] = string(trimBOM([]byte(rec[0])))
			if strings.TrimSpace(rec[0]) == csvColumns[0] {
				for i, c := range rec {
					if i >= len(csvColumns) || strings.TrimSpace(c) != csvColumns[i] {
						return &lineError{name: t.Name, line: line, msg: fmt.Sprintf("header column %d is %q: want %s", i+1, c, strings.Join(csvColumns, ","))}
					}
				}
				if len(rec) < 3 {
					return &lineError{name: t.Name, line: line, msg: fmt.Sprintf("header has %d columns: want %s (the last optional)", len(rec), strings.Join(csvColumns, ","))}
				}
				continue
			}
		}
		if len(rec) < 3 || len(rec) > 4 {
			return &lineError{name: t.Name, line: line, msg: fmt.Sprintf("%d fields: want 3 or 4 (%s)", len(rec), strings.Join(csvColumns, ","))}
		}
		q := Request{Line: line}
		if q.AtNs, err = msToNs(rec[0]); err != nil {
			return &lineError{name: t.Name, line: line, field: "t_ms", msg: err.Error()}
		}
		for i, dst := range []*int{&q.InputTokens, &q.OutputTokens} {
			s := strings.TrimSpace(rec[1+i])
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return &lineError{name: t.Name, line: line, field: csvColumns[1+i], msg: fmt.Sprintf("%q: want a whole number of tokens", s)}
			}
			*dst = int(max(min(n, 1<<40), -1))
		}
		if len(rec) == 4 {
			q.Session = strings.TrimSpace(rec[3])
		}
		if err := t.add(q, field); err != nil {
			return err
		}
	}
}
