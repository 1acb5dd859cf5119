package openai

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll returns every event of s read through a reader of bufSize bytes,
// one byte at a time from the source when oneByte is set, and the error
// that ended it.
func readAll(s string, bufSize, max int, oneByte bool) ([]string, error) {
	var src io.Reader = strings.NewReader(s)
	if oneByte {
		src = iotest.OneByteReader(src)
	}
	var r sseReader
	r.reset(bufio.NewReaderSize(src, bufSize), max)
	var evs []string
	for {
		d, err := r.next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, string(d))
	}
}

func TestSSE(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
		err      error
	}{
		{"one event", "data: a\n\n", []string{"a"}, io.EOF},
		{"no space after the colon", "data:a\n\n", []string{"a"}, io.EOF},
		{"only one leading space is removed", "data:  a\n\n", []string{" a"}, io.EOF},
		{"CRLF line ends", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}, io.EOF},
		{"multi-line data joined with newlines", "data: a\ndata: b\ndata\n\n", []string{"a\nb\n"}, io.EOF},
		{"comments and other fields skipped", ": ping\nevent: x\nid: 3\nretry: 10\ndata: a\n\n", []string{"a"}, io.EOF},
		{"events without data skipped", "event: x\n\n: c\n\ndata: a\n\n", []string{"a"}, io.EOF},
		{"extra blank lines", "\n\n\ndata: a\n\n\n\n", []string{"a"}, io.EOF},
		{"an empty data line is an event", "data:\n\n", []string{""}, io.EOF},
		{"[DONE] is data like any other", "data: [DONE]\n\n", []string{"[DONE]"}, io.EOF},
		{"a colon in the value is kept", "data: {\"a\":1}\n\n", []string{`{"a":1}`}, io.EOF},
		{"end inside an event", "data: a\n\ndata: b\n", []string{"a"}, errPartialEvent},
		{"end inside a line", "data: a\n\ndata: b", []string{"a"}, errPartialEvent},
		{"event over the limit", "data: " + strings.Repeat("x", 65) + "\n\n", nil, ErrEventTooLarge},
		{"lines adding up over the limit", strings.Repeat("data: "+strings.Repeat("x", 20)+"\n", 4) + "\n", nil, ErrEventTooLarge},
		{"line longer than the buffer but within the limit", "data: " + strings.Repeat("y", 40) + "\n\n", []string{strings.Repeat("y", 40)}, io.EOF},
		{"endless line", strings.Repeat("z", 1000), nil, ErrEventTooLarge},
	} {
		for _, oneByte := range []bool{false, true} {
			evs, err := readAll(tc.in, 16, 64, oneByte)
			if !errors.Is(err, tc.err) || strings.Join(evs, "|") != strings.Join(tc.want, "|") || len(evs) != len(tc.want) {
				t.Errorf("%s (one byte a read: %v): %q, %v; want %q, %v", tc.name, oneByte, evs, err, tc.want, tc.err)
			}
		}
	}
}

// TestSSENoAllocs: reading events allocates nothing once the buffers have
// grown.
func TestSSENoAllocs(t *testing.T) {
	stream := strings.Repeat(delta("hello"), 100)
	src := strings.NewReader(stream)
	br := bufio.NewReaderSize(src, 4096)
	var r sseReader
	allocs := testing.AllocsPerRun(20, func() {
		src.Reset(stream)
		br.Reset(src)
		r.reset(br, 1024)
		for {
			if _, err := r.next(); err != nil {
				break
			}
		}
	})
	if allocs > 0 {
		t.Errorf("%v allocations per 100 events", allocs)
	}
}

func FuzzSSE(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "data: a\r\n\r\n", ": c\ndata: x\ndata: y\n\n", "data: [DONE]\n\n",
		"event: e\nid: 1\n\n", "data", "data:\n\n\n", strings.Repeat("x", 300), "\r\n\r\n",
		delta("hi") + usage5 + "data: [DONE]\n\n",
	} {
		f.Add(s, uint8(16))
	}
	f.Fuzz(func(t *testing.T, s string, size uint8) {
		const max = 100
		evs, err := readAll(s, int(size)+16, max, false)
		if err == nil {
			t.Fatal("ended without an error")
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, errPartialEvent) && !errors.Is(err, ErrEventTooLarge) {
			t.Fatalf("unexpected error %v", err)
		}
		for _, ev := range evs {
			if len(ev) > max {
				t.Fatalf("event of %d bytes over the limit %d", len(ev), max)
			}
		}
		// The events do not depend on how the bytes arrive.
		evs2, err2 := readAll(s, int(size)+16, max, true)
		if strings.Join(evs, "\x00") != strings.Join(evs2, "\x00") || len(evs) != len(evs2) || (err == io.EOF) != (err2 == io.EOF) {
			t.Fatalf("one byte a read: %q, %v; whole: %q, %v", evs2, err2, evs, err)
		}
	})
}

