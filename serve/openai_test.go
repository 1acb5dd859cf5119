package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/internal/golden"
	"aimeter/sut/servertiming"
)

// newSim starts the simulator behind a real loopback listener.
func newSim(t *testing.T, opts OpenAIOptions) (*OpenAIServer, *httptest.Server) {
	t.Helper()
	s, err := NewOpenAI(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		s.Close()
		hs.Close()
	})
	return s, hs
}

// post sends a JSON body and returns the response.
func post(t *testing.T, c *http.Client, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// sseEvent is one `data:` line of a stream, with its arrival time.
type sseEvent struct {
	data string
	at   int64 // Unix ns when its line was read
}

// readSSE reads an event stream to its end; err is the read error that
// ended it, if not a clean EOF.
func readSSE(r io.Reader) (events []sseEvent, err error) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		now := time.Now().UnixNano()
		if err != nil {
			if err == io.EOF && line == "" {
				return events, nil
			}
			return events, err
		}
		line = strings.TrimRight(line, "\r\n")
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			events = append(events, sseEvent{data: d, at: now})
		}
	}
}

var createdRE = regexp.MustCompile(`"created":\d+`)

// normalise replaces the creation time, the one field a golden file cannot
// fix.
func normalise(b []byte) []byte { return createdRE.ReplaceAll(b, []byte(`"created":0`)) }

// golden compares got with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

