package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"aimeter/loadgen"
	"aimeter/sut/netsut"
)

// The HTTP clients an Endpoint can use (Options.HTTPClient).
const (
	// ClientAuto is the specialised HTTP/1.1 client for http:// URLs and
	// net/http for https:// (TLS, and HTTP/2 where the server offers it).
	ClientAuto = "auto"
	// ClientNetHTTP is net/http's Transport for every URL.
	ClientNetHTTP = "net/http"
	// ClientH1 is the specialised HTTP/1.1 client (http:// URLs only).
	ClientH1 = "h1"
)

// h1Client is a plain-text HTTP/1.1 client for the one request an Endpoint
// sends: POST of a JSON body with fixed headers, a response read by the
// calling goroutine straight from the connection (no reader or writer
// goroutine per connection, no channel hops, no header map), keep-alive
// connections reused from an idle pool. No read or write waits without
// bound: a request whose context ends (its deadline, or cancelled) has its
// connection given a past deadline at that moment (context.AfterFunc, no
// timer of the connection per request), and a request without a deadline
// bounds each read by h1IdleTimeout.
type h1Client struct {
	addr   string        // host:port
	head   []byte        // request line and headers, up to "Content-Length: "
	idle   chan *h1Conn  // idle connections, at most MaxConns
	sem    chan struct{} // a token per open connection, when LimitConns; else nil
	dialer net.Dialer
}

// h1BufSize is each connection's read buffer: the longest status or header
// line, and chunk size line, it reads.
const h1BufSize = 8 << 10

// h1MaxHeaderBytes bounds a response's status line and headers together.
const h1MaxHeaderBytes = 64 << 10

// h1IdleTimeout bounds each read of a request without a deadline.
const h1IdleTimeout = 2 * time.Minute

