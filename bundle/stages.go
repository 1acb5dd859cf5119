package bundle

import (
	"bufio"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"

	"aimeter/loadgen"
)

// StagesHeader is the header line of stages.csv. Times are nanoseconds on the
// clock named in the clock column: "test" (the run's clock, comparable with
// records.csv) or "sut" (the SUT's own clock; only differences count).
const StagesHeader = "seq_id,clock,node,received_ns,preprocess_start_ns,preprocess_end_ns,inference_start_ns,inference_end_ns,postprocess_start_ns,postprocess_end_ns,result_sent_ns"

// WriteStages writes stages.csv: one row per record, in the order of records,
// pairing each record with the stage times at the same position.
func WriteStages(w io.Writer, records iter.Seq[loadgen.Record], stages iter.Seq[loadgen.StageTimes]) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if _, err := bw.WriteString(StagesHeader + "\n"); err != nil {
		return err
	}
	next, stop := iter.Pull(stages)
	defer stop()
	buf := make([]byte, 0, 256)
	for rec := range records {
		st, ok := next()
		if !ok {
			return fmt.Errorf("stage times end before record seq_id %d", rec.SeqID)
		}
		buf = strconv.AppendUint(buf[:0], rec.SeqID, 10)
		if st.Clock == loadgen.SUTClock {
			buf = append(buf, ",sut,"...)
		} else {
			buf = append(buf, ",test,"...)
		}
		buf = strconv.AppendUint(buf, uint64(st.Node), 10)
		for _, v := range [...]int64{st.Received, st.PreprocessStart, st.PreprocessEnd, st.InferenceStart,
			st.InferenceEnd, st.PostprocessStart, st.PostprocessEnd, st.ResultSent} {
			buf = append(buf, ',')
			if v != loadgen.NoTime {
				buf = strconv.AppendInt(buf, v, 10)
			}
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadStages reads stages.csv back: the seq_id of each row and its stage times.
func ReadStages(r io.Reader) ([]uint64, []loadgen.StageTimes, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	if !sc.Scan() || strings.TrimRight(sc.Text(), "\r") != StagesHeader {
		return nil, nil, fmt.Errorf("stages.csv:1: want the header %q", StagesHeader)
	}
	var seqs []uint64
	var out []loadgen.StageTimes
	for line := 2; sc.Scan(); line++ {
		f := strings.Split(strings.TrimRight(sc.Text(), "\r"), ",")
		if len(f) != 11 {
			return nil, nil, fmt.Errorf("stages.csv:%d: %d fields, want 11", line, len(f))
		}
		seq, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("stages.csv:%d: seq_id: %v", line, err)
		}
		st := loadgen.NoStages
		switch f[1] {
		case "test":
		case "sut":
			st.Clock = loadgen.SUTClock
		default:
			return nil, nil, fmt.Errorf("stages.csv:%d: clock %q is not test or sut", line, f[1])
		}
		node, err := strconv.ParseUint(f[2], 10, 32)
		if err != nil {
			return nil, nil, fmt.Errorf("stages.csv:%d: node: %v", line, err)
		}
		st.Node = uint32(node)
		ptrs := [...]*int64{&st.Received, &st.PreprocessStart, &st.PreprocessEnd, &st.InferenceStart,
			&st.InferenceEnd, &st.PostprocessStart, &st.PostprocessEnd, &st.ResultSent}
		for k, p := range ptrs {
			if f[3+k] == "" {
				continue
			}
			if *p, err = strconv.ParseInt(f[3+k], 10, 64); err != nil {
				return nil, nil, fmt.Errorf("stages.csv:%d: field %d: %v", line, 4+k, err)
			}
		}
		seqs = append(seqs, seq)
		out = append(out, st)
	}
	return seqs, out, sc.Err()
}