func TestOpenAIGolden(t *testing.T) {
	opts := OpenAIOptions{Seed: 7, OutputTokens: Dist{Kind: DistUniform, A: 3, B: 8}, SendLogSize: -1}
	_, hs := newSim(t, opts)
	c := hs.Client()

	resp := post(t, c, hs.URL+"/v1/completions", `{"model":"sim","prompt":"the quick brown fox","max_tokens":16}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("completion: %s %q: %s", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	checkGolden(t, "openai_completion.golden", normalise(body))

	resp = post(t, c, hs.URL+"/v1/chat/completions", `{"model":"sim","messages":[{"role":"user","content":"say something short"}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true}}`)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("chat stream: %s %q: %s", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	checkGolden(t, "openai_chat_stream.golden", normalise(body))
}

func TestOpenAIModels(t *testing.T) {
	_, hs := newSim(t, OpenAIOptions{Models: []string{"a", "b/c"}, OwnedBy: "lab"})
	resp, err := hs.Client().Get(hs.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Object string
		Data   []struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Created int64  `json:"created"`
			OwnedBy string `json:"owned_by"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	if list.Object != "list" || len(list.Data) != 2 || list.Data[0].ID != "a" || list.Data[1].ID != "b/c" ||
		list.Data[0].OwnedBy != "lab" || list.Data[0].Object != "model" || list.Data[0].Created == 0 {
		t.Errorf("models = %+v", list)
	}
}

func TestOpenAIBadRequests(t *testing.T) {
	s, hs := newSim(t, OpenAIOptions{})
	c := hs.Client()
	tests := []struct {
		method, path, body string
		status             int
		why                string
	}{
		{"POST", "/v1/completions", `{"prompt":`, 400, "truncated JSON"},
		{"POST", "/v1/completions", `{"model":"nope","prompt":"x"}`, 404, "unknown model"},
		{"POST", "/v1/completions", `{"model":"sim"}`, 400, "no prompt"},
		{"POST", "/v1/chat/completions", `{"model":"sim","messages":[]}`, 400, "no messages"},
		{"POST", "/v1/completions", `{"prompt":"x","max_tokens":0}`, 400, "max_tokens below 1"},
		{"GET", "/v1/completions", ``, 405, "wrong method"},
		{"POST", "/v1/models", ``, 405, "models is GET"},
		{"GET", "/v2/nothing", ``, 404, "unknown path"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, hs.URL+tt.path, strings.NewReader(tt.body))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != tt.status || err != nil || e.Error.Message == "" {
			t.Errorf("%s %s %s: %d %+v %v; want %d with an error body (%s)", tt.method, tt.path, tt.body, resp.StatusCode, e, err, tt.status, tt.why)
		}
	}
	if got := s.Stats().BadRequests; got != int64(len(tests)) {
		t.Errorf("BadRequests = %d, want %d", got, len(tests))
	}
}

// chunkJSON is the part of a stream event the tests read.
type chunkJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int    `json:"index"`
		Text  string `json:"text"`
		Delta struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"delta"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

// streamSummary decodes a whole stream: the number of events with
// content, the usage, the finish reason, whether [DONE] ended it, and the
// count of events that are not valid JSON.
type streamSummary struct {
	content   int
	text      string
	usage     *[3]int
	finish    string
	done      bool
	malformed int
	id        string
	objects   map[string]bool
}

func summarise(t *testing.T, events []sseEvent, chat bool) streamSummary {
	t.Helper()
	s := streamSummary{objects: map[string]bool{}}
	for i, e := range events {
		if e.data == "[DONE]" {
			if i != len(events)-1 {
				t.Errorf("[DONE] is event %d of %d", i, len(events))
			}
			s.done = true
			continue
		}
		var c chunkJSON
		if err := json.Unmarshal([]byte(e.data), &c); err != nil {
			s.malformed++
			continue
		}
		s.objects[c.Object] = true
		s.id = c.ID
		if c.Usage != nil {
			if len(c.Choices) != 0 {
				t.Errorf("usage event with choices: %s", e.data)
			}
			s.usage = &[3]int{c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Usage.TotalTokens}
			continue
		}
		if len(c.Choices) != 1 {
			t.Fatalf("event with %d choices: %s", len(c.Choices), e.data)
		}
		ch := c.Choices[0]
		content := ch.Text
		if chat {
			content = ch.Delta.Content
			if i == 0 && ch.Delta.Role != "assistant" {
				t.Errorf("first chat event has role %q", ch.Delta.Role)
			}
		}
		if content != "" {
			s.content++
			s.text += content
		}
		if ch.FinishReason != nil {
			s.finish = *ch.FinishReason
		}
	}
	return s
}

func TestOpenAIShapes(t *testing.T) {
	_, hs := newSim(t, OpenAIOptions{OutputTokens: Dist{Kind: DistConst, A: 10}})
	c := hs.Client()
	const prompt = `"one two three four five"`
	const messages = `[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"three more words"}]}]`
	tests := []struct {
		chat, stream, usage bool
		extra               string // more request fields
		tokens              int
		finish              string
		why                 string
	}{
		{false, false, false, ``, 10, "stop", "completion, the drawn length under the default max_tokens"},
		{false, false, false, `,"max_tokens":4`, 4, "length", "max_tokens caps the draw"},
		{false, false, false, `,"max_tokens":20,"ignore_eos":true`, 20, "length", "ignore_eos asks for max_tokens exactly"},
		{true, false, false, `,"max_completion_tokens":3`, 3, "length", "chat honours max_completion_tokens"},
		{false, true, true, ``, 10, "stop", "completion stream with usage"},
		{false, true, false, ``, 10, "stop", "completion stream without usage when not asked"},
		{true, true, true, `,"max_tokens":6`, 6, "length", "chat stream with usage, capped"},
		{true, true, true, `,"max_tokens":30,"ignore_eos":true`, 30, "length", "chat stream with ignore_eos"},
	}
	for _, tt := range tests {
		path, field, object, promptTokens := "/v1/completions", `"prompt":`+prompt, "text_completion", 5
		if tt.chat {
			path, field, object, promptTokens = "/v1/chat/completions", `"messages":`+messages, "chat.completion", 5
		}
		body := `{"model":"sim",` + field + tt.extra
		if tt.stream {
			body += `,"stream":true`
			if tt.usage {
				body += `,"stream_options":{"include_usage":true}`
			}
		}
		body += "}"
		resp := post(t, c, hs.URL+path, body)
		if tt.stream {
			events, err := readSSE(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("%s: %v", tt.why, err)
			}
			s := summarise(t, events, tt.chat)
			if tt.chat {
				object = "chat.completion.chunk"
			}
			if s.content != tt.tokens || s.finish != tt.finish || !s.done || s.malformed != 0 || len(s.objects) != 1 || !s.objects[object] ||
				len(strings.Fields(s.text)) != tt.tokens {
				t.Errorf("%s: %+v, want %d tokens, finish %q, object %s", tt.why, s, tt.tokens, tt.finish, object)
			}
			if tt.usage != (s.usage != nil) || s.usage != nil && *s.usage != [3]int{promptTokens, tt.tokens, promptTokens + tt.tokens} {
				t.Errorf("%s: usage %v, want %v", tt.why, s.usage, [3]int{promptTokens, tt.tokens, promptTokens + tt.tokens})
			}
			continue
		}
		var cj chunkJSON
		err := json.NewDecoder(resp.Body).Decode(&cj)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", tt.why, resp.StatusCode, err)
		}
		text := cj.Choices[0].Text
		if tt.chat {
			text = cj.Choices[0].Message.Content
			if cj.Choices[0].Message.Role != "assistant" {
				t.Errorf("%s: role %q", tt.why, cj.Choices[0].Message.Role)
			}
		}
		if cj.Object != object || cj.Model != "sim" || cj.Created == 0 || cj.ID == "" || len(strings.Fields(text)) != tt.tokens ||
			cj.Choices[0].FinishReason == nil || *cj.Choices[0].FinishReason != tt.finish ||
			cj.Usage == nil || cj.Usage.PromptTokens != promptTokens || cj.Usage.CompletionTokens != tt.tokens || cj.Usage.TotalTokens != promptTokens+tt.tokens {
			t.Errorf("%s: %+v", tt.why, cj)
		}
	}
}

