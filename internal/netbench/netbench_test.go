package netbench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestNullAnswerIsOpenAIShaped(t *testing.T) {
	var a struct {
		Object  string
		Choices []struct {
			Message struct{ Content string }
		}
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(NullAnswer), &a); err != nil {
		t.Fatal(err)
	}
	if a.Object != "chat.completion" || len(a.Choices) != 1 || a.Choices[0].Message.Content == "" || a.Usage.CompletionTokens != 8 {
		t.Errorf("NullAnswer decodes to %+v", a)
	}
}

func TestBareHTTPAgainstNullServer(t *testing.T) {
	s, err := NewNullServer()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := BareHTTP(context.Background(), s.URL+"/v1/chat/completions", []byte(`{"model":"m"}`), 4, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests == 0 || r.Errors != 0 {
		t.Errorf("result %+v, want requests and no errors", r)
	}
	if got := s.Requests(); got < r.Requests {
		t.Errorf("server answered %d requests, client counted %d", got, r.Requests)
	}
	if r.Elapsed < 200*time.Millisecond || r.Rate() <= 0 {
		t.Errorf("elapsed %v, rate %v", r.Elapsed, r.Rate())
	}

	// The answer as a client sees it.
	resp, err := http.Post(s.URL+"/anything", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != NullAnswer || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("answer %s %q %q", resp.Status, resp.Header.Get("Content-Type"), b)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestBareHTTPSendsTheRequest: method, content type and body arrive intact,
// and the pool holds no more connections than the concurrency.
func TestBareHTTPSendsTheRequest(t *testing.T) {
	body := []byte(`{"prompt":"hello"}`)
	var bad, conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || !bytes.Equal(got, body) {
			bad.Add(1)
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	r, err := BareHTTP(context.Background(), srv.URL, body, 3, 150*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if bad.Load() != 0 || r.Errors != 0 || r.Requests == 0 {
		t.Errorf("result %+v, %d malformed requests", r, bad.Load())
	}
	if c := conns.Load(); c > 3 {
		t.Errorf("%d connections for concurrency 3", c)
	}

	// A nil body sends GETs.
	var gets atomic.Int64
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
	}))
	defer srv2.Close()
	if r, err := BareHTTP(context.Background(), srv2.URL, nil, 1, 50*time.Millisecond); err != nil || r.Requests == 0 || gets.Load() < r.Requests {
		t.Errorf("GET loop: %+v %v, server saw %d GETs", r, err, gets.Load())
	}
}

func TestBareHTTPFailures(t *testing.T) {
	status500 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer status500.Close()
	// The handler reads the body first: only then does net/http watch
	// the connection and end r.Context() when the client hangs up. The
	// release channel bounds it anyway.
	release := make(chan struct{})
	never := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer never.Close()
	defer close(release)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()

	for _, tc := range []struct {
		url        string
		wantErrors bool
		reason     string
	}{
		{status500.URL, true, "a 5xx answer is an error, not a request"},
		{refused, true, "connection refused is an error, and the loop still ends on time"},
		{never.URL, false, "a server that never answers: requests cut short by the end are not counted, and the loop ends"},
	} {
		start := time.Now()
		r, err := BareHTTP(context.Background(), tc.url, []byte("{}"), 2, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if r.Requests != 0 || (r.Errors > 0) != tc.wantErrors {
			t.Errorf("%s: result %+v", tc.reason, r)
		}
		if el := time.Since(start); el > 10*time.Second {
			t.Errorf("%s: took %v", tc.reason, el)
		}
	}

	// A cancelled context ends the loop at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r, err := BareHTTP(ctx, never.URL, nil, 2, time.Hour); err != nil || r.Requests != 0 || r.Errors != 0 {
		t.Errorf("cancelled context: %+v %v", r, err)
	}
}

func TestBareHTTPBadArguments(t *testing.T) {
	for _, tc := range []struct {
		url         string
		concurrency int
		duration    time.Duration
		want        string
		reason      string
	}{
		{"", 1, time.Second, "empty url", "no URL"},
		{"http://127.0.0.1:1", 0, time.Second, "concurrency 0", "no workers"},
		{"http://127.0.0.1:1", 1, 0, "duration 0s", "no time"},
		{"http://[::1", 1, time.Second, `url "http://[::1"`, "a malformed URL is one error, not a run of failures"},
	} {
		_, err := BareHTTP(context.Background(), tc.url, nil, tc.concurrency, tc.duration)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.reason, err, tc.want)
		}
	}
}

