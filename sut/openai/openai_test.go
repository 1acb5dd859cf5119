package openai

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/dataset/prompts"
	"aimeter/loadgen"
	"aimeter/sut/netsut"
	"aimeter/tokenize"
)

// testPrompts is a set of n plain prompts.
func testPrompts(t testing.TB, n int) *prompts.Set {
	t.Helper()
	ps := make([]prompts.Prompt, n)
	for i := range ps {
		ps[i].Text = fmt.Sprintf("prompt <%d> \"quoted\"", i)
	}
	set, err := prompts.New("test prompts", ps)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// request is what the test server saw of one request.
type request struct {
	Path   string
	Auth   string
	Body   map[string]any
	Prompt string // the prompt, or the first message's content
}

// recorder keeps the requests a test server received.
type recorder struct {
	mu   sync.Mutex
	reqs []request
}

func (rec *recorder) add(t testing.TB, r *http.Request) request {
	var q request
	q.Path, q.Auth = r.URL.Path, r.Header.Get("Authorization")
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &q.Body); err != nil {
		t.Errorf("request body %q: %v", b, err)
	}
	if p, ok := q.Body["prompt"].(string); ok {
		q.Prompt = p
	} else if ms, ok := q.Body["messages"].([]any); ok && len(ms) > 0 {
		q.Prompt, _ = ms[0].(map[string]any)["content"].(string)
	}
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, q)
	rec.mu.Unlock()
	return q
}

func (rec *recorder) all() []request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.reqs)
}

// writeSSE writes events, flushing after each.
func writeSSE(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	for _, ev := range events {
		io.WriteString(w, ev)
		f.Flush()
	}
}

func delta(content string) string {
	b, _ := json.Marshal(content)
	return `data: {"choices":[{"index":0,"delta":{"content":` + string(b) + `}}]}` + "\n\n"
}

const usage5 = `data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":5}}` + "\n\n"

// server starts a loopback OpenAI-compatible server: GET /v1/models lists
// "m1" and "m2", and every POST goes to handle.
func server(t testing.TB, rec *recorder, handle func(w http.ResponseWriter, r *http.Request, q request)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
			w.Header().Set("Server", "test-server/1.0")
			io.WriteString(w, `{"object":"list","data":[{"id":"m1","owned_by":"tester"},{"id":"m2","owned_by":"other"}]}`)
			return
		}
		var q request
		if rec != nil {
			q = rec.add(t, r)
		} else {
			io.Copy(io.Discard, r.Body)
		}
		handle(w, r, q)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// runOpts are the settings of one test run.
type runOpts struct {
	samples  uint64
	mode     loadgen.Mode
	tokens   bool              // token latencies
	timeout  time.Duration     // netsut request timeout
	scenario *loadgen.Scenario // nil = Offline
}

