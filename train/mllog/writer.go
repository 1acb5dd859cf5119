package mllog

import "bytes"

// Writer is an io.Writer that splits what is written into lines and feeds
// them to a Parser. It holds at most one partial line of Options.MaxLine
// bytes, so memory is bounded whatever is written. A Writer is not safe
// for concurrent use; give each stream (stdout, stderr) its own, sharing
// the parser under a lock if need be (RunCommand does).
type Writer struct {
	p    *Parser
	buf  []byte
	long int64 // bytes of a line too long to keep; -1 when not in one
	// n counts the lines of this Writer's stream, which number its quotes.
	n int64
}

// NewWriter returns a Writer feeding p, numbering the lines of its own
// stream.
func NewWriter(p *Parser) *Writer {
	return &Writer{p: p, long: -1}
}

func (w *Writer) line(l []byte) {
	w.n++
	w.p.lineAt(w.n, l)
}

func (w *Writer) lng(n int64) {
	w.n++
	w.p.LineLong(n)
}

// Write splits b into lines. It never fails.
func (w *Writer) Write(b []byte) (int, error) {
	n := len(b)
	max := w.p.opts.MaxLine
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			w.partial(b, max)
			break
		}
		seg := b[:i]
		b = b[i+1:]
		switch {
		case w.long >= 0:
			w.lng(w.long + int64(len(seg)))
			w.long = -1
		case len(w.buf) > 0:
			if len(w.buf)+len(seg) > max {
				w.lng(int64(len(w.buf) + len(seg)))
			} else {
				w.buf = append(w.buf, seg...)
				w.line(trimCR(w.buf))
			}
			w.buf = w.buf[:0]
		default:
			w.line(trimCR(seg))
		}
	}
	return n, nil
}

// partial keeps the unterminated end of a write.
func (w *Writer) partial(b []byte, max int) {
	if w.long >= 0 {
		w.long += int64(len(b))
		return
	}
	if len(w.buf)+len(b) > max {
		w.long = int64(len(w.buf) + len(b))
		w.buf = w.buf[:0]
		return
	}
	w.buf = append(w.buf, b...)
}

// Close feeds the last line when it has no terminator and emits the
// events the parser still holds.
func (w *Writer) Close() error {
	w.flush()
	w.p.Close()
	return nil
}

// flush feeds the last unterminated line.
func (w *Writer) flush() {
	switch {
	case w.long >= 0:
		w.lng(w.long)
		w.long = -1
	case len(w.buf) > 0:
		w.line(trimCR(w.buf))
		w.buf = w.buf[:0]
	}
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}
