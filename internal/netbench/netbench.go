// Package netbench holds the baselines that aimeter's network adapters are
// measured against, side by side on the same machine: BareHTTP, a plain
// net/http client loop with nothing of aimeter in it, and NullServer, a
// roofline HTTP server that answers every request with one pre-rendered
// OpenAI-shaped JSON body. The peer tools (wrk, vegeta, ghz) are installed by
// scripts/install-peers.sh; scripts/bench-http-peers.sh runs them against a
// NullServer in interleaved rounds with BareHTTP.
package netbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Result is what a load loop did.
type Result struct {
	// Requests is the number of requests answered with a 2xx status and a
	// body read to its end.
	Requests int64
	// Errors is the number of requests that failed: a transport error, a
	// status other than 2xx, or a body that could not be read. A request
	// cut short by the end of the run is not counted at all.
	Errors int64
	// Elapsed is the wall time from the start of the loop to the return of
	// its last worker.
	Elapsed time.Duration
}

// Rate returns successful requests per second, or 0 for an empty Result.
func (r Result) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// BareHTTP sends requests to url from concurrency goroutines, each waiting
// for its answer before sending the next (closed loop), for duration or
// until ctx ends. A non-nil body is POSTed as application/json; a nil body
// sends GETs. The client's connection pool holds concurrency connections,
// as a tuned load generator's would. It returns an error only for bad
// arguments.
func BareHTTP(ctx context.Context, url string, body []byte, concurrency int, duration time.Duration) (Result, error) {
	if url == "" {
		return Result{}, errors.New("netbench: BareHTTP: empty url")
	}
	if concurrency < 1 {
		return Result{}, fmt.Errorf("netbench: BareHTTP: concurrency %d: want at least 1", concurrency)
	}
	if duration <= 0 {
		return Result{}, fmt.Errorf("netbench: BareHTTP: duration %v: want more than 0", duration)
	}
	method := http.MethodGet
	if body != nil {
		method = http.MethodPost
	}
	// Check the request once, so a malformed URL is an error, not a run
	// of failures.
	if _, err := http.NewRequest(method, url, nil); err != nil {
		return Result{}, fmt.Errorf("netbench: BareHTTP: url %q: %w", url, err)
	}
	tr := &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        concurrency,
		MaxIdleConnsPerHost: concurrency,
		MaxConnsPerHost:     concurrency,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	ctx, cancel := context.WithTimeout(ctx, duration)
	defer cancel()
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rd bytes.Reader
			for ctx.Err() == nil {
				var b io.Reader
				if body != nil {
					rd.Reset(body)
					b = &rd
				}
				req, err := http.NewRequestWithContext(ctx, method, url, b)
				if err != nil {
					failed.Add(1)
					return
				}
				if body != nil {
					req.Header["Content-Type"] = jsonType
				}
				resp, err := client.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					if err == nil && (resp.StatusCode < 200 || resp.StatusCode > 299) {
						err = errors.New(resp.Status)
					}
				}
				switch {
				case ctx.Err() != nil:
					// Cut short by the end of the run.
				case err != nil:
					failed.Add(1)
				default:
					ok.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return Result{Requests: ok.Load(), Errors: failed.Load(), Elapsed: time.Since(start)}, nil
}

// jsonType is shared by every request and response: net/http only reads it.
var jsonType = []string{"application/json"}

// NullAnswer is the body NullServer answers with: a non-streaming OpenAI
// chat completion of a few tokens, with usage.
const NullAnswer = `{"id":"chatcmpl-null","object":"chat.completion","created":1700000000,"model":"null",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"a b c d e f g h"},"finish_reason":"length"}],` +
	`"usage":{"prompt_tokens":16,"completion_tokens":8,"total_tokens":24}}`

// NullModels is the body NullServer answers a GET of a path ending in
// /models with: an OpenAI model list holding the one model "null", so that
// aimeter's openai adapter passes its check before a run.
const NullModels = `{"object":"list","data":[{"id":"null","object":"model","created":1700000000,"owned_by":"netbench"}]}`

// NullStreamEvents is how many server-sent events NullServer streams to a
// request that asks for a stream: NullStreamTokens content chunks, a chunk
// with the finish reason and the usage, and "data: [DONE]".
const (
	NullStreamEvents = NullStreamTokens + 2
	NullStreamTokens = 14
)

// NullStreamChunk is each content event of a streamed answer.
const NullStreamChunk = `data: {"id":"chatcmpl-null","object":"chat.completion.chunk","created":1700000000,"model":"null",` +
	`"choices":[{"index":0,"delta":{"content":"a "},"finish_reason":null}]}` + "\n\n"

// NullStreamEnd is the last data event of a streamed answer (finish reason
// and usage), followed by the end marker.
const NullStreamEnd = `data: {"id":"chatcmpl-null","object":"chat.completion.chunk","created":1700000000,"model":"null",` +
	`"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":16,"completion_tokens":14,"total_tokens":30}}` + "\n\n"

// nullStreamDone ends a stream.
const nullStreamDone = "data: [DONE]\n\n"

// NullServer is an HTTP server on 127.0.0.1 that reads each request's body
// and answers 200 with NullAnswer, whatever the method and path (except a
// GET of .../models, answered with NullModels): the fastest server a client
// can meet, to measure the client alone. A request whose body holds
// "stream":true is answered with an event stream instead
// (text/event-stream, chunked): NullStreamTokens NullStreamChunk events,
// NullStreamEnd and "data: [DONE]", each flushed on its own, as a serving
// engine sends tokens.
type NullServer struct {
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL string

	requests  atomic.Int64
	srv       *http.Server
	done      chan error
	closeOnce sync.Once
	closeErr  error
}

// NewNullServer starts a NullServer on a free loopback port.
func NewNullServer() (*NullServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netbench: NewNullServer: %w", err)
	}
	return ServeNull(ln), nil
}