// run runs an Offline test (or o.scenario) of the endpoint.
func run(t testing.TB, ep *Endpoint, o runOpts) *loadgen.Result {
	t.Helper()
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	if o.scenario != nil {
		s.Scenario = *o.scenario
	}
	s.Mode = loadgen.PerformanceOnly
	if o.mode != 0 {
		s.Mode = o.mode
	}
	s.MinDurationMs = 0
	s.MinQueryCount = max(o.samples, 1)
	s.UseTokenLatencies = o.tokens
	sut := netsut.New(context.Background(), ep, netsut.Options{RequestTimeout: o.timeout})
	defer sut.Close()
	res, err := loadgen.Run(context.Background(), sut, ep.opts.Prompts, s, &loadgen.Options{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}

func newEndpoint(t testing.TB, o Options) *Endpoint {
	t.Helper()
	if o.Prompts == nil {
		o.Prompts = testPrompts(t, 4)
	}
	ep, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	return ep
}

func TestStreamSuccess(t *testing.T) {
	var rec recorder
	srv := server(t, &rec, func(w http.ResponseWriter, r *http.Request, q request) {
		writeSSE(w, ": keep-alive comment\n\n",
			`data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}`+"\n\n", // no content: not a token
			`data: {"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}`+"\n\n",
			`data: {"choices":[{"index":0,"delta":{"reasoning":" more"}}]}`+"\r\n\r\n",
			delta(" Hello"),
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f"}}]}}]}`+"\n\n",
			"data: "+`{"choices":[{"index":0,`+"\ndata: "+`"delta":{"content":" wörld\n\"x\""}}]}`+"\n\n", // multi-line data
			usage5, "data: [DONE]\n\n")
	})
	ep := newEndpoint(t, Options{BaseURL: srv.URL, Stream: true, MaxTokens: 5, IgnoreEOS: true, APIKey: "sk-test-secret"})
	if err := ep.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ep.Model() != "m1" {
		t.Errorf("model %q, want the first listed, m1", ep.Model())
	}
	res := run(t, ep, runOpts{samples: 4, mode: loadgen.AccuracyOnly, tokens: true})
	for rec := range res.Records() {
		if rec.Status != loadgen.StatusOK {
			e, _ := res.ErrorOf(rec)
			t.Fatalf("sample %d: %v %+v", rec.SampleIndex, rec.Status, e)
		}
		if rec.Tokens != 5 {
			t.Errorf("tokens %d, want usage's 5", rec.Tokens)
		}
		if rec.FirstTokenNs == loadgen.NoTime || rec.FirstTokenNs > rec.CompletedNs {
			t.Errorf("first token %d, completed %d", rec.FirstTokenNs, rec.CompletedNs)
		}
		if rec.RequestBytes < 100 || rec.ResponseBytes < 300 {
			t.Errorf("bytes %d ↑ %d ↓, want the bodies and headers", rec.RequestBytes, rec.ResponseBytes)
		}
	}
	n := 0
	for _, times := range res.TokenTimes() {
		n++
		if len(times) != 5 || !slices.IsSorted(times) {
			t.Errorf("token times %v, want 5 in order (reasoning, reasoning, content, tool call, content)", times)
		}
	}
	if n != 4 {
		t.Errorf("%d samples with token times, want 4", n)
	}
	for _, a := range res.Accuracy {
		if want := "think more Hello wörld\n\"x\""; string(a.Data) != want {
			t.Errorf("accuracy data %q, want %q", a.Data, want)
		}
	}
	st := ep.Stats()
	if st.Requests != 4 || st.Errors != 0 || st.MissingUsage != 0 || st.TokenMismatches != 0 || st.SendLateness.Count != 4 {
		t.Errorf("stats %+v", st)
	}
	for _, q := range rec.all() {
		if q.Path != "/v1/chat/completions" || q.Auth != "Bearer sk-test-secret" {
			t.Errorf("request %s with auth %q", q.Path, q.Auth)
		}
		if q.Body["model"] != "m1" || q.Body["stream"] != true || q.Body["max_tokens"] != 5.0 || q.Body["ignore_eos"] != true {
			t.Errorf("body %v", q.Body)
		}
		if so, _ := q.Body["stream_options"].(map[string]any); so["include_usage"] != true {
			t.Errorf("stream_options %v, want include_usage", q.Body["stream_options"])
		}
	}
}

// TestNonce checks that a performance run never sends the same prompt
// twice (loadgen reissues sample indices) and that AllowRepeatedPrompts
// sends the data set's prompts exactly.
func TestNonce(t *testing.T) {
	for _, allow := range []bool{false, true} {
		var rec recorder
		srv := server(t, &rec, func(w http.ResponseWriter, r *http.Request, q request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"index":0,"text":"ok"}],"usage":{"completion_tokens":1}}`)
		})
		ep := newEndpoint(t, Options{BaseURL: srv.URL + "/v1/", Model: "m2", API: APICompletions, AllowRepeatedPrompts: allow})
		res := run(t, ep, runOpts{samples: 40})
		if res.FailedSamples != 0 {
			t.Fatalf("errors: %+v", res.Errors)
		}
		seen := map[string]bool{}
		for _, q := range rec.all() {
			if q.Path != "/v1/completions" || q.Body["stream"] != false || q.Body["model"] != "m2" {
				t.Errorf("request %s %v", q.Path, q.Body)
			}
			if _, ok := q.Body["stream_options"]; ok {
				t.Error("stream_options sent without streaming")
			}
			rest := q.Prompt
			if !allow {
				nonce, after, ok := strings.Cut(q.Prompt, " ")
				if !ok || len(nonce) != 13 {
					t.Errorf("prompt %q does not start with a 13-character nonce", q.Prompt)
				}
				rest = after
			}
			if !strings.HasPrefix(rest, "prompt <") || !strings.HasSuffix(rest, `> "quoted"`) {
				t.Errorf("prompt %q, want the data set's prompt after the nonce", rest)
			}
			seen[q.Prompt] = true
		}
		if n := len(rec.all()); n != 40 {
			t.Fatalf("%d requests, want 40", n)
		}
		want := 40
		if allow {
			want = 4
		}
		if len(seen) != want {
			t.Errorf("allow=%v: %d distinct prompts, want %d", allow, len(seen), want)
		}
	}
}

func TestChatMessagesBody(t *testing.T) {
	var rec recorder
	srv := server(t, &rec, func(w http.ResponseWriter, r *http.Request, q request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"hi there"}}],"usage":{"completion_tokens":2}}`)
	})
	set, err := prompts.New("chat", []prompts.Prompt{{Messages: []prompts.Message{{Role: "system", Content: "be <brief>"}, {Role: "user", Content: "hello"}}}})
	if err != nil {
		t.Fatal(err)
	}
	ep := newEndpoint(t, Options{BaseURL: srv.URL, Model: "m1", Prompts: set, AllowRepeatedPrompts: true})
	res := run(t, ep, runOpts{samples: 1, mode: loadgen.AccuracyOnly})
	if len(res.Accuracy) != 1 || string(res.Accuracy[0].Data) != "hi there" {
		t.Errorf("accuracy %+v", res.Accuracy)
	}
	for rec := range res.Records() {
		if rec.Tokens != 2 {
			t.Errorf("tokens %d, want 2", rec.Tokens)
		}
	}
	q := rec.all()[0]
	if got, want := fmt.Sprint(q.Body["messages"]), "[map[content:be <brief> role:system] map[content:hello role:user]]"; got != want {
		t.Errorf("messages %s, want %s", got, want)
	}
	if ep.Stats().MissingUsage != 0 {
		t.Error("usage counted missing")
	}
	if _, err := New(Options{BaseURL: srv.URL, API: APICompletions, Prompts: set}); err == nil {
		t.Error("chat messages accepted for the completions API")
	}
}

