package netbench

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"aimeter/bundle"
	"aimeter/serve"
)

// ClientStream is one streamed response as the client recorded it: when it
// was issued and when each chunk with content arrived, in Unix nanoseconds.
type ClientStream struct {
	IssuedUnixNs int64
	TokenUnixNs  []int64
}

// ClientStreams returns the streamed responses of a run bundle in the order
// they were issued, their run-clock times (records.parquet, tokens.parquet) turned
// into wall-clock time with the start of their pass (settings.json's
// passes[].start_unix_ns). Records without token times are left out.
func ClientStreams(b *bundle.Bundle) []ClientStream {
	r := b.Result
	start := func(seq uint64) (int64, bool) {
		for _, p := range r.Passes {
			if seq >= p.FirstSeq && seq < p.EndSeq {
				return p.StartUnixNs, true
			}
		}
		return 0, false
	}
	issued := map[uint64]int64{}
	for rec := range r.Records() {
		issued[rec.SeqID] = rec.IssuedNs
	}
	var out []ClientStream
	for seq, times := range r.TokenTimes() {
		origin, ok := start(seq)
		if !ok || len(times) == 0 {
			continue
		}
		cs := ClientStream{IssuedUnixNs: origin + issued[seq], TokenUnixNs: make([]int64, len(times))}
		for i, t := range times {
			cs.TokenUnixNs[i] = origin + t
		}
		out = append(out, cs)
	}
	slices.SortStableFunc(out, func(a, b ClientStream) int { return cmp.Compare(a.IssuedUnixNs, b.IssuedUnixNs) })
	return out
}

// ReadSendLog reads the JSON lines of `aimeter serve openai --send-log`.
func ReadSendLog(r io.Reader) ([]serve.SendTime, error) {
	var out []serve.SendTime
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var s serve.SendTime
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			return nil, fmt.Errorf("send log line %d: %w", n, err)
		}
		if _, err := responseSeq(s.ID); err != nil {
			return nil, fmt.Errorf("send log line %d: %w", n, err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("send log: %w", err)
	}
	return out, nil
}

// responseSeq is the arrival number in a simulator response id
// ("chatcmpl-7", "cmpl-7").
func responseSeq(id string) (uint64, error) {
	i := strings.LastIndexByte(id, '-')
	n, err := strconv.ParseUint(id[i+1:], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("response id %q: no arrival number after the last '-'", id)
	}
	return n, nil
}

// StreamJoin is the client-minus-server time of every joined chunk.
type StreamJoin struct {
	// Requests and Tokens count the joined responses and chunks.
	Requests, Tokens int
	// DeltasNs holds, per joined chunk, the client's arrival time minus
	// the server's send time, in nanoseconds, sorted.
	DeltasNs []int64
}

// Percentile returns the q-quantile (0 ≤ q ≤ 1) of the deltas, nearest
// rank; 0 when there are none.
func (j StreamJoin) Percentile(q float64) int64 {
	if len(j.DeltasNs) == 0 {
		return 0
	}
	i := int(q*float64(len(j.DeltasNs))+0.5) - 1
	return j.DeltasNs[min(max(i, 0), len(j.DeltasNs)-1)]
}

// AbsPercentile returns the q-quantile of the deltas' absolute values
// (a server that notes its send time after the write can be passed by the
// client's arrival: a negative delta is as far off as a positive one).
func (j StreamJoin) AbsPercentile(q float64) int64 {
	abs := make([]int64, len(j.DeltasNs))
	for i, d := range j.DeltasNs {
		abs[i] = max(d, -d)
	}
	slices.Sort(abs)
	return StreamJoin{DeltasNs: abs}.Percentile(q)
}

// JoinStreams pairs the client's streams with the server's send log and
// returns the per-chunk differences. Neither side records a shared request
// id (the client keeps no response id; the server no prompt), so the pairing
// is by order: the n-th stream the client issued is the n-th response the
// server numbered. That holds only when one stream is in flight at a time
// (SingleStream, or --concurrency 1) against a server that served nothing
// else; JoinStreams refuses counts that differ. Within a response, the
// client's k-th content chunk is the server's k-th content event: the
// server's events also count a chat response's leading role event (skipped)
// and the finish, usage and [DONE] events that follow the content (not
// reached). A response whose server side has fewer events than the client
// has chunks is an error.
func JoinStreams(client []ClientStream, sends []serve.SendTime) (StreamJoin, error) {
	type resp struct {
		seq  uint64
		chat bool
		at   []int64 // by chunk index
	}
	byID := map[string]*resp{}
	var resps []*resp
	for _, s := range sends {
		r := byID[s.ID]
		if r == nil {
			seq, err := responseSeq(s.ID)
			if err != nil {
				return StreamJoin{}, err
			}
			r = &resp{seq: seq, chat: strings.HasPrefix(s.ID, "chatcmpl-")}
			byID[s.ID] = r
			resps = append(resps, r)
		}
		if s.Chunk < 0 || s.Chunk > 1<<20 {
			return StreamJoin{}, fmt.Errorf("response %s: chunk index %d out of range", s.ID, s.Chunk)
		}
		for len(r.at) <= s.Chunk {
			r.at = append(r.at, 0)
		}
		r.at[s.Chunk] = s.UnixNano
	}
	slices.SortFunc(resps, func(a, b *resp) int { return cmp.Compare(a.seq, b.seq) })
	if len(resps) != len(client) {
		return StreamJoin{}, fmt.Errorf("the server sent %d responses and the client recorded %d streams: the join by order needs one stream at a time and a server that served nothing else", len(resps), len(client))
	}
	var j StreamJoin
	for i, c := range client {
		r := resps[i]
		first := 0
		if r.chat {
			first = 1 // the role event carries no content
		}
		if first+len(c.TokenUnixNs) > len(r.at) {
			return StreamJoin{}, fmt.Errorf("stream %d (server response %d): the client has %d content chunks, the server sent %d events", i+1, r.seq, len(c.TokenUnixNs), len(r.at))
		}
		for k, t := range c.TokenUnixNs {
			s := r.at[first+k]
			if s == 0 {
				return StreamJoin{}, fmt.Errorf("stream %d (server response %d): event %d missing from the send log", i+1, r.seq, first+k)
			}
			j.DeltasNs = append(j.DeltasNs, t-s)
		}
		j.Requests++
		j.Tokens += len(c.TokenUnixNs)
	}
	slices.Sort(j.DeltasNs)
	return j, nil
}