// BenchmarkBareHTTPNull is BareHTTP's request loop as a per-request
// benchmark against a NullServer in the same process: ns/op and allocs/op
// are the client's and the server's together (run with -benchmem).
func BenchmarkBareHTTPNull(b *testing.B) {
	s, err := NewNullServer()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const conns = 32
	tr := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	body := []byte(`{"model":"m"}`)
	var failed atomic.Int64
	b.SetParallelism(conns / 2) // GOMAXPROCS is 2 here: 32 goroutines
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var rd bytes.Reader
		for pb.Next() {
			rd.Reset(body)
			req, _ := http.NewRequest(http.MethodPost, s.URL, &rd)
			req.Header["Content-Type"] = jsonType
			resp, err := client.Do(req)
			if err != nil {
				failed.Add(1)
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	})
	if n := failed.Load(); n > 0 {
		b.Errorf("%d requests failed", n)
	}
}

// TestNullServerModels: a GET of /v1/models lists the model "null" (what
// aimeter's openai adapter checks before a run); a POST to the same path
// still gets the chat answer.
func TestNullServerModels(t *testing.T) {
	s, err := NewNullServer()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		why, method, want string
	}{
		{"GET lists the model", http.MethodGet, NullModels},
		{"POST is answered as any other path", http.MethodPost, NullAnswer},
	} {
		req, _ := http.NewRequest(c.method, s.URL+"/v1/models", nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(body) != c.want {
			t.Errorf("%s: %s", c.why, body)
		}
	}
	var list struct {
		Data []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(NullModels), &list); err != nil || len(list.Data) != 1 || list.Data[0].ID != "null" {
		t.Errorf("NullModels: %+v, %v", list, err)
	}
}

// TestNullServerStream: a request asking for a stream gets
// NullStreamEvents server-sent events, the last data event with the usage,
// then [DONE], as an OpenAI-compatible server sends them; BareHTTP reads
// such streams to their end.
func TestNullServerStream(t *testing.T) {
	s, err := NewNullServer()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := `{"model":"null","stream":true,"messages":[{"role":"user","content":"hello"}]}`
	res, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" || len(res.TransferEncoding) != 1 {
		t.Errorf("Content-Type %q, Transfer-Encoding %v", ct, res.TransferEncoding)
	}
	events := strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n")
	if len(events) != NullStreamEvents || events[len(events)-1] != "data: [DONE]" {
		t.Fatalf("%d events: %q", len(events), b)
	}
	content := 0
	for _, ev := range events[:len(events)-1] {
		var chunk struct {
			Choices []struct {
				Delta struct{ Content string }
			}
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			}
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &chunk); err != nil {
			t.Fatalf("%q: %v", ev, err)
		}
		if len(chunk.Choices) == 1 && chunk.Choices[0].Delta.Content != "" {
			content++
		}
		if chunk.Usage != nil && chunk.Usage.CompletionTokens != NullStreamTokens {
			t.Errorf("usage %d tokens", chunk.Usage.CompletionTokens)
		}
	}
	if content != NullStreamTokens {
		t.Errorf("%d content events, want %d", content, NullStreamTokens)
	}
	r, err := BareHTTP(context.Background(), s.URL+"/v1/chat/completions", []byte(body), 4, 200*time.Millisecond)
	if err != nil || r.Requests == 0 || r.Errors != 0 {
		t.Errorf("BareHTTP: %+v, %v", r, err)
	}
}
