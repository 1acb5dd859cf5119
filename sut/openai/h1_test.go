package openai

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/loadgen"
	"aimeter/serve"
	"aimeter/sut/netsut"
)

// TestH1ChosenAutomatically: auto (the default) takes the specialised
// client for http:// and net/http for https://; h1 refuses https://.
func TestH1ChosenAutomatically(t *testing.T) {
	for _, tc := range []struct {
		url, client string
		h1, err     bool
	}{
		{"http://127.0.0.1:1", "", true, false},
		{"http://127.0.0.1:1", ClientAuto, true, false},
		{"http://localhost", ClientH1, true, false},
		{"https://127.0.0.1:1", "", false, false},
		{"http://127.0.0.1:1", ClientNetHTTP, false, false},
		{"https://127.0.0.1:1", ClientH1, false, true},
		{"http://127.0.0.1:1", "h2", false, true},
	} {
		ep, err := New(Options{BaseURL: tc.url, HTTPClient: tc.client, Prompts: testPrompts(t, 1)})
		if (err != nil) != tc.err {
			t.Errorf("%s %q: error %v, want error %v", tc.url, tc.client, err, tc.err)
			continue
		}
		if err == nil && (ep.h1 != nil) != tc.h1 {
			t.Errorf("%s %q: specialised client %v, want %v", tc.url, tc.client, ep.h1 != nil, tc.h1)
		}
	}
	ep, _ := New(Options{BaseURL: "http://localhost/v1", Prompts: testPrompts(t, 1)})
	if ep.h1.addr != "localhost:80" || !bytes.HasPrefix(ep.h1.head, []byte("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n")) {
		t.Errorf("addr %s, head %q", ep.h1.addr, ep.h1.head)
	}
}

