package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// chunk is one decoded body: a streamed chunk (choices[].delta or, for
// /v1/completions, choices[].text) or a whole non-streamed response
// (choices[].message or choices[].text). It is reused from response to
// response; decode resets it.
type chunk struct {
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage"`
	Error   *apiErr  `json:"error"`
}

type choice struct {
	Text    string  `json:"text"`
	Delta   message `json:"delta"`
	Message message `json:"message"`
}

type message struct {
	Content          string   `json:"content"`
	ReasoningContent string   `json:"reasoning_content"` // vLLM, DeepSeek
	Reasoning        string   `json:"reasoning"`         // Ollama, newer vLLM
	ToolCalls        nonEmpty `json:"tool_calls"`
}

type usage struct {
	CompletionTokens int64 `json:"completion_tokens"`
}

type apiErr struct {
	Message string `json:"message"`
}

// nonEmpty records whether a JSON value is present and not null, "" or an
// empty array or object, without keeping it.
type nonEmpty bool

func (n *nonEmpty) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch string(b) {
	case "null", `""`, "[]", "{}":
		*n = false
	default:
		*n = true
	}
	return nil
}

func (c *chunk) reset() {
	// encoding/json decodes into the elements a slice already has without
	// zeroing them, so a field missing from this body would keep the last
	// body's value.
	clear(c.Choices[:cap(c.Choices)])
	c.Choices = c.Choices[:0]
	c.Usage = nil
	c.Error = nil
}

// decode parses one JSON body into c.
func (c *chunk) decode(b []byte) error {
	c.reset()
	if err := json.Unmarshal(b, c); err != nil {
		return fmt.Errorf("malformed JSON %s: %w", quotePrefix(b), err)
	}
	return nil
}

// maxQuoted bounds the quotation of a server's body in an error message.
const maxQuoted = 256

// quotePrefix quotes the start of b for an error message: at most
// maxQuoted characters of quotation (escapes included), with "…" when b
// was cut.
func quotePrefix(b []byte) string {
	n := min(len(b), maxQuoted)
	for {
		q := strconv.Quote(string(b[:n]))
		if len(q) <= maxQuoted+2 || n == 0 {
			if n < len(b) {
				q += "…"
			}
			return q
		}
		n = n * 3 / 4
	}
}
