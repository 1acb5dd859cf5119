package serve

import (
	"io"
	"strconv"
	"sync"
)

// SendTime is one entry of the simulator's send-time log: the moment just
// after one SSE event (or a whole non-streaming body) was written and
// flushed to the connection.
type SendTime struct {
	// ID is the response id the client sees ("cmpl-7", "chatcmpl-7").
	ID string `json:"id"`
	// Chunk is the event's index in its response, from 0: every `data:`
	// line counts, the chat role event, the finish and usage events and
	// `[DONE]` included. A non-streaming response is chunk 0.
	Chunk int `json:"chunk"`
	// UnixNano is the wall-clock time, Unix nanoseconds.
	UnixNano int64 `json:"unix_ns"`
	// Tokens is the output tokens the event carried: 1 for a token event
	// (a malformed one included), 0 for the chat role event and the
	// finish, usage and `[DONE]` events, every token for a non-streaming
	// body. Left out of the JSON line when 0. The sum over the events sent
	// in a time window is the server's own count of tokens sent in it.
	Tokens int `json:"tokens,omitempty"`
	// ArrivalUnixNano, on chunk 0 of each response only (0 on the others,
	// and left out of their JSON lines), is when the request arrived: the
	// wall-clock time, Unix nanoseconds, at which the handler started,
	// after the request's headers were read and before its body was.
	ArrivalUnixNano int64 `json:"arrival_unix_ns,omitempty"`
}

// sendEntry is a SendTime before its id is formatted.
type sendEntry struct {
	seq     uint64
	chat    bool
	chunk   int32
	tokens  int32
	ns      int64
	arrival int64 // chunk 0 only
}

func (e sendEntry) id() string {
	p := "cmpl-"
	if e.chat {
		p = "chatcmpl-"
	}
	return p + strconv.FormatUint(e.seq, 10)
}

// sendLog is a bounded ring of send times, optionally copied to a JSONL
// writer. Adding an entry allocates nothing.
type sendLog struct {
	mu   sync.Mutex
	ring []sendEntry
	next int  // where the next entry goes
	full bool // the ring has wrapped
	w    io.Writer
	werr error  // the first write error; writing stops after it
	line []byte // scratch for one JSONL line
}

// add logs one event of response seq: its index, the tokens it carried,
// the time it was sent and the request's arrival time (kept for chunk 0
// only).
func (l *sendLog) add(seq uint64, chat bool, chunk, tokens int, ns, arrival int64) {
	if l == nil {
		return
	}
	if chunk != 0 {
		arrival = 0
	}
	e := sendEntry{seq: seq, chat: chat, chunk: int32(chunk), tokens: int32(tokens), ns: ns, arrival: arrival}
	l.mu.Lock()
	if len(l.ring) > 0 {
		l.ring[l.next] = e
		l.next++
		if l.next == len(l.ring) {
			l.next, l.full = 0, true
		}
	}
	if l.w != nil && l.werr == nil {
		b := append(l.line[:0], `{"id":"`...)
		if chat {
			b = append(b, "chatcmpl-"...)
		} else {
			b = append(b, "cmpl-"...)
		}
		b = strconv.AppendUint(b, seq, 10)
		b = append(b, `","chunk":`...)
		b = strconv.AppendInt(b, int64(chunk), 10)
		b = append(b, `,"unix_ns":`...)
		b = strconv.AppendInt(b, ns, 10)
		if tokens != 0 {
			b = append(b, `,"tokens":`...)
			b = strconv.AppendInt(b, int64(tokens), 10)
		}
		if arrival != 0 {
			b = append(b, `,"arrival_unix_ns":`...)
			b = strconv.AppendInt(b, arrival, 10)
		}
		b = append(b, "}\n"...)
		l.line = b
		_, l.werr = l.w.Write(b)
	}
	l.mu.Unlock()
}

// entries returns the ring's entries, oldest first.
func (l *sendLog) entries() []SendTime {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []SendTime
	emit := func(es []sendEntry) {
		for _, e := range es {
			out = append(out, SendTime{ID: e.id(), Chunk: int(e.chunk), UnixNano: e.ns, Tokens: int(e.tokens), ArrivalUnixNano: e.arrival})
		}
	}
	if l.full {
		emit(l.ring[l.next:])
	}
	emit(l.ring[:l.next])
	return out
}

// err returns the first error writing the JSONL copy.
func (l *sendLog) err() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.werr
}
