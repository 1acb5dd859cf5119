package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"aimeter/dataset/prompts"
	"aimeter/loadgen"
)

// TestRequestOptions checks that the extra headers, the extra body, the
// temperature and each prompt's max_tokens reach the server, on the chat
// and models requests, and that Content-Type variants are accepted.
func TestRequestOptions(t *testing.T) {
	set, err := prompts.New("p", []prompts.Prompt{{Text: "a", MaxTokens: 3}, {Text: "b"}, {Messages: []prompts.Message{{Role: "user", Content: "c"}}, MaxTokens: 9}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bodies []map[string]any
	var headers []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		headers = append(headers, r.Header.Clone())
		mu.Unlock()
		if r.Method == http.MethodGet {
			io.WriteString(w, `{"data":[{"id":"m1"}]}`)
			return
		}
		var b map[string]any
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Errorf("body %s: %v", raw, err)
		}
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, `{"choices":[{"message":{"content":"x"}}],"usage":{"completion_tokens":1}}`)
	}))
	defer srv.Close()
	temp := 0.25
	ep := newEndpoint(t, Options{BaseURL: srv.URL, MaxTokens: 5, Prompts: set, AllowRepeatedPrompts: true, Temperature: &temp,
		Headers:   http.Header{"x-tenant": {"blue"}, "User-Agent": {"bench/2"}, "X-Api-Key": {"k-secret-42"}},
		ExtraBody: json.RawMessage(`{ "top_k": 20, "chat_template_kwargs": {"enable_thinking": false} }`)})
	if err := ep.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := run(t, ep, runOpts{samples: 3, mode: loadgen.AccuracyOnly}) // each prompt once
	if res.FailedSamples != 0 {
		t.Fatalf("errors %+v", res.Errors)
	}
	if len(headers) != 4 || len(bodies) != 3 {
		t.Fatalf("%d requests, %d bodies; want the models request and 3", len(headers), len(bodies))
	}
	for _, h := range headers {
		if h.Get("X-Tenant") != "blue" || h.Get("User-Agent") != "bench/2" || h.Get("X-Api-Key") != "k-secret-42" {
			t.Errorf("headers %v: want the extra ones", h)
		}
	}
	maxTok := map[string]float64{}
	for _, b := range bodies {
		if b["temperature"] != 0.25 || b["top_k"] != float64(20) || fmt.Sprint(b["chat_template_kwargs"]) != "map[enable_thinking:false]" || b["model"] != "m1" {
			t.Errorf("body %v: want temperature, the extra members and the model", b)
		}
		p, _ := b["messages"].([]any)[0].(map[string]any)["content"].(string)
		maxTok[p], _ = b["max_tokens"].(float64)
	}
	if maxTok["a"] != 3 || maxTok["b"] != 5 || maxTok["c"] != 9 {
		t.Errorf("max_tokens by prompt %v, want a 3 (its own), b 5 (the run's), c 9", maxTok)
	}
	if ep.maxTimes != 9+9/4+16 {
		t.Errorf("token times kept %d, want from the largest max_tokens, 9", ep.maxTimes)
	}
	if s := fmt.Sprint(ep.opts); strings.Contains(s, "k-secret-42") || strings.Contains(s, "top_k") || !strings.Contains(s, "Headers=User-Agent,X-Api-Key,x-tenant") {
		t.Errorf("String %s: want header names, no values, no extra body", s)
	}
	if js, _ := json.Marshal(ep.opts); strings.Contains(string(js), "k-secret-42") {
		t.Errorf("JSON of the options %s holds a header value", js)
	}
	if got := ep.scrub("echo k-secret-42"); got != "echo (secret)" {
		t.Errorf("scrub: %q", got)
	}
}

func TestOptionErrors(t *testing.T) {
	set := testPrompts(t, 1)
	nan, neg := math.NaN(), -0.5
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"extra body sets max_tokens", Options{ExtraBody: json.RawMessage(`{"top_p":1,"max_tokens":3}`)},
			`extra body key "max_tokens": the client sets it from the output length`},
		{"extra body sets model", Options{ExtraBody: json.RawMessage(`{"model":"x"}`)}, `extra body key "model"`},
		{"extra body sets messages", Options{ExtraBody: json.RawMessage(`{"messages":[]}`)}, `extra body key "messages"`},
		{"extra body key twice", Options{ExtraBody: json.RawMessage(`{"a":1,"a":2}`)}, `extra body key "a": given twice`},
		{"extra body not an object", Options{ExtraBody: json.RawMessage(`[1]`)}, "extra body: want a JSON object"},
		{"extra body malformed", Options{ExtraBody: json.RawMessage(`{"a":`)}, "extra body: malformed JSON"},
		{"Content-Type header", Options{Headers: http.Header{"content-type": {"text/plain"}}}, "header Content-Type: the client sets it; allow the override"},
		{"Authorization header", Options{Headers: http.Header{"Authorization": {"Bearer x"}}}, "header Authorization: the client sets it"},
		{"Authorization header and API key", Options{Headers: http.Header{"Authorization": {"Bearer x"}}, AllowHeaderOverride: true, APIKey: "k"},
			"along with an API key"},
		{"Host header", Options{Headers: http.Header{"Host": {"h"}}, AllowHeaderOverride: true}, "header Host: set by the HTTP transport"},
		{"bad header name", Options{Headers: http.Header{"X Y": {"v"}}}, `header "X Y": not a valid header name`},
		{"bad header value", Options{Headers: http.Header{"X-Y": {"a\r\nb"}}}, "control character"},
		{"temperature NaN", Options{Temperature: &nan}, "temperature NaN"},
		{"temperature negative", Options{Temperature: &neg}, "temperature -0.5"},
	} {
		tc.o.BaseURL, tc.o.Prompts = "http://x", set
		if _, err := New(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// Allowed explicitly, a header replaces the client's.
	ep, err := New(Options{BaseURL: "http://x", Prompts: set, AllowHeaderOverride: true,
		Headers: http.Header{"Authorization": {"Basic abc"}, "Content-Type": {"application/json; charset=utf-8"}}})
	if err != nil || ep.header.Get("Authorization") != "Basic abc" || ep.header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("override: %v %v", err, ep)
	}
}

func TestMediaTypes(t *testing.T) {
	for ct, json := range map[string]bool{"application/json": true, " Application/JSON ; charset=utf-8": true,
		"application/problem+json": true, "application/+json": false, "text/json": false, "text/html": false, "": false} {
		if isJSON(ct) != json {
			t.Errorf("isJSON(%q) = %v", ct, !json)
		}
	}
	if !isMediaType("text/event-stream; charset=utf-8", "text/event-stream") || isMediaType("text/event-streams", "text/event-stream") {
		t.Error("isMediaType")
	}
	if n := testing.AllocsPerRun(100, func() { isJSON("application/vnd.x+json; charset=utf-8") }); n != 0 {
		t.Errorf("isJSON allocates %v", n)
	}
}
