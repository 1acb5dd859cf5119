package openai

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxEventBytes bounds the data of one server-sent event when
// Options.MaxEventBytes is zero.
const DefaultMaxEventBytes = 1 << 20

// ErrEventTooLarge is wrapped by the error of an event (or a line) longer
// than the reader's limit: the stream is abandoned rather than buffered
// without bound.
var ErrEventTooLarge = errors.New("server-sent event too large")

// errPartialEvent: the stream ended (cleanly, at the HTTP level) in the
// middle of a line or an event.
var errPartialEvent = errors.New("stream ended inside an event")

// sseReader reads the events of a text/event-stream body (the WHATWG
// server-sent events format, as OpenAI-compatible servers send it): lines
// end in "\n" or "\r\n" (a lone "\r" is not taken as a line end; no
// OpenAI-compatible server sends one); "data:" lines are joined with "\n";
// comment lines (":") and the other fields (event, id, retry) are skipped;
// a blank line ends an event, and an event without data is skipped. An
// event cut off by the end of the stream is discarded, as the format says.
//
// next returns a slice of the reader's own buffer, valid until the next
// call; it allocates nothing once the buffer has grown to the largest
// event.
type sseReader struct {
	br   *bufio.Reader
	max  int
	data []byte // the event being assembled
	line []byte // a line longer than br's buffer, assembled
	has  bool   // the event has at least one data line
}

func (s *sseReader) reset(br *bufio.Reader, max int) {
	s.br, s.max = br, max
	s.data, s.line, s.has = s.data[:0], s.line[:0], false
}

// readLine returns the next line without its line end. At the end of the
// stream it returns io.EOF (nothing was pending) or errPartialEvent (a
// line without its end); errors of the body itself pass through.
func (s *sseReader) readLine() ([]byte, error) {
	b, err := s.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		s.line = append(s.line[:0], b...)
		for err == bufio.ErrBufferFull {
			if len(s.line) > s.max+16 {
				return nil, fmt.Errorf("%w: a line of more than %d bytes", ErrEventTooLarge, s.max)
			}
			b, err = s.br.ReadSlice('\n')
			s.line = append(s.line, b...)
		}
		b = s.line
	}
	if err != nil {
		if err == io.EOF && len(b) > 0 {
			return nil, errPartialEvent
		}
		return nil, err
	}
	b = b[:len(b)-1]
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b, nil
}

// next returns the data of the next event.
func (s *sseReader) next() ([]byte, error) {
	s.data, s.has = s.data[:0], false
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && s.has {
				// The stream ended inside an event.
				return nil, errPartialEvent
			}
			return nil, err
		}
		if len(line) == 0 {
			if s.has {
				return s.data, nil
			}
			continue
		}
		if line[0] == ':' {
			continue // a comment
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		if string(field) != "data" {
			continue // event, id, retry, or an unknown field
		}
		if s.has {
			s.data = append(s.data, '\n')
		}
		if len(s.data)+len(value) > s.max {
			return nil, fmt.Errorf("%w: more than %d bytes of data", ErrEventTooLarge, s.max)
		}
		s.data = append(s.data, value...)
		s.has = true
	}
}