// newH1Client returns a client of the host of u (http://) for path, with
// the headers hdr (in name order) on every request.
func newH1Client(host, path string, hdr map[string][]string, maxConns int, limitConns bool) *h1Client {
	addr := host
	if _, _, err := net.SplitHostPort(host); err != nil {
		addr = net.JoinHostPort(strings.Trim(host, "[]"), "80")
	}
	var b bytes.Buffer
	b.WriteString("POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\n")
	names := make([]string, 0, len(hdr))
	for k := range hdr {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		for _, v := range hdr[k] {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	b.WriteString("Content-Length: ")
	h := &h1Client{addr: addr, head: b.Bytes(), idle: make(chan *h1Conn, maxConns),
		dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}}
	if limitConns {
		h.sem = make(chan struct{}, maxConns)
	}
	return h
}

// h1Conn is one connection with its read buffer.
type h1Conn struct {
	nc       net.Conn
	buf      []byte
	r, w     int             // unread bytes are buf[r:w]
	read     int64           // bytes read since the last response began
	reused   bool            // it served a response before
	deadline time.Time       // as last set on nc; zero: none
	idleDL   bool            // no request deadline: each read sets h1IdleTimeout
	done     <-chan struct{} // the request's context's
	wbuf     []byte
}

// get returns an idle connection, or a new one.
func (h *h1Client) get(ctx context.Context) (*h1Conn, error) {
	select {
	case c := <-h.idle:
		return c, nil
	default:
	}
	if h.sem != nil {
		select {
		case c := <-h.idle:
			return c, nil
		case h.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.dial(ctx)
}

// dial opens a connection; with LimitConns the caller holds its token.
func (h *h1Client) dial(ctx context.Context) (*h1Conn, error) {
	nc, err := h.dialer.DialContext(ctx, "tcp", h.addr)
	if err != nil {
		if h.sem != nil {
			<-h.sem
		}
		return nil, err
	}
	return &h1Conn{nc: nc, buf: make([]byte, h1BufSize)}, nil
}

// put keeps c for reuse, or closes it when the pool is full.
func (h *h1Client) put(c *h1Conn) {
	c.reused = true
	select {
	case h.idle <- c:
	default:
		h.discard(c)
	}
}

// discard closes c and frees its token.
func (h *h1Client) discard(c *h1Conn) {
	_ = c.nc.Close()
	if h.sem != nil {
		<-h.sem
	}
}

// closeIdle closes the idle connections.
func (h *h1Client) closeIdle() {
	for {
		select {
		case c := <-h.idle:
			h.discard(c)
		default:
			return
		}
	}
}

// setDeadline prepares c's reads and writes for a request of ctx. A
// request with a deadline is ended by cancelOnDone's past deadline when its
// context ends (at its deadline or cancelled): no timer of the connection
// is set per request. One without a deadline bounds each read by
// h1IdleTimeout.
func (c *h1Conn) setDeadline(ctx context.Context) error {
	_, ok := ctx.Deadline()
	c.idleDL, c.done = !ok, ctx.Done()
	if ok && !c.deadline.IsZero() {
		c.deadline = time.Time{}
		return c.nc.SetDeadline(time.Time{})
	}
	if !ok {
		c.deadline = time.Now().Add(h1IdleTimeout)
		return c.nc.SetDeadline(c.deadline)
	}
	return nil
}

// write sends head, the length of body, a blank line and body in one write.
func (c *h1Conn) write(head, body []byte) error {
	b := append(c.wbuf[:0], head...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	b = append(b, body...)
	c.wbuf = b
	_, err := c.nc.Write(b)
	if cap(c.wbuf) > 64<<10 {
		c.wbuf = nil
	}
	c.settle(err)
	return err
}

// fill reads more into the buffer, moving the unread bytes to its start
// first when it is full. It returns io.EOF only when nothing was read.
func (c *h1Conn) fill() error {
	switch {
	case c.r == c.w:
		c.r, c.w = 0, 0
	case c.r > 0 && len(c.buf)-c.w < h1BufSize/4:
		c.w = copy(c.buf, c.buf[c.r:c.w])
		c.r = 0
	}
	if c.w == len(c.buf) {
		return errH1LineTooLong
	}
	if c.idleDL {
		d := time.Now().Add(h1IdleTimeout)
		if err := c.nc.SetReadDeadline(d); err != nil {
			return err
		}
		c.deadline = d
	}
	n, err := c.nc.Read(c.buf[c.w:])
	c.w += n
	c.read += int64(n)
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	c.settle(err)
	return err
}

// settle waits, after err, for the end of the request's context when err
// is the request's deadline (or a cancellation's past deadline), so that
// the error is classified by the context as net/http's are: the
// connection's timer and the context's fire at the same instant in either
// order.
func (c *h1Conn) settle(err error) {
	if !c.idleDL && c.done != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		<-c.done
	}
}

// errH1LineTooLong: a status, header or chunk size line longer than the
// connection's buffer.
var errH1LineTooLong = errors.New("malformed HTTP response: a line longer than 8 KiB")

// line returns the next line without its line end ("\n" or "\r\n"). An
// EOF after part of a line is io.ErrUnexpectedEOF.
func (c *h1Conn) line() ([]byte, error) {
	for {
		if i := bytes.IndexByte(c.buf[c.r:c.w], '\n'); i >= 0 {
			l := c.buf[c.r : c.r+i]
			c.r += i + 1
			if n := len(l); n > 0 && l[n-1] == '\r' {
				l = l[:n-1]
			}
			return l, nil
		}
		if err := c.fill(); err != nil {
			if err == io.EOF && c.w > c.r {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// h1Head is what the client keeps of a response's status line and
// headers.
type h1Head struct {
	status    int
	reason    string // the status line after the code, only for errors
	ct        string
	length    int64 // Content-Length, or -1
	chunked   bool
	keepAlive bool
	bytes     int64 // of the status line and headers, line ends included
}

// statusText is the status as net/http's Response.Status gives it.
func (h *h1Head) statusText() string {
	if h.reason == "" {
		return strconv.Itoa(h.status)
	}
	return strconv.Itoa(h.status) + " " + h.reason
}

// errH1Malformed is wrapped by every error of a malformed response.
var errH1Malformed = errors.New("malformed HTTP response")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errH1Malformed}, args...)...)
}

// readHead reads the status line and headers of a response into h,
// skipping interim 1xx responses.
func (c *h1Conn) readHead(h *h1Head) error {
	*h = h1Head{}
	start := c.read - int64(c.w-c.r)
	for {
		l, err := c.line()
		if err != nil {
			return err
		}
		if err := parseStatusLine(l, h); err != nil {
			return err
		}
		if err := c.headers(h, start); err != nil {
			return err
		}
		if h.status == 204 || h.status == 304 {
			h.length, h.chunked = 0, false // no body, whatever the headers say
		}
		if h.status >= 200 || h.status == 101 {
			break
		}
		// An interim response (100 Continue, 103 Early Hints): the real
		// one follows.
	}
	h.bytes = c.read - int64(c.w-c.r) - start
	return nil
}

// parseStatusLine parses "HTTP/1.x NNN reason" into h.
func parseStatusLine(l []byte, h *h1Head) error {
	if len(l) < 12 || string(l[:7]) != "HTTP/1." || (l[7] != '0' && l[7] != '1') || l[8] != ' ' ||
		(len(l) > 12 && l[12] != ' ') {
		return malformed("status line %s", quotePrefix(l))
	}
	code := 0
	for _, d := range l[9:12] {
		if d < '0' || d > '9' {
			return malformed("status line %s", quotePrefix(l))
		}
		code = code*10 + int(d-'0')
	}
	if code < 100 {
		return malformed("status line %s", quotePrefix(l))
	}
	h.status = code
	h.keepAlive = l[7] == '1'
	h.length = -1
	h.reason = ""
	switch r := l[min(len(l), 13):]; string(r) {
	case "OK":
		h.reason = "OK"
	default:
		h.reason = string(r)
	}
	return nil
}

// headers reads header lines up to the blank line into h; start is where
// the response began in c.read's count, for the size bound.
func (c *h1Conn) headers(h *h1Head, start int64) error {
	h.ct, h.chunked, h.length = "", false, -1
	for {
		l, err := c.line()
		if err != nil {
			return err
		}
		if c.read-int64(c.w-c.r)-start > h1MaxHeaderBytes {
			return malformed("headers of more than %d bytes", h1MaxHeaderBytes)
		}
		if len(l) == 0 {
			return nil
		}
		i := bytes.IndexByte(l, ':')
		if i <= 0 || l[0] == ' ' || l[0] == '\t' || l[i-1] == ' ' {
			return malformed("header line %s", quotePrefix(l))
		}
		name, value := l[:i], bytes.TrimSpace(l[i+1:])
		switch {
		case asciiEqualFold(name, "content-type"):
			h.ct = string(value)
		case asciiEqualFold(name, "content-length"):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 || (h.length >= 0 && h.length != n) {
				return malformed("Content-Length %s", quotePrefix(value))
			}
			h.length = n
		case asciiEqualFold(name, "transfer-encoding"):
			if !asciiEqualFold(value, "chunked") {
				return malformed("Transfer-Encoding %s", quotePrefix(value))
			}
			h.chunked = true
		case asciiEqualFold(name, "connection"):
			for part := range strings.SplitSeq(string(value), ",") {
				switch strings.ToLower(strings.TrimSpace(part)) {
				case "close":
					h.keepAlive = false
				case "keep-alive":
					h.keepAlive = true
				}
			}
		}
	}
}

// asciiEqualFold reports whether b equals the lower-case s, ignoring the
// case of ASCII letters.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x := b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if x != s[i] {
			return false
		}
	}
	return true
}

