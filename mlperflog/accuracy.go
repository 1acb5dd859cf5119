package mlperflog

import (
	"bufio"
	"io"
	"strconv"

	"aimeter/loadgen"
)

// WriteAccuracy writes mlperf_log_accuracy.json with LoadGen's exact
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
func WriteAccuracy(w io.Writer, entries []loadgen.AccuracyEntry) error {
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