// TestOpenAIFaults observes every injected fault from the client's side.
func TestOpenAIFaults(t *testing.T) {
	const streamBody = `{"prompt":"p %d","max_tokens":8,"stream":true,"stream_options":{"include_usage":true}}`
	const wholeBody = `{"prompt":"p %d","max_tokens":8}`

	t.Run("5xx", func(t *testing.T) {
		s, hs := newSim(t, OpenAIOptions{Faults: Faults{Status5xx: 1}})
		seen := map[int]int{}
		for i := range 30 {
			resp := post(t, hs.Client(), hs.URL+"/v1/completions", fmt.Sprintf(wholeBody, i))
			var e struct {
				Error struct{ Message, Type string }
			}
			err := json.NewDecoder(resp.Body).Decode(&e)
			resp.Body.Close()
			if err != nil || e.Error.Message == "" {
				t.Errorf("status %d without a JSON error body: %v", resp.StatusCode, err)
			}
			seen[resp.StatusCode]++
		}
		st := s.Stats()
		if seen[500] == 0 || seen[503] == 0 || seen[429] == 0 || seen[500]+seen[503]+seen[429] != 30 ||
			st.Status500 != int64(seen[500]) || st.Status503 != int64(seen[503]) || st.Status429 != int64(seen[429]) {
			t.Errorf("statuses %v, stats %+v", seen, st)
		}
	})

	t.Run("reset", func(t *testing.T) {
		s, hs := newSim(t, OpenAIOptions{Faults: Faults{Reset: 1}})
		conn, err := net.Dial("tcp", hs.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		body := fmt.Sprintf(wholeBody, 1)
		fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadAll(conn)
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("read after a reset fault: %v, want ECONNRESET", err)
		}
		if s.Stats().Resets != 1 {
			t.Errorf("stats %+v", s.Stats())
		}
	})

	t.Run("stall", func(t *testing.T) {
		s, hs := newSim(t, OpenAIOptions{Faults: Faults{Stall: 1}})
		headers := 0
		for i := range 8 {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/v1/completions", strings.NewReader(fmt.Sprintf(streamBody, i)))
			resp, err := hs.Client().Do(req)
			if err == nil {
				headers++
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("stalled request ended with %v, want the client's deadline", err)
			}
		}
		if headers == 0 || headers == 8 {
			t.Errorf("%d of 8 stalls sent headers, want some but not all", headers)
		}
		if s.Stats().Stalls != 8 {
			t.Errorf("stats %+v", s.Stats())
		}
	})

	t.Run("truncate", func(t *testing.T) {
		s, hs := newSim(t, OpenAIOptions{Faults: Faults{Truncate: 1}})
		for i := range 5 {
			resp := post(t, hs.Client(), hs.URL+"/v1/completions", fmt.Sprintf(streamBody, i))
			events, err := readSSE(resp.Body)
			resp.Body.Close()
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("truncated stream read: %v, want unexpected EOF", err)
			}
			if sum := summarise(t, events, false); sum.done || sum.content >= 8 {
				t.Errorf("truncated stream: %+v", sum)
			}
			resp = post(t, hs.Client(), hs.URL+"/v1/completions", fmt.Sprintf(wholeBody, i))
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("truncated body read: %v, want unexpected EOF", err)
			}
		}
		if s.Stats().Truncated != 10 {
			t.Errorf("stats %+v", s.Stats())
		}
	})

	t.Run("malformed", func(t *testing.T) {
		s, hs := newSim(t, OpenAIOptions{Faults: Faults{Malformed: 1}})
		resp := post(t, hs.Client(), hs.URL+"/v1/completions", fmt.Sprintf(streamBody, 1))
		events, err := readSSE(resp.Body)
		resp.Body.Close()
		sum := summarise(t, events, false)
		if err != nil || sum.malformed != 1 || !sum.done || sum.content != 7 || sum.usage == nil || sum.usage[1] != 8 {
			t.Errorf("malformed stream: %v %+v", err, sum)
		}
		resp = post(t, hs.Client(), hs.URL+"/v1/completions", fmt.Sprintf(wholeBody, 1))
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || json.Valid(body) || resp.StatusCode != 200 {
			t.Errorf("malformed body: %d %v valid=%v", resp.StatusCode, err, json.Valid(body))
		}
		if s.Stats().Malformed != 2 {
			t.Errorf("stats %+v", s.Stats())
		}
	})

	t.Run("no usage", func(t *testing.T) {
		s, hs := newSim(t, OpenAIOptions{Faults: Faults{NoUsage: 1}})
		resp := post(t, hs.Client(), hs.URL+"/v1/completions", fmt.Sprintf(streamBody, 1))
		events, err := readSSE(resp.Body)
		resp.Body.Close()
		sum := summarise(t, events, false)
		if err != nil || sum.usage != nil || !sum.done || sum.content != 8 {
			t.Errorf("no-usage stream: %v %+v", err, sum)
		}
		resp = post(t, hs.Client(), hs.URL+"/v1/completions", fmt.Sprintf(wholeBody, 1))
		var cj chunkJSON
		err = json.NewDecoder(resp.Body).Decode(&cj)
		resp.Body.Close()
		if err != nil || cj.Usage != nil || len(cj.Choices) != 1 {
			t.Errorf("no-usage body: %v %+v", err, cj)
		}
		if st := waitStats(s, func(st OpenAIStats) bool { return st.Completed == 2 }); st.NoUsage != 2 || st.Completed != 2 {
			t.Errorf("stats %+v", st)
		}
	})
}