// h1Body reads a response's body from its connection: chunked, of a
// Content-Length, or up to the connection's end. At its end Read returns
// io.EOF and done is set; a connection that ends before (a truncated
// chunk, a short body) gives io.ErrUnexpectedEOF.
type h1Body struct {
	c       *h1Conn
	chunked bool
	toEOF   bool  // no length: the body ends with the connection
	left    int64 // of the chunk or the body
	inChunk bool  // a chunk's data has begun (its CRLF follows it)
	done    bool
	err     error
}

func (b *h1Body) reset(c *h1Conn, h *h1Head) {
	*b = h1Body{c: c, chunked: h.chunked, left: h.length}
	switch {
	case h.chunked:
		b.left = 0
	case h.status == 204 || h.status == 304:
		b.left, b.done = 0, true
	case h.length < 0:
		b.toEOF = true
	case h.length == 0:
		b.done = true
	}
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	c := b.c
	if b.chunked && b.left == 0 {
		if err := b.nextChunk(); err != nil {
			b.err = err
			return 0, err
		}
		if b.done {
			return 0, io.EOF
		}
	}
	if c.r == c.w {
		if err := c.fill(); err != nil {
			switch {
			case err == io.EOF && b.toEOF:
				b.done = true
			case err == io.EOF:
				err = io.ErrUnexpectedEOF
				b.err = err
			default:
				b.err = err
			}
			return 0, err
		}
	}
	n := c.w - c.r
	if !b.toEOF && int64(n) > b.left {
		n = int(b.left)
	}
	n = copy(p, c.buf[c.r:c.r+n])
	c.r += n
	if !b.toEOF {
		b.left -= int64(n)
		if !b.chunked && b.left == 0 {
			b.done = true
		}
	}
	return n, nil
}

