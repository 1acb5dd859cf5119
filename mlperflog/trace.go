package mlperflog

import (
	"bufio"
	"io"
	"iter"
	"os"
	"sort"
	"strconv"

	"aimeter/loadgen"
)

// WriteTrace writes mlperf_log_trace.json, a Chrome trace (chrome://tracing,
// Perfetto) in LoadGen's layout: the line {"traceEvents":[, one event per
// line ending in ",", a {"name":"LastTrace"} terminator and the otherData
// footer. Times are microseconds with three decimals from the trace origin,
// r.StartTime.
//
// Every completed sample of r.Records() gets LoadGen's async "Sample" pair:
// a begin event at its scheduled time with args sample_seq, query_seq,
// sample_idx, issue_start_ns and complete_ns (both from the scheduled time)
// and an end event at its completion; Server samples also get LoadGen's
// "Latency" counter (issue_delay, issue_to_done). Lost samples, which
// LoadGen never traces, are left out, and so are the scoped spans
// (IssueQuery, QuerySamplesComplete, …). Events follow issue order, not
// completion order. The footer's version names aimeter, not LoadGen.
func WriteTrace(w io.Writer, r *loadgen.Result) error {
	return writeTrace(w, r, r.Records(), os.Getpid())
}

func writeTrace(w io.Writer, r *loadgen.Result, recs iter.Seq[loadgen.Record], pid int) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	origin := r.StartTime.UnixNano()
	if r.StartTime.IsZero() {
		origin = 0
	}
	server := r.Effective.Scenario == loadgen.Server
	passes := r.Passes

	bw.WriteString("{\"traceEvents\":[\n")
	b := make([]byte, 0, 512)
	cur := -1
	for rec := range recs {
		if rec.CompletedNs == loadgen.NoTime || rec.ScheduledNs == loadgen.NoTime {
			continue
		}
		// The pass a record belongs to gives its wall-clock start.
		if cur < 0 || rec.SeqID < passes[cur].FirstSeq || rec.SeqID >= passes[cur].EndSeq {
			cur = findPass(passes, rec.SeqID)
		}
		var base int64 // pass start, relative to the trace origin
		if cur >= 0 && passes[cur].StartUnixNs != 0 {
			base = passes[cur].StartUnixNs - origin
		}
		sched := base + rec.ScheduledNs
		issueDelay := rec.IssuedNs - rec.ScheduledNs
		if rec.IssuedNs == loadgen.NoTime {
			issueDelay = 0
		}
		latency := rec.CompletedNs - rec.ScheduledNs

		if server {
			b = append(b[:0], `{"name":"Latency","ph": "C","pid":`...)
			b = strconv.AppendInt(b, int64(pid), 10)
			b = append(b, `,"ts":`...)
			b = appendMicros(b, sched)
			b = append(b, `,"args":{ "issue_delay":`...)
			b = strconv.AppendInt(b, issueDelay, 10)
			b = append(b, `,"issue_to_done":`...)
			b = strconv.AppendInt(b, rec.CompletedNs-rec.IssuedNs, 10)
			b = append(b, "}},\n"...)
			bw.Write(b)
		}

		b = append(b[:0], `{"name":"Sample","cat":"default","ph":"b","pid":`...)
		b = strconv.AppendInt(b, int64(pid), 10)
		b = append(b, `,"id":`...)
		b = strconv.AppendUint(b, rec.SeqID, 10)
		b = append(b, `,"ts":`...)
		b = appendMicros(b, sched)
		b = append(b, `,"args":{"sample_seq":`...)
		b = strconv.AppendUint(b, rec.SeqID, 10)
		b = append(b, `,"query_seq":`...)
		b = strconv.AppendUint(b, rec.QueryID, 10)
		b = append(b, `,"sample_idx":`...)
		b = strconv.AppendUint(b, rec.SampleIndex, 10)
		b = append(b, `,"issue_start_ns":`...)
		b = strconv.AppendInt(b, issueDelay, 10)
		b = append(b, `,"complete_ns":`...)
		b = strconv.AppendInt(b, latency, 10)
		b = append(b, "}},\n"...)
		b = append(b, `{"name":"Sample","cat":"default","ph":"e", "pid":`...)
		b = strconv.AppendInt(b, int64(pid), 10)
		b = append(b, `,"id":`...)
		b = strconv.AppendUint(b, rec.SeqID, 10)
		b = append(b, `,"ts":`...)
		b = appendMicros(b, base+rec.CompletedNs)
		b = append(b, "},\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	b = append(b[:0], "{\"name\":\"LastTrace\"}\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\n\"ts\":"...)
	b = appendMicros(b, origin)
	b = append(b, ",\n\"version\":\"aimeter\"\n}\n}\n"...)
	bw.Write(b)
	return bw.Flush()
}

// findPass returns the index of the pass whose sequence ids hold seq, or -1.
func findPass(passes []loadgen.PassInfo, seq uint64) int {
	i := sort.Search(len(passes), func(i int) bool { return passes[i].EndSeq > seq })
	if i < len(passes) && passes[i].FirstSeq <= seq {
		return i
	}
	return -1
}