// FuzzChunk checks the decoder of bodies against encoding/json: the small
// scanner (or its fall-back) must read every body exactly as
// encoding/json reads it into the chunk struct.
func FuzzChunk(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"delta":{"content":"a"}}]}`, `{"choices":[{"text":"b"}],"usage":{"completion_tokens":3}}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}`, `{"choices":[{"delta":{"reasoning_content":"r"}}]}`,
		`{"error":{"message":"x"}}`, `{"choices":[{"message":{"content":"\u00e9\n"}}]}`, `{`, `null`, `[]`,
		`{"choices":[{"delta":{"tool_calls":null}}]}`, `{"choices":[{"delta":{"Content":"a","content":"b"}}]}`,
		`{"choices":[{"delta":{"content":"a"},"delta":{"reasoning":"b"}}]}`, `{"choices":null,"usage":{"completion_tokens":1e2}}`,
		`{"choices":[{"delta":{"content":"w\u00f6rld \"q\" \\ \/ \t"}},{"delta":{"content":5}}]}`,
		`{"usage":{"completion_tokens":-12345678901234567890}}`, "{\"choices\":[{\"delta\":{\"Reasoning_Content\":\"a\",\"reasoning\x7fcontent\":\"b\"}}]}",
		`{"CHOICES":[{"text":"a"}],"choices":[{"text":"b"}]}`, `{"choices":[{"text":"a"}]} x`, `{"choices":[{"text":"a\u0041"}]}`, "{\"choices\":[{\"text\":\"\xff\"}]}",
		`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":null}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want chunk
		errWant := want.decode([]byte(s))
		var wp parsed
		if errWant == nil {
			wp.fromChunk(&want)
		}
		var got parsed
		stale := chunk{Choices: []choice{{Text: "stale", Delta: message{Content: "stale", ToolCalls: true}}}}
		got.scratch = append(got.scratch, "stale"...)
		got.fields[fText] = span{0, 5}
		errGot := got.decode([]byte(s), &stale)
		if (errGot == nil) != (errWant == nil) {
			t.Fatalf("error %v, encoding/json's %v", errGot, errWant)
		}
		if errGot != nil {
			if len(errGot.Error()) > maxQuoted+200 {
				t.Fatalf("error of %d bytes", len(errGot.Error()))
			}
			return
		}
		gt, ga := got.content()
		wt, wa := wp.content()
		if string(gt) != string(wt) || ga != wa || got.choices != wp.choices || got.hasUsage != wp.hasUsage ||
			got.usage != wp.usage || got.hasErr != wp.hasErr || string(got.str(got.errMsg)) != string(wp.str(wp.errMsg)) {
			t.Fatalf("scanner: %q %v choices %d usage %v %d error %v %q\nencoding/json: %q %v choices %d usage %v %d error %v %q",
				gt, ga, got.choices, got.hasUsage, got.usage, got.hasErr, got.str(got.errMsg),
				wt, wa, wp.choices, wp.hasUsage, wp.usage, wp.hasErr, wp.str(wp.errMsg))
		}
	})
}

// TestChunkFastPath: the usual chunks decode without encoding/json and
// without allocating.
func TestChunkFastPath(t *testing.T) {
	var p parsed
	var c chunk
	for _, s := range []string{
		`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" tok\n"},"logprobs":null,"finish_reason":null}]}`,
		`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":64}}`,
		`{"choices":[{"index":0,"message":{"role":"assistant","content":"hello world"},"finish_reason":"stop"}],"usage":{"completion_tokens":2}}`,
	} {
		b := []byte(s)
		allocs := testing.AllocsPerRun(50, func() {
			if err := p.decode(b, &c); err != nil {
				t.Fatal(err)
			}
		})
		if (allocs > 0 && !raceEnabled) || len(c.Choices) != 0 {
			t.Errorf("%s: %v allocations, encoding/json used: %v", s, allocs, len(c.Choices) != 0)
		}
	}
}
