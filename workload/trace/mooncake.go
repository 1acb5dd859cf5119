package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// mooncakeFields name the fields of a Mooncake line in errors.
var mooncakeFields = map[string]string{"time": "timestamp", "input": "input_length", "output": "output_length", "hash_ids": "hash_ids"}

// parseMooncake reads Mooncake JSONL: one object per line with timestamp
// (ms), input_length, output_length and hash_ids; other members are
// ignored, blank lines skipped.
func (t *Trace) parseMooncake(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	field := func(f string) string { return mooncakeFields[f] }
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if line == 1 {
			b = trimBOM(b)
		}
		if len(b) == 0 {
			continue
		}
		q, err := t.mooncakeLine(b, line)
		if err != nil {
			return err
		}
		if err := t.add(q, field); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &lineError{name: t.Name, line: line + 1, msg: fmt.Sprintf("longer than %d bytes", maxLine)}
		}
		return fmt.Errorf("trace %s: %w", t.Name, err)
	}
	return nil
}

func (t *Trace) mooncakeLine(b []byte, line int) (Request, error) {
	q := Request{Line: line}
	bad := func(field, format string, args ...any) error {
		return &lineError{name: t.Name, line: line, field: field, msg: fmt.Sprintf(format, args...)}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		if err == nil {
			err = errors.New("null")
		}
		return q, &lineError{name: t.Name, line: line, msg: fmt.Sprintf("not a JSON object: %v", err)}
	}
	get := func(key string) (string, error) {
		v, ok := m[key]
		if !ok || string(v) == "null" {
			return "", bad(key, "missing (a Mooncake line has timestamp, input_length, output_length and hash_ids)")
		}
		if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
			return "", bad(key, "%s: want a number", quoteShort(v))
		}
		return string(v), nil
	}
	ts, err := get("timestamp")
	if err != nil {
		return q, err
	}
	if q.AtNs, err = msToNs(ts); err != nil {
		return q, bad("timestamp", "%v", err)
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{"input_length", &q.InputTokens}, {"output_length", &q.OutputTokens}} {
		s, err := get(f.key)
		if err != nil {
			return q, err
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return q, bad(f.key, "%s: want a whole number of tokens", s)
		}
		*f.dst = int(max(min(n, 1<<40), -1)) // the bounds check names it
	}
	v, ok := m["hash_ids"]
	if !ok || string(v) == "null" {
		return q, bad("hash_ids", "missing: the block hash ids decide which prompts share a prefix")
	}
	if err := json.Unmarshal(v, &q.HashIDs); err != nil {
		return q, bad("hash_ids", "want an array of whole numbers: %v", err)
	}
	for i, h := range q.HashIDs {
		if h < 0 {
			return q, bad("hash_ids", "entry %d is %d: hash ids are ≥ 0", i, h)
		}
	}
	if q.InputTokens >= 1 && q.InputTokens <= MaxInputTokens {
		if want := (q.InputTokens + BlockTokens - 1) / BlockTokens; len(q.HashIDs) != want {
			return q, bad("hash_ids", "%d ids for %d input tokens: want %d, one per %d-token block", len(q.HashIDs), q.InputTokens, want, BlockTokens)
		}
	}
	return q, nil
}

// quoteShort quotes at most 40 bytes of v.
func quoteShort(v []byte) string {
	if len(v) > 40 {
		return strconv.Quote(string(v[:40])) + "…"
	}
	return strconv.Quote(string(v))
}