// TestUsageChecks: a stream without usage counts the chunks, or the
// tokens of its text when a tokenizer is given; one whose usage disagrees
// with the chunks keeps the usage and counts a mismatch.
func TestUsageChecks(t *testing.T) {
	cl100k, err := tokenize.Tiktoken("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                 string
		usage                string
		tok                  tokenize.Tokenizer
		wantTokens           int64
		wantMissing, wantMis uint64
	}{
		{"no usage: the chunks are counted", "", nil, 3, 1, 0},
		// "hello world again friends" is 4 cl100k tokens in 3 chunks.
		{"no usage, a tokenizer: the text's tokens", "", cl100k, 4, 1, 0},
		{"usage agrees", `data: {"choices":[],"usage":{"completion_tokens":3}}` + "\n\n", nil, 3, 0, 0},
		{"usage and a tokenizer: the usage wins", `data: {"choices":[],"usage":{"completion_tokens":3}}` + "\n\n", cl100k, 3, 0, 0},
		{"usage disagrees: kept, counted", usage5, nil, 5, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := server(t, nil, func(w http.ResponseWriter, r *http.Request, q request) {
				writeSSE(w, delta("hello"), delta(" world"), delta(" again friends"), tc.usage, "data: [DONE]\n\n")
			})
			f := false
			ep := newEndpoint(t, Options{BaseURL: srv.URL, Model: "m1", Stream: true, IncludeUsage: &f, Tokenizer: tc.tok})
			res := run(t, ep, runOpts{samples: 1, tokens: true})
			for rec := range res.Records() {
				if rec.Status != loadgen.StatusOK || rec.Tokens != tc.wantTokens {
					t.Errorf("status %v tokens %d, want ok %d", rec.Status, rec.Tokens, tc.wantTokens)
				}
			}
			st := ep.Stats()
			if st.MissingUsage != tc.wantMissing || st.TokenMismatches != tc.wantMis {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestTokenTimesBounded(t *testing.T) {
	srv := server(t, nil, func(w http.ResponseWriter, r *http.Request, q request) {
		evs := []string{}
		for range 50 {
			evs = append(evs, delta("x"))
		}
		writeSSE(w, append(evs, "data: [DONE]\n\n")...)
	})
	ep := newEndpoint(t, Options{BaseURL: srv.URL, Model: "m1", Stream: true, MaxTokenTimes: 20})
	res := run(t, ep, runOpts{samples: 1, tokens: true})
	for _, times := range res.TokenTimes() {
		if len(times) != 20 {
			t.Errorf("%d token times kept, want the bound 20", len(times))
		}
	}
	if st := ep.Stats(); st.TokenTimesDropped != 30 || st.MissingUsage != 1 {
		t.Errorf("stats %+v, want 30 token times dropped", st)
	}
}

// hijack takes the connection from the server, for responses net/http
// would not send.
func hijack(t testing.TB, w http.ResponseWriter) net.Conn {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Error(err)
		return nil
	}
	buf.Flush()
	return conn
}

// TestSampleErrors: every failure is a categorised sample error, never a
// hang or a crash.
func TestSampleErrors(t *testing.T) {
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	for _, tc := range []struct {
		name    string
		stream  bool
		handle  func(w http.ResponseWriter, r *http.Request)
		cat     string
		message string // part of the error message
	}{
		{"HTTP 500 quotes the start of the body", true, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, strings.Repeat("overloaded ", 100), http.StatusInternalServerError)
		}, netsut.CategoryHTTP5xx, `HTTP 500 Internal Server Error: "overloaded overloaded`},
		{"HTTP 404", false, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":{"message":"no such model"}}`, http.StatusNotFound)
		}, netsut.CategoryHTTP4xx, "HTTP 404"},
		{"stream without [DONE]", true, func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, delta("a"), delta("b"))
		}, netsut.CategoryStreamTruncated, "without [DONE] after 2 chunks"},
		{"stream cut inside an event", true, func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, delta("a"), `data: {"choices":[{"delta":`)
		}, netsut.CategoryStreamTruncated, "without [DONE]"},
		{"malformed JSON in a chunk", true, func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, delta("a"), "data: {not json}\n\n", "data: [DONE]\n\n")
		}, netsut.CategoryMalformedJSON, "chunk 2: malformed JSON"},
		{"malformed JSON body", false, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"text":`)
		}, netsut.CategoryMalformedJSON, "malformed JSON"},
		{"a body without choices", false, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x"}`)
		}, netsut.CategoryMalformedJSON, "without choices"},
		{"a 200 HTML page to a streamed request", true, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<html><body>Please log in</body></html>")
		}, CategoryUnexpectedContentType, `HTTP 200 OK with Content-Type "text/html; charset=utf-8", want text/event-stream (or application/json): "<html><body>Please log in`},
		{"a 200 HTML page to a whole request", false, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html></html>")
		}, CategoryUnexpectedContentType, `HTTP 200 OK with Content-Type "text/html", want application/json`},
		{"server-sent events to a whole request", false, func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, delta("a"), "data: [DONE]\n\n")
		}, CategoryUnexpectedContentType, `Content-Type "text/event-stream"`},
		{"an error event in the stream", true, func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, delta("a"), `data: {"error":{"message":"engine died"}}`+"\n\n")
		}, netsut.CategoryServerError, "engine died"},
		{"an event over the size limit", true, func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, delta(strings.Repeat("y", 5000)), "data: [DONE]\n\n")
		}, netsut.CategoryMalformedSSE, "too large"},
		{"a line over the size limit, no newline", true, func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, "data: "+strings.Repeat("z", 100_000))
		}, netsut.CategoryMalformedSSE, "too large"},
		{"reset mid-stream", true, func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, delta("a"))
			if c := hijack(t, w); c != nil {
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
			}
		}, netsut.CategoryStreamTruncated, ""},
		{"connection closed before any answer", false, func(w http.ResponseWriter, r *http.Request) {
			if c := hijack(t, w); c != nil {
				c.Close()
			}
		}, netsut.CategoryConnectionReset, ""},
		{"never answers", true, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-never:
			case <-r.Context().Done():
			}
		}, netsut.CategoryRequestTimeout, "deadline"},
		{"stalls mid-stream", true, func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w, delta("a"))
			select {
			case <-never:
			case <-r.Context().Done():
			}
		}, netsut.CategoryStreamStalled, "stopped before the request's deadline"},
	} {
		for _, client := range []string{ClientH1, ClientNetHTTP} {
			t.Run(tc.name+"/"+client, func(t *testing.T) {
				srv := server(t, nil, func(w http.ResponseWriter, r *http.Request, q request) { tc.handle(w, r) })
				ep := newEndpoint(t, Options{BaseURL: srv.URL, Model: "m1", Stream: tc.stream, MaxEventBytes: 4096, APIKey: "sk-hidden", HTTPClient: client})
				start := time.Now()
				res := run(t, ep, runOpts{samples: 2, tokens: tc.stream, timeout: 300 * time.Millisecond})
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("took %v", d)
				}
				if res.FailedSamples != 2 || len(res.Errors) == 0 {
					t.Fatalf("failed %d, errors %+v; want 2 failures", res.FailedSamples, res.Errors)
				}
				for _, e := range res.Errors {
					if e.Category != tc.cat || !strings.Contains(e.Message, tc.message) {
						t.Errorf("error %s: %q, want %s containing %q", e.Category, e.Message, tc.cat, tc.message)
					}
					if strings.Contains(e.Message, "sk-hidden") {
						t.Error("the API key is in an error")
					}
					if len(e.Message) > 512 {
						t.Errorf("error of %d bytes", len(e.Message))
					}
				}
				if st := ep.Stats(); st.Errors != 2 {
					t.Errorf("stats %+v", st)
				}
			})
		}
	}
}

