package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"aimeter/dataset/prompts"
	"aimeter/sut"
)

// maxTokensOf is the max_tokens sent with prompt p: its own, else the
// options'; 0 sends none.
func maxTokensOf(o Options, p prompts.Prompt) int {
	if p.MaxTokens > 0 {
		return p.MaxTokens
	}
	return o.MaxTokens
}

// largestMaxTokens is the largest max_tokens any request sends, or 0 when
// some request sends none (its length is the server's choice).
func largestMaxTokens(o Options) int {
	if o.Prompts == nil {
		return o.MaxTokens
	}
	largest := 0
	for i := range o.Prompts.Len() {
		mt := maxTokensOf(o, o.Prompts.Prompt(i))
		if mt == 0 {
			return 0
		}
		largest = max(largest, mt)
	}
	return largest
}

// transportHeaders are set by net/http itself: a value in Options.Headers
// would be ignored or would break the framing.
var transportHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
	"Proxy-Connection", "Te", "Trailer", "Upgrade"}

// protectedHeaders are set by the client; Options.Headers may replace
// them only with AllowHeaderOverride.
var protectedHeaders = []string{"Content-Type", "Authorization", "Accept"}

// validHeaderName reports whether name is an HTTP token (RFC 9110 5.1).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether v has no control character but tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// addHeaders checks Options.Headers and adds them to the endpoint's
// request headers.
func (e *Endpoint) addHeaders(o Options) error {
	names := make([]string, 0, len(o.Headers))
	for k := range o.Headers {
		names = append(names, k)
	}
	slices.Sort(names) // the first error is always the same
	for _, k := range names {
		vs := o.Headers[k]
		if !validHeaderName(k) {
			return fmt.Errorf("openai: header %q: not a valid header name", k)
		}
		ck := http.CanonicalHeaderKey(k)
		switch {
		case slices.Contains(transportHeaders, ck):
			return fmt.Errorf("openai: header %s: set by the HTTP transport, it cannot be given", ck)
		case slices.Contains(protectedHeaders, ck) && !o.AllowHeaderOverride:
			return fmt.Errorf("openai: header %s: the client sets it; allow the override explicitly (Options.AllowHeaderOverride, --allow-header-override) to replace it", ck)
		case ck == "Authorization" && o.APIKey != "":
			return errors.New("openai: header Authorization given along with an API key: give one of them")
		case len(vs) == 0:
			return fmt.Errorf("openai: header %s: no value", ck)
		}
		for _, v := range vs {
			if !validHeaderValue(v) {
				return fmt.Errorf("openai: header %s: its value has a control character", ck)
			}
			if sut.IsSecretHeader(ck) && v != "" {
				e.secrets = append(e.secrets, v)
			}
		}
		e.header[ck] = slices.Clone(vs)
	}
	return nil
}

// extraMembers checks Options.ExtraBody and returns its members, each
// compacted and followed by a comma, to go into every request body.
func extraMembers(raw json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	if !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v)
		return nil, fmt.Errorf("openai: extra body: malformed JSON: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		return nil, errors.New("openai: extra body: want a JSON object ({\"key\": value, …})")
	}
	var out bytes.Buffer
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("openai: extra body: %v", err)
		}
		key := tok.(string) // an object's keys are strings; raw is valid
		if why, ok := reservedBodyKeys[key]; ok {
			return nil, fmt.Errorf("openai: extra body key %q: the client sets it from %s; leave it out of the extra body", key, why)
		}
		if seen[key] {
			return nil, fmt.Errorf("openai: extra body key %q: given twice", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("openai: extra body key %q: %v", key, err)
		}
		out.Write(jsonString(key))
		out.WriteByte(':')
		if err := json.Compact(&out, v); err != nil {
			return nil, fmt.Errorf("openai: extra body key %q: %v", key, err)
		}
		out.WriteByte(',')
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, fmt.Errorf("openai: extra body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("openai: extra body: something follows the JSON object")
	}
	return out.Bytes(), nil
}
