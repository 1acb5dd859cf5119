// Package accuracy scores the responses of an accuracy run against ground
// truth, and reads mlperf_log_accuracy.json back.
package accuracy

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"aimeter/loadgen"
)

// Score is the outcome of a scorer.
type Score struct {
	Metric  string  // e.g. "top-1"
	Value   float64 // fraction in [0, 1]
	Correct int
	Scored  int // distinct samples scored
	Missing int // samples of the set without a response
}

// Top1 scores classification responses whose data is the predicted class as
// one byte. Each QSL sample counts once, with its first response (an
// accuracy run issues every sample once; MultiStream padding may repeat
// some). labels gives the ground truth of each of the n samples of the set.
func Top1(entries []loadgen.AccuracyEntry, n int, label func(index uint64) uint8) (Score, error) {
	seen := make([]bool, n)
	s := Score{Metric: "top-1"}
	for _, e := range entries {
		if e.QSLIndex >= uint64(n) {
			return s, fmt.Errorf("accuracy log entry seq_id %d: qsl_idx %d is outside the data set of %d samples", e.SeqID, e.QSLIndex, n)
		}
		if len(e.Data) != 1 {
			return s, fmt.Errorf("accuracy log entry seq_id %d: %d bytes of data, want one class byte", e.SeqID, len(e.Data))
		}
		if seen[e.QSLIndex] {
			continue
		}
		seen[e.QSLIndex] = true
		s.Scored++
		if e.Data[0] == label(e.QSLIndex) {
			s.Correct++
		}
	}
	s.Missing = n - s.Scored
	if s.Scored == 0 {
		return s, errors.New("no responses to score")
	}
	s.Value = float64(s.Correct) / float64(n)
	return s, nil
}

// ReadLog reads mlperf_log_accuracy.json: a JSON array of objects with
// seq_id, qsl_idx, data (hex) and optionally token_data and token_count.
func ReadLog(r io.Reader) ([]loadgen.AccuracyEntry, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("accuracy log: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("accuracy log: want a JSON array, got %v", tok)
	}
	var out []loadgen.AccuracyEntry
	for dec.More() {
		var raw struct {
			SeqID      *uint64 `json:"seq_id"`
			QSLIdx     *uint64 `json:"qsl_idx"`
			Data       *string `json:"data"`
			TokenData  *string `json:"token_data"`
			TokenCount *int64  `json:"token_count"`
		}
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("accuracy log entry %d: %w", len(out), err)
		}
		if raw.SeqID == nil || raw.QSLIdx == nil || raw.Data == nil {
			return nil, fmt.Errorf("accuracy log entry %d: seq_id, qsl_idx and data are required", len(out))
		}
		e := loadgen.AccuracyEntry{SeqID: *raw.SeqID, QSLIndex: *raw.QSLIdx}
		if e.Data, err = hex.DecodeString(*raw.Data); err != nil {
			return nil, fmt.Errorf("accuracy log entry %d (seq_id %d): data: %w", len(out), e.SeqID, err)
		}
		if raw.TokenCount != nil {
			e.HasTokens, e.TokenCount = true, *raw.TokenCount
		}
		if raw.TokenData != nil {
			if e.TokenData, err = hex.DecodeString(*raw.TokenData); err != nil {
				return nil, fmt.Errorf("accuracy log entry %d (seq_id %d): token_data: %w", len(out), e.SeqID, err)
			}
		}
		out = append(out, e)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("accuracy log: unterminated array: %w", err)
	}
	return out, nil
}