// TestH1AgainstSimulator: both clients against aimeter's own simulator
// (serve.NewOpenAI, what `aimeter serve openai` runs) over real sockets,
// streamed and not, give the same tokens, token times and bytes.
func TestH1AgainstSimulator(t *testing.T) {
	sim, err := serve.NewOpenAI(serve.OpenAIOptions{Models: []string{"m1"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	for _, stream := range []bool{true, false} {
		var got [2][]loadgen.Response
		for i, client := range []string{ClientH1, ClientNetHTTP} {
			ep := newEndpoint(t, Options{BaseURL: srv.URL, Model: "m1", Stream: stream, MaxTokens: 12, IgnoreEOS: true,
				HTTPClient: client, MaxConns: 4, LimitConns: true, AllowRepeatedPrompts: true})
			clk := fakeClock{start: time.Now()}
			for k := range 8 {
				resp := loadgen.Response{ID: loadgen.ResponseID(k + 1)}
				ep.do(ctx, clk, loadgen.QuerySample{ID: resp.ID, Index: uint64(k % 4)}, &resp)
				if resp.Err != nil {
					t.Fatalf("%s stream=%v: %v", client, stream, resp.Err)
				}
				got[i] = append(got[i], resp)
			}
			if st := ep.Stats(); st.MissingUsage != 0 || st.TokenMismatches != 0 || st.Errors != 0 {
				t.Errorf("%s stream=%v: stats %+v", client, stream, st)
			}
		}
		for k := range got[0] {
			a, b := got[0][k], got[1][k]
			if a.Tokens != 12 || a.Tokens != b.Tokens || !bytes.Equal(a.Data, b.Data) || len(a.TokenTimes) != len(b.TokenTimes) ||
				a.RequestBytes != b.RequestBytes {
				t.Errorf("stream=%v request %d: h1 %d tokens %q %d times %d bytes; net/http %d %q %d %d", stream, k,
					a.Tokens, a.Data, len(a.TokenTimes), a.RequestBytes, b.Tokens, b.Data, len(b.TokenTimes), b.RequestBytes)
			}
			// The specialised client counts the headers as they came,
			// net/http estimates them: close, not equal.
			if d := a.ResponseBytes - b.ResponseBytes; d < -64 || d > 64 || a.ResponseBytes == 0 {
				t.Errorf("stream=%v request %d: response bytes %d (h1), %d (net/http)", stream, k, a.ResponseBytes, b.ResponseBytes)
			}
		}
	}
}

// rawServer answers every connection's requests with answer(n, conn),
// n counting the requests on all connections from 0; it reads each
// request (headers and a Content-Length body) first.
func rawServer(t *testing.T, answer func(n int, c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					answer(int(n.Add(1)-1), c)
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

const okHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"

// chunked frames s as one chunk.
func chunked(s string) string {
	return hex(len(s)) + "\r\n" + s + "\r\n"
}

func hex(n int) string {
	const digits = "0123456789abcdef"
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n >>= 4 {
		b = append([]byte{digits[n&15]}, b...)
	}
	return string(b)
}

// TestH1Malformed: malformed and cut responses over real sockets map onto
// the error taxonomy, and none hangs past the request's deadline.
func TestH1Malformed(t *testing.T) {
	ev := "data: " + `{"choices":[{"delta":{"content":"a"}}]}` + "\n\n"
	done := "data: [DONE]\n\n"
	stall := func(c net.Conn) { time.Sleep(2 * time.Second) }
	for _, tc := range []struct {
		name    string
		answer  func(c net.Conn)
		cat     string
		message string
	}{
		{"a well-formed stream", func(c net.Conn) {
			io.WriteString(c, okHead+chunked(ev)+chunked(done)+"0\r\n\r\n")
		}, "", ""},
		{"a chunk cut short and the connection closed", func(c net.Conn) {
			io.WriteString(c, okHead+chunked(ev)+"40\r\ndata: {")
			c.Close()
		}, netsut.CategoryStreamTruncated, ""},
		{"a bad chunk size", func(c net.Conn) {
			io.WriteString(c, okHead+chunked(ev)+"zz\r\n"+done)
		}, netsut.CategoryProtocol, "chunk size"},
		{"chunk data longer than its size", func(c net.Conn) {
			io.WriteString(c, okHead+"3\r\ndata: x\r\n")
		}, netsut.CategoryProtocol, "longer than its size"},
		{"headers over the bound", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\n")
			for range 2000 {
				io.WriteString(c, "X-Filler: "+strings.Repeat("f", 40)+"\r\n")
			}
			io.WriteString(c, "\r\n")
		}, netsut.CategoryProtocol, "headers of more than"},
		{"a header line over the buffer", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Long: "+strings.Repeat("l", 9000)+"\r\n\r\n")
		}, netsut.CategoryProtocol, "line longer than"},
		{"a bad status line", func(c net.Conn) {
			io.WriteString(c, "HTTP/9 what\r\n\r\n")
		}, netsut.CategoryProtocol, "status line"},
		{"a bad Content-Length", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: -3\r\n\r\n")
		}, netsut.CategoryProtocol, "Content-Length"},
		{"closed mid-stream", func(c net.Conn) {
			io.WriteString(c, okHead+chunked(ev))
			c.Close()
		}, netsut.CategoryStreamTruncated, ""},
		{"reset mid-stream", func(c net.Conn) {
			io.WriteString(c, okHead+chunked(ev))
			time.Sleep(20 * time.Millisecond)
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}, netsut.CategoryStreamTruncated, ""},
		{"closed before the status line", func(c net.Conn) { c.Close() }, netsut.CategoryConnectionReset, ""},
		{"stalls inside the headers", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-")
			stall(c)
		}, netsut.CategoryRequestTimeout, "deadline"},
		{"stalls mid-stream", func(c net.Conn) {
			io.WriteString(c, okHead+chunked(ev))
			stall(c)
		}, netsut.CategoryStreamStalled, "stopped before the request's deadline"},
		{"stalls inside a chunk", func(c net.Conn) {
			io.WriteString(c, okHead+"100\r\ndata: {")
			stall(c)
		}, netsut.CategoryStreamStalled, ""},
		{"HTTP 503 with a Content-Length body", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy")
		}, netsut.CategoryHTTP5xx, `HTTP 503 Service Unavailable: "busy"`},
		{"a body up to the connection's end (HTTP/1.0)", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"+ev+done)
			c.Close()
		}, "", ""},
		{"100 Continue first", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n"+okHead+chunked(ev+done)+"0\r\n\r\n")
		}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := rawServer(t, func(_ int, c net.Conn) { tc.answer(c) })
			ep := newEndpoint(t, Options{BaseURL: url, Model: "m1", Stream: true, HTTPClient: ClientH1, MaxConns: 2, LimitConns: true})
			start := time.Now()
			res := run(t, ep, runOpts{samples: 2, tokens: true, timeout: 300 * time.Millisecond})
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if tc.cat == "" {
				if res.FailedSamples != 0 {
					t.Fatalf("failures: %+v", res.Errors)
				}
				return
			}
			if res.FailedSamples != 2 {
				t.Fatalf("failed %d, errors %+v; want 2 failures", res.FailedSamples, res.Errors)
			}
			for _, e := range res.Errors {
				if e.Category != tc.cat || !strings.Contains(e.Message, tc.message) {
					t.Errorf("error %s: %q, want %s containing %q", e.Category, e.Message, tc.cat, tc.message)
				}
			}
		})
	}
}

