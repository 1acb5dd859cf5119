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
}

// sendEntry is a SendTime before its id is formatted.
type sendEntry struct {
	seq   uint64
	chat  bool
	chunk int32
	ns    int64
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

func (l *sendLog) add(seq uint64, chat bool, chunk int, ns int64) {
	if l == nil {
		return
	}
	e := sendEntry{seq: seq, chat: chat, chunk: int32(chunk), ns: ns}
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
			out = append(out, SendTime{ID: e.id(), Chunk: int(e.chunk), UnixNano: e.ns})
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