// closedURL is the URL of a port nothing listens on.
func closedURL(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func TestRefused(t *testing.T) {
	u := closedURL(t)
	ep := newEndpoint(t, Options{BaseURL: u, Model: "m1"})
	err := ep.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "GET "+u+"/v1/models") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Check: %v, want the URL and connection refused", err)
	}
	res := run(t, ep, runOpts{samples: 1})
	for _, e := range res.Errors {
		if e.Category != netsut.CategoryConnectionRefused || !strings.Contains(e.Message, u) {
			t.Errorf("error %+v, want connect with the URL", e)
		}
	}
	if res.FailedSamples != 1 {
		t.Errorf("%d failed", res.FailedSamples)
	}
}

func TestCheckAndNodeName(t *testing.T) {
	srv := server(t, nil, nil)
	ep := newEndpoint(t, Options{BaseURL: srv.URL, Model: "nope"})
	err := ep.Check(context.Background())
	if !errors.Is(err, netsut.ErrNotReady) || !strings.Contains(err.Error(), "m1, m2") || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Check: %v, want not ready listing m1, m2", err)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct{ model, want string }{
		{"m2", "other@" + host},
		{"", "tester@" + host},
		{"absent", "test-server/1.0@" + host}, // no owner: the Server header
	} {
		ep := newEndpoint(t, Options{BaseURL: srv.URL, Model: tc.model})
		name, err := ep.NodeName(context.Background())
		if err != nil || name != tc.want {
			t.Errorf("model %q: NodeName %q, %v; want %q", tc.model, name, err, tc.want)
		}
	}
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		io.WriteString(w, `{"data":[]}`)
	}))
	defer bare.Close()
	ep = newEndpoint(t, Options{BaseURL: bare.URL})
	if name, err := ep.NodeName(context.Background()); err != nil || name != strings.TrimPrefix(bare.URL, "http://") {
		t.Errorf("NodeName %q, %v; want host:port", name, err)
	}
	if err := ep.Check(context.Background()); !errors.Is(err, netsut.ErrNotReady) {
		t.Errorf("Check of a server without models: %v", err)
	}
	tagged := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"data":[{"id":"tiny:latest"},{"id":"tiny-2:q4"}]}`)
	}))
	defer tagged.Close()
	for _, tc := range []struct {
		model string
		ok    bool
		why   string
	}{
		{"tiny", true, "Ollama lists tiny:latest and serves it as tiny"},
		{"tiny:latest", true, "the listed name itself"},
		{"tiny-2", false, "only the latest tag is implied"},
	} {
		ep := newEndpoint(t, Options{BaseURL: tagged.URL, Model: tc.model})
		if err := ep.Check(context.Background()); (err == nil) != tc.ok {
			t.Errorf("%s: Check(%q) = %v", tc.why, tc.model, err)
		}
	}
	unauth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad key "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	}))
	defer unauth.Close()
	ep = newEndpoint(t, Options{BaseURL: unauth.URL, APIKey: "sk-echoed"})
	err = ep.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "sk-echoed") {
		t.Errorf("Check: %v, want 401 without the key", err)
	}
}

// TestAPIKeyNeverShown greps every output of an Endpoint for the key.
func TestAPIKeyNeverShown(t *testing.T) {
	const key = "sk-very-secret-0123"
	srv := server(t, nil, func(w http.ResponseWriter, r *http.Request, q request) {
		http.Error(w, "echo: "+r.Header.Get("Authorization"), http.StatusForbidden)
	})
	o := Options{BaseURL: srv.URL, Model: "m1", APIKey: key, Prompts: testPrompts(t, 2)}
	ep := newEndpoint(t, o)
	js, _ := json.Marshal(o)
	res := run(t, ep, runOpts{samples: 2})
	node, _ := ep.NodeName(context.Background())
	outputs := []string{ep.Name(), node, fmt.Sprint(o), fmt.Sprintf("%+v", o), fmt.Sprintf("%#v", o), string(js), fmt.Sprintf("%+v", ep.Stats())}
	for _, e := range res.Errors {
		outputs = append(outputs, e.Message)
	}
	if res.FailedSamples != 2 {
		t.Fatalf("failed %d, want 2 (HTTP 403)", res.FailedSamples)
	}
	for _, s := range outputs {
		if strings.Contains(s, key) {
			t.Errorf("the API key is in %q", s)
		}
	}
}

func TestNewErrors(t *testing.T) {
	set := testPrompts(t, 1)
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no URL", Options{Prompts: set}, "no base URL"},
		{"bad scheme", Options{BaseURL: "ftp://x", Prompts: set}, "want http"},
		{"no host", Options{BaseURL: "http://", Prompts: set}, "no host"},
		{"bad API", Options{BaseURL: "http://x", API: "embeddings", Prompts: set}, `API "embeddings"`},
		{"no prompts", Options{BaseURL: "http://x"}, "no prompts"},
		{"negative", Options{BaseURL: "http://x", MaxTokens: -1, Prompts: set}, "negative"},
		{"missing CA file", Options{BaseURL: "https://x", TLS: TLSOptions{CAFile: "/nonexistent/ca.pem"}, Prompts: set}, "CA file"},
		{"password hidden", Options{BaseURL: "ftp://u:hunter2@x", Prompts: set}, "xxxxx"},
	} {
		_, err := New(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"data":[{"id":"m1"}]}`)
	}))
	defer srv.Close()
	ep := newEndpoint(t, Options{BaseURL: srv.URL})
	if err := ep.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("Check of an untrusted server: %v", err)
	}
	ep = newEndpoint(t, Options{BaseURL: srv.URL, TLS: TLSOptions{InsecureSkipVerify: true}})
	if err := ep.Check(context.Background()); err != nil {
		t.Errorf("Check with InsecureSkipVerify: %v", err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600)
	ep = newEndpoint(t, Options{BaseURL: srv.URL, TLS: TLSOptions{CAFile: ca}})
	if err := ep.Check(context.Background()); err != nil {
		t.Errorf("Check with the server's certificate as CA file: %v", err)
	}
	if _, err := New(Options{BaseURL: srv.URL, Prompts: testPrompts(t, 1), TLS: TLSOptions{CAFile: filepath.Join(t.TempDir())}}); err == nil {
		t.Error("a directory accepted as CA file")
	}
	notPEM := filepath.Join(t.TempDir(), "x.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o600)
	if _, err := New(Options{BaseURL: srv.URL, Prompts: testPrompts(t, 1), TLS: TLSOptions{CAFile: notPEM}}); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a file without PEM: %v", err)
	}
}