// TestH1RetriesAClosedIdleConnection: a kept-alive connection the server
// closed while idle is replaced without a failed sample, and a connection
// is reused while the server keeps it.
func TestH1RetriesAClosedIdleConnection(t *testing.T) {
	var conns atomic.Int64
	url := rawServer(t, func(n int, c net.Conn) {
		if n == 0 {
			conns.Add(1)
		}
		io.WriteString(c, okHead+chunked("data: "+`{"choices":[{"delta":{"content":"a"}}]}`+"\n\ndata: [DONE]\n\n")+"0\r\n\r\n")
		if n%3 == 2 {
			time.Sleep(10 * time.Millisecond)
			c.Close() // after the answer, as an idle timeout would
			conns.Add(1)
		}
	})
	ep := newEndpoint(t, Options{BaseURL: url, Model: "m1", Stream: true, HTTPClient: ClientH1, MaxConns: 1, LimitConns: true})
	ss := loadgen.SingleStream
	res := run(t, ep, runOpts{samples: 12, tokens: true, timeout: time.Second, scenario: &ss})
	if res.FailedSamples != 0 {
		t.Fatalf("failures: %+v", res.Errors)
	}
	if c := conns.Load(); c > 6 {
		t.Errorf("%d connections for 12 requests that close one every 3", c)
	}
}

// FuzzH1Chunked checks the chunked decoding against net/http's: the same
// bytes where both succeed; never a panic; never more than the input.
func FuzzH1Chunked(f *testing.F) {
	for _, s := range []string{"0\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n", "3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\n",
		"A\r\n0123456789\r\n0\n\n", "zz\r\n", "3\r\nabcdef\r\n", "ffffffffffffffff\r\n", "5\r\nhel"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := &h1Conn{nc: &pipeConn{r: strings.NewReader(s)}, buf: make([]byte, 64)}
		var b h1Body
		b.reset(c, &h1Head{status: 200, chunked: true, length: -1})
		got, err := io.ReadAll(&b)
		want, werr := io.ReadAll(httputil.NewChunkedReader(strings.NewReader(s)))
		if len(got) > len(s) {
			t.Fatalf("%d bytes out of %d", len(got), len(s))
		}
		if err == nil && werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q, net/http %q", s, got, want)
		}
		if err == nil && !b.done {
			t.Fatalf("%q: no error and not done", s)
		}
	})
}