// TestOpenAIFaultMix checks that the probabilities split the requests,
// reproducibly: the same seed and prompts give the same faults.
func TestOpenAIFaultMix(t *testing.T) {
	run := func() OpenAIStats {
		s, err := NewOpenAI(OpenAIOptions{Seed: 3, Faults: Faults{Status5xx: 0.2, Malformed: 0.2, NoUsage: 0.2}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 500 {
			req := httptest.NewRequest("POST", "/v1/completions", strings.NewReader(fmt.Sprintf(`{"prompt":"p %d","max_tokens":2}`, i)))
			s.ServeHTTP(httptest.NewRecorder(), req)
		}
		return s.Stats()
	}
	a, b := run(), run()
	if a != b {
		t.Errorf("same seed, different faults:\n%v\n%v", a, b)
	}
	for name, n := range map[string]int64{"5xx": a.Status500 + a.Status503 + a.Status429, "malformed": a.Malformed, "no usage": a.NoUsage} {
		if n < 70 || n > 130 { // 100 expected; this seed is fixed, so the test is deterministic
			t.Errorf("%s: %d of 500 at p = 0.2", name, n)
		}
	}
}

func TestOpenAIOptionsRefused(t *testing.T) {
	tests := []struct {
		opts  OpenAIOptions
		field string
		why   string
	}{
		{OpenAIOptions{Faults: Faults{Reset: 1.5}}, "Faults.Reset", "a probability above 1"},
		{OpenAIOptions{Faults: Faults{Stall: -0.1}}, "Faults.Stall", "a negative probability"},
		{OpenAIOptions{Faults: Faults{Stall: 0.6, Reset: 0.6}}, "Faults", "probabilities adding up to more than 1"},
		{OpenAIOptions{TTFT: Dist{Kind: DistMaxTokens}}, "TTFT", "max_tokens is not a delay"},
		{OpenAIOptions{OutputTokens: Dist{Kind: DistUniform, A: 5, B: 1}}, "OutputTokens", "reversed uniform bounds"},
		{OpenAIOptions{OutputTokens: Dist{Kind: DistConst, A: 5, Duration: true}}, "OutputTokens", "a duration distribution as lengths"},
		{OpenAIOptions{Models: []string{""}}, "Models", "an empty model id"},
		{OpenAIOptions{DefaultMaxTokens: -1}, "DefaultMaxTokens", "negative default max_tokens"},
	}
	for _, tt := range tests {
		var fe *FieldError
		if _, err := NewOpenAI(tt.opts); !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("NewOpenAI on %s: %v, want a FieldError on %s", tt.why, err, tt.field)
		}
	}
}

// TestOpenAIParseDists reads the three distributions and names the one it
// cannot read, with the accepted forms.
func TestOpenAIParseDists(t *testing.T) {
	var o OpenAIOptions
	if err := o.ParseDists("uniform:1:5", "50ms", "prompt:1ms:2ms"); err != nil {
		t.Fatal(err)
	}
	if o.OutputTokens.Kind != DistUniform || o.TTFT.Kind != DistConst || o.TPOT.Kind != DistPerPromptToken {
		t.Errorf("parsed %+v", o)
	}
	for _, tt := range []struct{ out, ttft, tpot, field, forms string }{
		{"50ms", "0", "0", "OutputTokens", LengthDistForms},
		{"1", "50", "0", "TTFT", DurationDistForms},
		{"1", "0", "gamma:1ms:2ms", "TPOT", DurationDistForms},
	} {
		var fe *FieldError
		err := o.ParseDists(tt.out, tt.ttft, tt.tpot)
		if !errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(fe.Err.Error(), tt.forms) {
			t.Errorf("ParseDists(%q, %q, %q) = %v, want a FieldError on %s listing the forms", tt.out, tt.ttft, tt.tpot, err, tt.field)
		}
	}
}

// TestOpenAISeeds checks that the seed fixes every draw: the same seed gives
// the same answers, another seed others, and SeedByCounter answers a
// repeated prompt differently.
func TestOpenAISeeds(t *testing.T) {
	ask := func(opts OpenAIOptions, prompts ...string) []string {
		s, err := NewOpenAI(opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range prompts {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/completions", strings.NewReader(`{"prompt":"`+p+`","max_tokens":100}`)))
			var cj chunkJSON
			if err := json.Unmarshal(rec.Body.Bytes(), &cj); err != nil {
				t.Fatal(err)
			}
			out = append(out, cj.Choices[0].Text)
		}
		return out
	}
	opts := OpenAIOptions{Seed: 1, OutputTokens: Dist{Kind: DistUniform, A: 1, B: 50}}
	a := ask(opts, "x", "y", "z")
	b := ask(opts, "z", "y", "x") // another order: the same answer per prompt
	if a[0] != b[2] || a[1] != b[1] || a[2] != b[0] {
		t.Errorf("seeded by prompt, answers depend on the order:\n%q\n%q", a, b)
	}
	opts.Seed = 2
	if c := ask(opts, "x", "y", "z"); c[0] == a[0] && c[1] == a[1] && c[2] == a[2] {
		t.Errorf("seed 2 answered as seed 1: %q", c)
	}
	opts.SeedByCounter = true
	d := ask(opts, "x", "x")
	if d[0] == d[1] {
		t.Errorf("SeedByCounter answered a repeated prompt the same: %q", d)
	}
	if e := ask(opts, "x", "x"); e[0] != d[0] || e[1] != d[1] {
		t.Errorf("SeedByCounter is not reproducible: %q vs %q", d, e)
	}
}

// TestOpenAIPacing checks, in a synctest bubble (fake time), that every
// token is sent at arrival + TTFT + the TPOTs before it, and that the
// Server-Timing header states the drawn stages.
func TestOpenAIPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := NewOpenAI(OpenAIOptions{
			TTFT: Dist{Kind: DistPerPromptToken, A: float64(time.Millisecond), B: float64(20 * time.Millisecond), Duration: true},
			TPOT: Dist{Kind: DistConst, A: float64(5 * time.Millisecond), Duration: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/v1/completions", strings.NewReader(`{"prompt":"a b c d","max_tokens":4,"ignore_eos":true,"stream":true}`))
		s.ServeHTTP(rec, req)
		sends := s.SendTimes()
		// Events: 4 tokens, the finish event, [DONE].
		if len(sends) != 6 {
			t.Fatalf("%d send times: %+v", len(sends), sends)
		}
		ttft := 4*time.Millisecond + 20*time.Millisecond
		for i := range 4 {
			want := start.Add(ttft + time.Duration(i)*5*time.Millisecond).UnixNano()
			if sends[i].UnixNano != want || sends[i].Chunk != i || sends[i].ID != "cmpl-1" || sends[i].Tokens != 1 {
				t.Errorf("token %d: %+v, want sent at +%v carrying 1 token", i, sends[i], time.Duration(want-start.UnixNano()))
			}
		}
		// The request's arrival is on its first event only; the finish and
		// [DONE] events carry no token.
		if sends[0].ArrivalUnixNano != start.UnixNano() || sends[1].ArrivalUnixNano != 0 || sends[4].Tokens != 0 || sends[5].Tokens != 0 {
			t.Errorf("send times %+v: want the arrival %d on chunk 0 only, no tokens after the 4th event", sends, start.UnixNano())
		}
		if elapsed := time.Since(start); elapsed != ttft+15*time.Millisecond {
			t.Errorf("stream took %v", elapsed)
		}

		rec = httptest.NewRecorder()
		req = httptest.NewRequest("POST", "/v1/completions", strings.NewReader(`{"prompt":"a b c d","max_tokens":4,"ignore_eos":true}`))
		start = time.Now()
		s.ServeHTTP(rec, req)
		if elapsed := time.Since(start); elapsed != ttft+15*time.Millisecond {
			t.Errorf("non-streaming response took %v", elapsed)
		}
		ms, bad := servertiming.Parse(rec.Header().Get("Server-Timing"))
		got := map[string]float64{}
		for _, m := range ms {
			got[m.Name] = m.Dur
		}
		want := map[string]float64{servertiming.MetricDispatch: 0, servertiming.MetricInference: 39, servertiming.MetricFirstToken: 39, "queue": 0, "prefill": 24, "decode": 15}
		if bad != 0 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Server-Timing %q = %v, want %v", rec.Header().Get("Server-Timing"), got, want)
		}
	})
}

// TestOpenAITrailer checks the Server-Timing trailer of a stream whose
// client accepts trailers, and its absence otherwise.
func TestOpenAITrailer(t *testing.T) {
	_, hs := newSim(t, OpenAIOptions{TTFT: Dist{Kind: DistConst, A: float64(2 * time.Millisecond), Duration: true}})
	for _, te := range []bool{true, false} {
		req, _ := http.NewRequest("POST", hs.URL+"/v1/completions", strings.NewReader(`{"prompt":"x","max_tokens":3,"stream":true}`))
		if te {
			req.Header.Set("TE", "trailers")
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		v := resp.Trailer.Get("Server-Timing")
		if !te {
			if v != "" {
				t.Errorf("trailer without TE: trailers: %q", v)
			}
			continue
		}
		ms, bad := servertiming.Parse(v)
		ok := false
		for _, m := range ms {
			ok = ok || m.Name == servertiming.MetricFirstToken && m.Dur >= 2
		}
		if bad != 0 || !ok {
			t.Errorf("Server-Timing trailer %q", v)
		}
	}
}

// waitStats waits, up to 10 s, until the stats satisfy ok (a handler
// counts after its last write, which the client may have read already).
func waitStats(s *OpenAIServer, ok func(OpenAIStats) bool) OpenAIStats {
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := s.Stats()
		if ok(st) || time.Now().After(deadline) {
			return st
		}
		time.Sleep(time.Millisecond)
	}
}

// waitGoroutines waits, up to 10 s, until at most n goroutines run.
func waitGoroutines(n int) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		g := runtime.NumGoroutine()
		if g <= n || time.Now().After(deadline) {
			return g
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOpenAIStallNoLeak checks that the handlers of stalled requests and of
// streams whose client went away end: no goroutine is left behind.
func TestOpenAIStallNoLeak(t *testing.T) {
	s, err := NewOpenAI(OpenAIOptions{Faults: Faults{Stall: 0.5}, TPOT: Dist{Kind: DistConst, A: float64(time.Hour), Duration: true}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	before := runtime.NumGoroutine()
	var conns []net.Conn
	for i := range 20 {
		conn, err := net.Dial("tcp", hs.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf(`{"prompt":"p %d","max_tokens":5,"stream":%v}`, i, i%2 == 0)
		fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		conns = append(conns, conn)
	}
	// Every request is in its handler when the counters say so.
	deadline := time.Now().Add(10 * time.Second)
	for s.Stats().Requests < 20 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g < before+20 {
		t.Fatalf("%d goroutines with 20 requests in flight, %d before", g, before)
	}
	for _, c := range conns {
		c.Close()
	}
	if g := waitGoroutines(before); g > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines 10 s after the clients left, %d before:\n%s", g, before, buf[:runtime.Stack(buf, true)])
	}
	if st := s.Stats(); st.ClientGone != 20 || st.Stalls == 0 || st.Stalls == 20 {
		t.Errorf("want 20 clients gone, some of them from stalls, some from hour-long responses: %+v", st)
	}
}

// TestOpenAICloseEndsStalls checks that Close lets http.Server.Shutdown
// return while requests stall.
func TestOpenAICloseEndsStalls(t *testing.T) {
	s, err := NewOpenAI(OpenAIOptions{Faults: Faults{Stall: 1}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	errc := make(chan error, 1)
	go func() {
		resp, err := http.Post(hs.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"x"}`))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	if st := waitStats(s, func(st OpenAIStats) bool { return st.Stalls == 1 }); st.Stalls != 1 {
		t.Fatalf("the request did not stall: %+v", st)
	}
	s.Close()
	hs.Config.SetKeepAlivesEnabled(false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Config.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown with a stalled request after Close: %v", err)
	}
	select {
	case <-errc:
	case <-time.After(10 * time.Second):
		t.Error("the stalled client was not released")
	}
}

// TestOpenAISendTimes compares, for one stream on loopback, the client's
// arrival time of every event with the server's send time. It checks that
// every event is logged, in order, under the response's id, and that
// arrival follows sending; the skew itself is reported (t.Log, and
// BenchmarkSendSkew), not asserted, since it depends on the machine's load.
func TestOpenAISendTimes(t *testing.T) {
	var jsonl bytes.Buffer
	s, hs := newSim(t, OpenAIOptions{
		TTFT:    Dist{Kind: DistConst, A: float64(time.Millisecond), Duration: true},
		TPOT:    Dist{Kind: DistConst, A: float64(time.Millisecond), Duration: true},
		SendLog: &jsonl,
	})
	resp := post(t, hs.Client(), hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":200,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`)
	events, err := readSSE(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	sends := s.SendTimes()
	// role, 200 tokens, finish, usage, [DONE]
	if len(events) != 204 || len(sends) != 204 {
		t.Fatalf("%d events, %d send times, want 204", len(events), len(sends))
	}
	skews := make([]int64, len(events))
	for i, st := range sends {
		wantTokens := 0
		if i >= 1 && i <= 200 {
			wantTokens = 1 // the role event and the last three carry none
		}
		if st.ID != "chatcmpl-1" || st.Chunk != i || st.Tokens != wantTokens || (st.ArrivalUnixNano != 0) != (i == 0) {
			t.Fatalf("send time %d: %+v, want %d tokens and the arrival on chunk 0 only", i, st, wantTokens)
		}
		if i == 0 && st.ArrivalUnixNano > st.UnixNano {
			t.Errorf("the request arrived at %d, after its first event was sent at %d", st.ArrivalUnixNano, st.UnixNano)
		}
		skews[i] = events[i].at - st.UnixNano
	}
	p50, p99 := quantiles(skews)
	t.Logf("client arrival − server send over %d events: p50 %v, p99 %v", len(skews), time.Duration(p50), time.Duration(p99))
	// The server takes its time after Flush returns and the client may read
	// before that, by as long as the scheduler keeps the server's goroutine
	// waiting on a loaded machine (5.4 ms seen under CI's -race): one event
	// proves nothing. A send time taken at the wrong moment (say, once the
	// stream ended) would put most events' arrivals before their sends, so
	// the median is what must not be negative beyond a little.
	if p50 < -int64(time.Millisecond) {
		t.Errorf("half the events arrived more than %v before they were sent (min %v)", time.Duration(-p50), time.Duration(-minOf(skews)))
	}
	lines := strings.Split(strings.TrimSpace(jsonl.String()), "\n")
	var first, second SendTime
	if len(lines) != 204 || json.Unmarshal([]byte(lines[0]), &first) != nil || first != sends[0] ||
		json.Unmarshal([]byte(lines[1]), &second) != nil || second != sends[1] {
		t.Errorf("JSONL send log: %d lines, first %q and %q, want %+v and %+v", len(lines), lines[0], lines[1], sends[0], sends[1])
	}
}

func quantiles(v []int64) (p50, p99 int64) {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2], s[(len(s)*99)/100]
}

func minOf(v []int64) int64 {
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func TestSendLogRing(t *testing.T) {
	l := &sendLog{ring: make([]sendEntry, 3)}
	for i := range 5 {
		l.add(uint64(i), i%2 == 1, i, 1, int64(100+i), 50)
	}
	got := l.entries()
	// The arrival time is kept on chunk 0 only.
	want := []SendTime{{"cmpl-2", 2, 102, 1, 0}, {"chatcmpl-3", 3, 103, 1, 0}, {"cmpl-4", 4, 104, 1, 0}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ring = %v, want the last three %v", got, want)
	}
}

// TestOpenAIHTTP2 streams over HTTP/2 without TLS (prior knowledge), and
// checks that the faults that drop an HTTP/1 connection reset the HTTP/2
// stream instead.
func TestOpenAIHTTP2(t *testing.T) {
	start := func(f Faults) (*OpenAIServer, *httptest.Server, *http.Client) {
		s, err := NewOpenAI(OpenAIOptions{Faults: f})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewUnstartedServer(s)
		hs.Config.Protocols = new(http.Protocols)
		hs.Config.Protocols.SetHTTP1(true)
		hs.Config.Protocols.SetUnencryptedHTTP2(true)
		hs.Start()
		t.Cleanup(hs.Close)
		tr := &http.Transport{Protocols: new(http.Protocols)}
		tr.Protocols.SetUnencryptedHTTP2(true)
		t.Cleanup(tr.CloseIdleConnections)
		return s, hs, &http.Client{Transport: tr}
	}
	const body = `{"prompt":"x","max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`

	_, hs, c := start(Faults{})
	resp := post(t, c, hs.URL+"/v1/completions", body)
	events, err := readSSE(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || err != nil {
		t.Fatalf("%s: %v", resp.Proto, err)
	}
	if sum := summarise(t, events, false); sum.content != 5 || !sum.done || sum.usage == nil {
		t.Errorf("HTTP/2 stream: %+v", sum)
	}

	for _, f := range []Faults{{Reset: 1}, {Truncate: 1}} {
		s, hs, c := start(f)
		req, _ := http.NewRequest("POST", hs.URL+"/v1/completions", strings.NewReader(body))
		resp, err := c.Do(req)
		if err == nil {
			_, err = readSSE(resp.Body)
			resp.Body.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "stream error") {
			t.Errorf("faults %+v over HTTP/2: %v, want a stream error", f, err)
		}
		if st := s.Stats(); st.Resets+st.Truncated != 1 {
			t.Errorf("stats %+v", st)
		}
	}
}

func TestServerTimingFormat(t *testing.T) {
	g := &gen{p: &plan{ttft: 1500 * time.Microsecond}, queue: 12 * time.Microsecond, decode: 2 * time.Second}
	got := g.serverTiming(g.queue + g.p.ttft)
	want := "aimeter-dispatch;dur=0.012, aimeter-inference;dur=2001.5, aimeter-first-token;dur=1.512, queue;dur=0.012, prefill;dur=1.5, decode;dur=2000"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if ms, bad := servertiming.Parse(got); bad != 0 || len(ms) != 6 || ms[1].Dur != 2001.5 {
		t.Errorf("Parse: %+v, %d malformed", ms, bad)
	}
}

func TestCountWords(t *testing.T) {
	tests := []struct {
		raw  string
		want int
		why  string
	}{
		{`"a b  c"`, 3, "plain string, runs of spaces"},
		{`"  "`, 0, "only spaces"},
		{`"a\nb"`, 2, "an escaped newline separates words"},
		{`"a\u00a0b"`, 2, "a Unicode space separates words"},
		{`["a b","c"]`, 3, "array of strings"},
		{`[1,2,3]`, 3, "token ids count one each"},
		{`[[1,2],[3]]`, 3, "arrays of token ids"},
		{`{}`, 0, "anything else counts nothing"},
	}
	for _, tt := range tests {
		if got := countPrompt(json.RawMessage(tt.raw)); got != tt.want {
			t.Errorf("countPrompt(%s) = %d, want %d (%s)", tt.raw, got, tt.want, tt.why)
		}
	}
	if got := countContent(json.RawMessage(`[{"type":"text","text":"x y"},{"type":"image_url"}]`)); got != 2 {
		t.Errorf("content parts: %d words, want 2", got)
	}
}

// FuzzOpenAIRequest sends arbitrary bodies to both generation endpoints:
// every answer is 200 or a 4xx with a JSON error body, never a panic.
func FuzzOpenAIRequest(f *testing.F) {
	for _, s := range []string{
		`{"prompt":"a b","max_tokens":3}`,
		`{"prompt":["a","b"],"stream":true,"stream_options":{"include_usage":true}}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"max_completion_tokens":2,"stream":true}`,
		`{"model":"nope","prompt":"x"}`, `{"prompt":[[1,2],[3]],"ignore_eos":true,"max_tokens":4}`, `[]`, `{"prompt":`, `null`,
	} {
		f.Add(s)
	}
	s, err := NewOpenAI(OpenAIOptions{OutputTokens: Dist{Kind: DistConst, A: 2}, SendLogSize: 16})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var limits struct {
			MaxTokens           *int `json:"max_tokens"`
			MaxCompletionTokens *int `json:"max_completion_tokens"`
		}
		if json.Unmarshal([]byte(body), &limits) == nil &&
			(limits.MaxTokens != nil && *limits.MaxTokens > 64 || limits.MaxCompletionTokens != nil && *limits.MaxCompletionTokens > 64) {
			t.Skip("long answers are slow and say nothing about parsing")
		}
		for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
			rec := &headWriter{h: http.Header{}, code: 200}
			s.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
			switch {
			case rec.code == 200:
			case rec.code >= 400 && rec.code < 500:
				if !json.Valid(rec.body) {
					t.Fatalf("%s %s: %d with body %q", path, body, rec.code, rec.body)
				}
			default:
				t.Fatalf("%s %s: status %d", path, body, rec.code)
			}
		}
	})
}

// headWriter is a ResponseWriter and Flusher that keeps the status and the
// first 4 KiB of the body (a fuzzed max_tokens may ask for a million
// tokens).
type headWriter struct {
	h    http.Header
	code int
	body []byte
}

func (w *headWriter) Header() http.Header { return w.h }
func (w *headWriter) WriteHeader(c int)   { w.code = c }
func (w *headWriter) Flush()              {}
func (w *headWriter) Write(b []byte) (int, error) {
	if n := min(len(b), 4096-len(w.body)); n > 0 {
		w.body = append(w.body, b[:n]...)
	}
	return len(b), nil
}
