package bundle

import (
	"bufio"
	"io"
	"strconv"

	"aimeter/loadgen"
)

// WriteRecordsJSONL writes recs as JSON Lines: one object per record, in
// order, with the keys of records.csv's header in its order; a time equal
// to loadgen.NoTime is null, status is "ok", "error" or "lost":
//
//	{"seq_id":0,"query_id":0,"sample_index":5,"scheduled_ns":0,"issued_ns":10,"first_token_ns":null,"completed_ns":99,"tokens":0,"status":"ok"}
func WriteRecordsJSONL(w io.Writer, recs []loadgen.Record) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var b []byte
	for i := range recs {
		r := &recs[i]
		b = append(b[:0], `{"seq_id":`...)
		b = strconv.AppendUint(b, r.SeqID, 10)
		b = append(b, `,"query_id":`...)
		b = strconv.AppendUint(b, r.QueryID, 10)
		b = append(b, `,"sample_index":`...)
		b = strconv.AppendUint(b, r.SampleIndex, 10)
		for k, t := range [4]int64{r.ScheduledNs, r.IssuedNs, r.FirstTokenNs, r.CompletedNs} {
			b = append(b, ',', '"')
			b = append(b, recordFields[3+k]...)
			b = append(b, '"', ':')
			if t == loadgen.NoTime {
				b = append(b, "null"...)
			} else {
				b = strconv.AppendInt(b, t, 10)
			}
		}
		b = append(b, `,"tokens":`...)
		b = strconv.AppendInt(b, r.Tokens, 10)
		b = append(b, `,"status":`...)
		b = strconv.AppendQuote(b, r.Status.String())
		b = append(b, '}', '\n')
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}