// FuzzH1Head checks status line and header parsing against net/http's:
// where both accept a response they agree on the status and the body's
// framing; never a panic.
func FuzzH1Head(f *testing.F) {
	for _, s := range []string{okHead, "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.0 200 OK\r\n\r\n", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", "HTTP/1.1 2000\r\n\r\n", "HTTP/1.1 200 OK\nA:b\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := &h1Conn{nc: &pipeConn{r: strings.NewReader(s)}, buf: make([]byte, 256)}
		var h h1Head
		err := c.readHead(&h)
		if err != nil {
			return
		}
		if h.status < 100 || h.status > 999 || h.bytes <= 0 || h.bytes > int64(len(s)) {
			t.Fatalf("%q: %+v", s, h)
		}
		res, werr := http.ReadResponse(bufio.NewReader(strings.NewReader(s)), nil)
		if werr != nil || res.StatusCode < 200 {
			return // this parser is more lenient in places (it keeps what it needs) and skips 1xx
		}
		if res.StatusCode != h.status || (res.ContentLength >= 0 && !h.chunked && h.length != res.ContentLength) {
			t.Fatalf("%q: status %d length %d chunked %v; net/http %d %d", s, h.status, h.length, h.chunked, res.StatusCode, res.ContentLength)
		}
	})
}

// pipeConn is a net.Conn reading from r, for the parsers' fuzz tests.
type pipeConn struct {
	net.Conn
	r io.Reader
}

func (p *pipeConn) Read(b []byte) (int, error)      { return p.r.Read(b) }
func (p *pipeConn) SetReadDeadline(time.Time) error { return nil }

// BenchmarkH1Response parses one streamed answer as the client reads it
// (status line, headers, 16 chunked events through the SSE reader) from
// memory: the client's own work per answer, without the kernel's.
func BenchmarkH1Response(b *testing.B) {
	raw := benchResponse()
	rd := strings.NewReader(raw)
	c := &h1Conn{nc: &pipeConn{r: rd}, buf: make([]byte, h1BufSize)}
	var (
		h    h1Head
		body h1Body
		sse  sseReader
	)
	br := bufio.NewReaderSize(nil, 16<<10)
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		rd.Reset(raw)
		c.r, c.w = 0, 0
		if err := c.readHead(&h); err != nil {
			b.Fatal(err)
		}
		body.reset(c, &h)
		br.Reset(&body)
		sse.reset(br, DefaultMaxEventBytes)
		benchEvents(b, &sse, br)
		if !body.done {
			b.Fatal("not done")
		}
	}
}

// BenchmarkNetHTTPResponse is BenchmarkH1Response through net/http's
// response parsing and chunked reader (without its connection goroutines).
func BenchmarkNetHTTPResponse(b *testing.B) {
	raw := benchResponse()
	rd := strings.NewReader(raw)
	conn := bufio.NewReaderSize(rd, 4<<10)
	var sse sseReader
	br := bufio.NewReaderSize(nil, 16<<10)
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		rd.Reset(raw)
		conn.Reset(rd)
		res, err := http.ReadResponse(conn, nil)
		if err != nil {
			b.Fatal(err)
		}
		br.Reset(res.Body)
		sse.reset(br, DefaultMaxEventBytes)
		benchEvents(b, &sse, br)
	}
}

// benchEvents reads the 16 events of benchResponse and the body's end.
func benchEvents(b *testing.B, sse *sseReader, br *bufio.Reader) {
	n := 0
	for {
		d, err := sse.next()
		if err != nil {
			b.Fatal(err)
		}
		n++
		if isDone(d) {
			break
		}
	}
	if _, err := br.Discard(1); err != io.EOF || n != 16 {
		b.Fatalf("%d events, %v", n, err)
	}
}

// benchResponse is a streamed answer of 15 chunks and [DONE], as the
// NullServer sends it.
func benchResponse() string {
	var resp strings.Builder
	resp.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nDate: Thu, 26 Nov 2026 23:00:00 GMT\r\nTransfer-Encoding: chunked\r\n\r\n")
	for range 15 {
		resp.WriteString(chunked("data: " + `{"id":"chatcmpl-null","object":"chat.completion.chunk","created":1700000000,"model":"null","choices":[{"index":0,"delta":{"content":"a "},"finish_reason":null}]}` + "\n\n"))
	}
	resp.WriteString(chunked("data: [DONE]\n\n") + "0\r\n\r\n")
	return resp.String()
}