// nextChunk reads the end of the last chunk and the size line of the next
// one; at the last chunk (size 0) it reads the trailers and sets done.
func (b *h1Body) nextChunk() error {
	c := b.c
	if b.inChunk {
		l, err := c.line()
		if err != nil {
			return truncated(err)
		}
		if len(l) != 0 {
			return malformed("chunk data longer than its size")
		}
	}
	l, err := c.line()
	if err != nil {
		return truncated(err)
	}
	n, err := parseChunkSize(l)
	if err != nil {
		return err
	}
	if n > 0 {
		b.left, b.inChunk = n, true
		return nil
	}
	for { // trailers, up to a blank line
		l, err := c.line()
		if err != nil {
			return truncated(err)
		}
		if len(l) == 0 {
			b.done = true
			return nil
		}
	}
}

// truncated turns the end of the connection inside a chunked body into
// io.ErrUnexpectedEOF.
func truncated(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseChunkSize parses a chunk size line: hexadecimal digits, then
// optional extensions after ';' (ignored) and blanks.
func parseChunkSize(l []byte) (int64, error) {
	if i := bytes.IndexByte(l, ';'); i >= 0 {
		l = l[:i]
	}
	l = bytes.TrimRight(l, " \t")
	if len(l) == 0 || len(l) > 15 {
		return 0, malformed("chunk size %s", quotePrefix(l))
	}
	var n int64
	for _, d := range l {
		switch {
		case '0' <= d && d <= '9':
			d -= '0'
		case 'a' <= d && d <= 'f':
			d -= 'a' - 10
		case 'A' <= d && d <= 'F':
			d -= 'A' - 10
		default:
			return 0, malformed("chunk size %s", quotePrefix(l))
		}
		n = n<<4 | int64(d)
	}
	return n, nil
}

// deadlinePast is a deadline in the past, to end a cancelled request's
// reads and writes at once.
var deadlinePast = time.Unix(1, 0)

// cancelOnDone ends c's reads and writes when ctx is cancelled before
// stop is called; a ctx that is never done costs nothing.
func cancelOnDone(ctx context.Context, c *h1Conn) (stop func() bool) {
	if ctx.Done() == nil {
		return nil
	}
	return context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(deadlinePast) })
}