// TestConnectionReuse: streamed and whole responses leave their
// connection for the next request.
func TestConnectionReuse(t *testing.T) {
	for _, stream := range []bool{false, true} {
		var conns atomic.Int64
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			if stream {
				writeSSE(w, delta("a"), usage5, "data: [DONE]\n\n")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"text":"a"}],"usage":{"completion_tokens":1}}`)
		}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
		srv.Start()
		ep := newEndpoint(t, Options{BaseURL: srv.URL, Model: "m1", Stream: stream})
		single := loadgen.SingleStream
		res := run(t, ep, runOpts{samples: 20, scenario: &single})
		if res.FailedSamples != 0 {
			t.Fatalf("errors %+v", res.Errors)
		}
		if n := conns.Load(); n != 1 {
			t.Errorf("stream %v: %d connections for %d sequential requests, want 1", stream, n, res.RecordCount())
		}
		srv.Close()
	}
}

// TestLimitConns: with LimitConns, an Offline query of 16 samples uses at
// most MaxConns connections and no more requests in flight, and every
// sample still succeeds; the requests beyond the limit wait their turn.
// The handler holds every request until MaxConns of them are inside at
// once (or 5 s have passed, which fails the test), so the test also proves
// that the requests really overlap up to the limit, not merely that they
// never exceed it.
func TestLimitConns(t *testing.T) {
	for _, limit := range []int{2, 4} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			var conns, inFlight, most atomic.Int64
			full := make(chan struct{}) // closed when limit requests are inside at once
			var fullOnce sync.Once
			var timedOut atomic.Bool
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := inFlight.Add(1)
				defer inFlight.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				if n >= int64(limit) {
					fullOnce.Do(func() { close(full) })
				}
				io.Copy(io.Discard, r.Body)
				select {
				case <-full:
					time.Sleep(time.Millisecond) // give a request over the limit the time to arrive
				case <-time.After(5 * time.Second):
					timedOut.Store(true)
					fullOnce.Do(func() { close(full) }) // let the rest through: the test has failed
				case <-r.Context().Done():
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"choices":[{"text":"a"}],"usage":{"completion_tokens":1}}`)
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()
			ep := newEndpoint(t, Options{BaseURL: srv.URL, Model: "m1", MaxConns: limit, LimitConns: true})
			res := run(t, ep, runOpts{samples: 16})
			if res.FailedSamples != 0 {
				t.Fatalf("errors %+v", res.Errors)
			}
			if timedOut.Load() {
				t.Errorf("%d requests were never in flight at once within 5 s (at most %d were)", limit, most.Load())
			}
			if c, m := conns.Load(), most.Load(); c > int64(limit) || m > int64(limit) {
				t.Errorf("%d connections and %d requests in flight at most, want ≤ %d each", c, m, limit)
			}
		})
	}
}

// TestHTTP2OverTLS: a TLS server that offers HTTP/2 gets it, streaming
// included.
func TestHTTP2OverTLS(t *testing.T) {
	var protos sync.Map
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos.Store(r.Proto, true)
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"data":[{"id":"m1"}]}`)
			return
		}
		io.Copy(io.Discard, r.Body)
		writeSSE(w, delta("a"), delta("b"), usage5, "data: [DONE]\n\n")
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	ep := newEndpoint(t, Options{BaseURL: srv.URL, Stream: true, TLS: TLSOptions{InsecureSkipVerify: true}})
	if err := ep.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := run(t, ep, runOpts{samples: 8, tokens: true})
	if res.FailedSamples != 0 {
		t.Fatalf("errors %+v", res.Errors)
	}
	for rec := range res.Records() {
		if rec.Tokens != 5 || rec.FirstTokenNs == loadgen.NoTime {
			t.Errorf("record %+v", rec)
		}
	}
	n := 0
	protos.Range(func(k, _ any) bool {
		n++
		if k != "HTTP/2.0" {
			t.Errorf("a request over %v", k)
		}
		return true
	})
	if n == 0 {
		t.Error("no request")
	}
}
