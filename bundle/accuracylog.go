package bundle

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"aimeter/loadgen"
)

// The accuracy log, mlperf_log_accuracy.json (AccuracyFile): LoadGen's
// responses, written and read here together.

// WriteAccuracyLog writes mlperf_log_accuracy.json with LoadGen's exact
// spacing: "[", then each entry on its own line as
//
//	{ "seq_id" : S, "qsl_idx" : I, "data" : "HEX" }
//
// separated by ",\n", then "\n]\n" (an empty log is "[\n]\n"). HEX is
// uppercase, two characters per byte. Entries with HasTokens add
// `, "token_count" : N`, preceded by `, "token_data" : "HEX"` when TokenData
// is non-nil (LoadGen writes token_data for every scenario but Offline, so
// the core sets TokenData, possibly empty, exactly then). The spacing
// matters: TEST01's --unixmode greps `"qsl_idx" : N,`.
//
// The file is streamed through a small buffer; no entry is formatted as a
// whole string.
func WriteAccuracyLog(w io.Writer, entries []loadgen.AccuracyEntry) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var num [24]byte
	bw.WriteByte('[')
	for i := range entries {
		e := &entries[i]
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n{ \"seq_id\" : ")
		bw.Write(strconv.AppendUint(num[:0], e.SeqID, 10))
		bw.WriteString(", \"qsl_idx\" : ")
		bw.Write(strconv.AppendUint(num[:0], e.QSLIndex, 10))
		bw.WriteString(", \"data\" : \"")
		writeHex(bw, e.Data)
		bw.WriteByte('"')
		if e.HasTokens {
			if e.TokenData != nil {
				bw.WriteString(", \"token_data\" : \"")
				writeHex(bw, e.TokenData)
				bw.WriteByte('"')
			}
			bw.WriteString(", \"token_count\" : ")
			bw.Write(strconv.AppendInt(num[:0], e.TokenCount, 10))
		}
		bw.WriteString(" }")
	}
	bw.WriteString("\n]\n")
	return bw.Flush()
}

// writeHex streams b as uppercase hex in chunks, so a large response never
// becomes one big string.
func writeHex(w *bufio.Writer, b []byte) {
	var chunk [512]byte
	for len(b) > 0 {
		n := min(len(b), len(chunk)/2)
		w.Write(appendHex(chunk[:0], b[:n]))
		b = b[n:]
	}
}

// appendHex appends b as uppercase hexadecimal, two characters per byte in
// memory order (LoadGen's LogBinaryAsHexString).
func appendHex(dst []byte, b []byte) []byte {
	const digits = "0123456789ABCDEF"
	for _, c := range b {
		dst = append(dst, digits[c>>4], digits[c&0xF])
	}
	return dst
}

// ReadAccuracyLog reads mlperf_log_accuracy.json, as WriteAccuracyLog or
// LoadGen wrote it: a JSON array of objects with seq_id, qsl_idx, data
// (hex) and optionally token_data and token_count.
func ReadAccuracyLog(r io.Reader) ([]loadgen.AccuracyEntry, error) {
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