// doH1 is Do over the specialised client: c.body is the request's body.
func (e *Endpoint) doH1(ctx context.Context, r clock, s loadgen.QuerySample, resp *loadgen.Response, c *call, issued int64) {
	c.wrote.Store(true) // written synchronously: c may go back to the pool
	h := e.h1
	conn, err := h.get(ctx)
	if err != nil {
		e.stats.errors.Add(1)
		resp.Err = e.failure(ctx, err, false)
		return
	}
	var stop func() bool
	keep := false
	defer func() {
		if stop != nil && !stop() {
			keep = false // the cancellation set a past deadline
		}
		switch {
		case conn == nil:
		case keep:
			h.put(conn)
		default:
			h.discard(conn)
		}
	}()
	head := &c.h1head
	for try := 0; ; try++ {
		if err = conn.setDeadline(ctx); err == nil {
			if stop == nil {
				stop = cancelOnDone(ctx, conn)
			}
			conn.read, conn.r, conn.w = 0, 0, 0
			if err = conn.write(h.head, c.body); err == nil {
				if try == 0 {
					e.stats.lateness.Record(r.At(time.Now()) - issued)
				}
				err = conn.readHead(head)
			}
		}
		// A kept-alive connection the server closed while it was idle
		// fails before the first byte of an answer: the request goes
		// again on a new connection, as net/http sends it again.
		if err == nil || try > 0 || !conn.reused || conn.read > 0 || ctx.Err() != nil || !retriable(err) {
			break
		}
		if stop != nil {
			stop()
			stop = nil
		}
		h.discard(conn)
		conn = nil
		if h.sem != nil {
			select { // the discarded connection's token, taken again
			case h.sem <- struct{}{}:
				conn, err = h.dial(ctx) // nil on an error, the token given back
			case <-ctx.Done():
				err = ctx.Err()
			}
		} else {
			conn, err = h.dial(ctx)
		}
		if conn == nil {
			e.stats.errors.Add(1)
			resp.Err = e.failure(ctx, err, false)
			return
		}
	}
	if err != nil {
		e.stats.errors.Add(1)
		if errors.Is(err, errH1Malformed) || err == errH1LineTooLong {
			resp.Err = loadgen.WithCategory(netsut.CategoryProtocol, fmt.Errorf("POST %s: %w", e.reqURL.Redacted(), err))
			return
		}
		resp.Err = e.failure(ctx, err, false) // no response, as net/http's RoundTrip says
		return
	}
	body := &c.h1body
	body.reset(conn, head)
	c.cb.r, c.cb.n = body, 0
	c.br.Reset(&c.cb)
	switch {
	case head.status/100 != 2:
		resp.Err = e.statusError(head.status, head.statusText(), c)
	case isJSON(head.ct), head.ct == "" && !e.opts.Stream:
		resp.Err = e.readWhole(ctx, resp, c)
	case e.opts.Stream && (head.ct == "" || isMediaType(head.ct, "text/event-stream")):
		resp.Err = e.readStream(ctx, r, s, resp, c)
	default:
		resp.Err = e.contentTypeError(head.statusText(), head.ct, c)
	}
	if resp.Err != nil && errors.Is(body.err, errH1Malformed) {
		resp.Err = loadgen.WithCategory(netsut.CategoryProtocol, fmt.Errorf("POST %s: %w", e.reqURL.Redacted(), body.err))
	}
	resp.ResponseBytes = c.cb.n + head.bytes
	keep = body.done && head.keepAlive && c.br.Buffered() == 0 && conn.r == conn.w
	e.finish(resp, c)
}

// retriable reports whether err is a connection's end before any answer:
// what a server's close of an idle kept-alive connection looks like.
func retriable(err error) bool {
	return err == io.EOF || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}