// ServeNull serves a NullServer on ln, which it closes on Close.
func ServeNull(ln net.Listener) *NullServer {
	s := &NullServer{URL: "http://" + ln.Addr().String(), done: make(chan error, 1)}
	answer := []byte(NullAnswer)
	length := []string{strconv.Itoa(len(answer))}
	models := []byte(NullModels)
	modelsLength := []string{strconv.Itoa(len(models))}
	bufs := sync.Pool{New: func() any { return new(bytes.Buffer) }}
	chunk, end, done := []byte(NullStreamChunk), []byte(NullStreamEnd), []byte(nullStreamDone)
	s.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.requests.Add(1)
			buf := bufs.Get().(*bytes.Buffer)
			buf.Reset()
			_, _ = buf.ReadFrom(r.Body)
			stream := bytes.Contains(buf.Bytes(), streamTrue)
			bufs.Put(buf)
			h := w.Header()
			if stream && r.Method == http.MethodPost {
				h["Content-Type"] = eventStreamType
				w.WriteHeader(http.StatusOK)
				f, _ := w.(http.Flusher)
				for i := range NullStreamEvents {
					b := chunk
					switch i {
					case NullStreamEvents - 2:
						b = end
					case NullStreamEvents - 1:
						b = done
					}
					if _, err := w.Write(b); err != nil {
						return
					}
					if f != nil {
						f.Flush()
					}
				}
				return
			}
			h["Content-Type"] = jsonType
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
				h["Content-Length"] = modelsLength
				_, _ = w.Write(models)
				return
			}
			h["Content-Length"] = length
			_, _ = w.Write(answer)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s
}

var (
	streamTrue      = []byte(`"stream":true`)
	eventStreamType = []string{"text/event-stream"}
)

// Requests returns how many requests the server has answered.
func (s *NullServer) Requests() int64 { return s.requests.Load() }

// Close stops the server and closes its connections. Later calls return
// the first call's error.
func (s *NullServer) Close() error {
	s.closeOnce.Do(func() {
		err := s.srv.Close()
		if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
		s.closeErr = err
	})
	return s.closeErr
}
