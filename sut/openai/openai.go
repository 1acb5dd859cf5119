// Package openai is a client of OpenAI-compatible inference servers (vLLM,
// SGLang, TGI, Ollama, llama.cpp, TensorRT-LLM's trtllm-serve, …) for
// aimeter: an Endpoint that sends each sample as one request to
// /v1/chat/completions or /v1/completions, streamed (server-sent events)
// or not, and reports the first-token time, every token's arrival time,
// the output token count, the wire bytes and a categorised error per
// sample. Run it under loadgen with sut/netsut.
package openai

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"aimeter/dataset/prompts"
	"aimeter/loadgen"
	"aimeter/sut/netsut"
	"aimeter/tokenize"
)

// The APIs an Endpoint can call.
const (
	// APIChat is POST /v1/chat/completions with "messages".
	APIChat = "chat"
	// APICompletions is POST /v1/completions with "prompt".
	APICompletions = "completions"
)

// TLSOptions configure HTTPS connections.
type TLSOptions struct {
	// CAFile is a PEM file of the certificate authorities to trust instead
	// of the system's; empty means the system's roots.
	CAFile string
	// InsecureSkipVerify accepts any server certificate (a test server
	// with a self-signed certificate); false verifies it.
	InsecureSkipVerify bool
}

// Options configure an Endpoint. Only BaseURL and Prompts are required.
type Options struct {
	// BaseURL is the server's address: "http://host:8000" (the API is then
	// under /v1) or a URL whose path ends in the API's prefix
	// ("http://host:8000/v1", "https://gw/openai/v1"), which is used as it
	// is. It may not be empty.
	BaseURL string
	// Model is the model to ask for; empty means the first model
	// GET /v1/models lists, found by Check.
	Model string
	// API is APIChat or APICompletions; empty means APIChat.
	API string
	// Stream asks for a streamed response (server-sent events) and
	// reports first-token and token times; false asks for one JSON body.
	Stream bool
	// MaxTokens is sent as max_tokens (the output length); zero sends
	// none (the server's default).
	MaxTokens int
	// IgnoreEOS sends "ignore_eos": true, so that every response has
	// MaxTokens tokens (vLLM and SGLang honour it; Ollama ignores it);
	// false sends nothing.
	IgnoreEOS bool
	// IncludeUsage, when streaming, sends stream_options.include_usage so
	// that the last chunk carries the token counts; nil means true. It is
	// not sent with Stream false (the body always has usage then).
	IncludeUsage *bool
	// APIKey is sent as "Authorization: Bearer …"; empty sends none. It
	// never appears in an error, Name, NodeName, String or the JSON of
	// the options.
	APIKey string `json:"-"`
	// TLS configures https:// URLs; the zero value trusts the system's
	// certificate authorities.
	TLS TLSOptions
	// MaxConns is how many idle connections to keep for reuse: set it to
	// the expected number of requests in flight. Zero means 512. New
	// connections are opened beyond it as needed, never queued, unless
	// LimitConns is set.
	MaxConns int
	// LimitConns makes MaxConns also the most connections open at once: a
	// request beyond it waits for a free connection, and the wait counts
	// in its latency (measured from the scheduled time), as with the kserve
	// adapter. An open-loop run that falls behind then queues in the client
	// instead of opening a connection per late request until the file
	// descriptors of client or server run out. False opens connections
	// without bound.
	LimitConns bool
	// Prompts is the data set: sample i is prompt i. It may not be nil.
	Prompts *prompts.Set
	// AllowRepeatedPrompts sends every prompt exactly as the data set has
	// it. False (a performance run) starts each request's prompt with a
	// unique nonce of 13 letters and digits and a space, so that a server
	// never serves the same prompt twice from its prefix cache when
	// loadgen reissues a sample; an accuracy run must set it. A prompt
	// with a Lead (a set built to exact lengths in a tokenizer's tokens,
	// prompts.Synthetic) gets its nonce in place of its Lead words instead:
	// as many words of the set's NonceWords, each one token, chosen by the
	// same 64-bit mix (all 64 bits when the Lead is a full nonce's, fewer
	// in a shorter prompt), so that the text sent (a completions prompt, or
	// a chat request's user content) has exactly the prompt's length in
	// that tokenizer's tokens. A chat server's template adds its own tokens
	// around the content (the server's usage counts them); they are not
	// part of that length.
	AllowRepeatedPrompts bool
	// Salt, when set, marks each request with MLPerf Endpoints'
	// per-query anti-caching salt instead of the nonce: "[salt: " and the
	// 16 hex digits of SaltOf(*Salt, the query's ResponseID), then "]".
	// In a chat request whose first message is the system prompt it ends
	// that message (after two newlines), so that it stands between the
	// system prompt and the user content: a server's prefix cache may
	// still share the system prompt between queries, never what follows.
	// In any other chat request, and in a completions request (whose
	// prompt has no system part), it starts the first message or the
	// prompt (followed by two newlines), so no two queries share any
	// prefix. The salt is added to a prompt's text, Lead included, so a
	// prompt built to an exact length in tokens arrives longer by the
	// salt's tokens: Endpoints fixes the salt's form. The salts are a
	// function of the seed and the query, so a
	// rerun with the same seed and schedule sends the same salts, and a
	// record's salt is SaltOf(seed, its seq id + 1). Nil sends the nonce
	// (see AllowRepeatedPrompts). It cannot be set with
	// AllowRepeatedPrompts, whose prompts go out exactly, nor with History.
	Salt *uint64
	// MaxEventBytes bounds one server-sent event (and, ×16, a whole
	// non-streamed body); a larger one ends the sample with a decode
	// error. Zero means DefaultMaxEventBytes.
	MaxEventBytes int
	// MaxTokenTimes bounds the token times kept per sample (the rest are
	// counted in Stats.TokenTimesDropped). Zero means the largest
	// max_tokens sent (MaxTokens or a prompt's own) + 25 % + 16, or
	// 65 536 when a request goes without max_tokens, and never more than
	// 65 536.
	MaxTokenTimes int
	// Headers are extra HTTP headers sent with every request (and with
	// GET /v1/models). A header the client sets itself is replaced
	// (User-Agent, say), except Content-Type, Authorization and Accept,
	// which are refused unless AllowHeaderOverride is set; Authorization
	// is refused along with APIKey in any case. Headers the HTTP
	// transport owns (Host, Content-Length, Transfer-Encoding, Connection,
	// …) are always refused. The values of headers whose names look
	// secret (sut.IsSecretHeader) are scrubbed from error messages like
	// the API key; no value appears in String or the JSON of the options.
	Headers http.Header `json:"-"`
	// AllowHeaderOverride lets Headers replace Content-Type,
	// Authorization and Accept.
	AllowHeaderOverride bool
	// ExtraBody is a JSON object whose members are added to every request
	// body (vendor parameters such as top_k, or chat_template_kwargs); nil
	// or empty adds none. A key the client sets itself (model, stream,
	// stream_options, max_tokens, ignore_eos, temperature, messages,
	// prompt) or a repeated key is an error of New, naming it. The values
	// are sent exactly as given (compacted); they never appear in String.
	ExtraBody json.RawMessage `json:"-"`
	// Temperature is sent as temperature; nil sends none (the server's
	// default). It must be finite and not negative.
	Temperature *float64
	// HTTPClient picks the HTTP client of the requests: ClientAuto (or
	// empty) uses the specialised HTTP/1.1 client for http:// URLs and
	// net/http for https:// ones; ClientH1 the specialised client (http://
	// only); ClientNetHTTP net/http's Transport always. Check and
	// NodeName always use net/http.
	HTTPClient string
	// Tokenizer counts the output tokens of a response whose server
	// reports no usage, from its text; nil counts the chunks with content
	// of a streamed response (one token a chunk) and 0 for a whole one.
	// The server's usage, when present, is always the count.
	Tokenizer tokenize.Tokenizer
	// History, when set, makes the chat sessions of the run carry the
	// server's own answers (see History): the assistant messages of a
	// prompt that follows an earlier turn are that turn's answers, not
	// the data set's. Nil sends every prompt as the data set has it.
	History *History
}

// CategoryUnexpectedContentType is the error category (loadgen.WithCategory)
// of a 2xx response whose Content-Type is not what the request asks for:
// text/event-stream (or application/json) to a streamed request,
// application/json to a whole one. A proxy's or a login page's HTML, say.
const CategoryUnexpectedContentType = netsut.CategoryUnexpectedContentType

// reservedBodyKeys are the keys of the request body the client sets
// itself, with what sets them, for the error of an ExtraBody that repeats
// one.
var reservedBodyKeys = map[string]string{
	"model":          "the model (Options.Model, --served-model)",
	"stream":         "streaming (Options.Stream, --stream)",
	"stream_options": "streaming (Options.Stream and IncludeUsage)",
	"max_tokens":     "the output length (Options.MaxTokens, --output-tokens, or a prompt's max_tokens)",
	"ignore_eos":     "Options.IgnoreEOS (--ignore-eos)",
	"temperature":    "Options.Temperature (--temperature)",
	"messages":       "the prompts",
	"prompt":         "the prompts",
}

// String describes the options without the API key.
func (o Options) String() string {
	key := ""
	if o.APIKey != "" {
		key = " api-key=(set)"
	}
	if o.Temperature != nil {
		key += " Temperature=" + strconv.FormatFloat(*o.Temperature, 'g', -1, 64)
	}
	if len(o.Headers) > 0 {
		names := make([]string, 0, len(o.Headers))
		for k := range o.Headers {
			names = append(names, k)
		}
		slices.Sort(names)
		key += " Headers=" + strings.Join(names, ",")
	}
	if len(o.ExtraBody) > 0 {
		key += " ExtraBody=(set)"
	}
	salt := ""
	if o.Salt != nil {
		salt = fmt.Sprintf(" Salt=%d", *o.Salt)
	}
	return fmt.Sprintf("openai.Options{BaseURL=%s Model=%q API=%q Stream=%v MaxTokens=%d IgnoreEOS=%v MaxConns=%d LimitConns=%v AllowRepeatedPrompts=%v%s%s}",
		redact(o.BaseURL), o.Model, o.API, o.Stream, o.MaxTokens, o.IgnoreEOS, o.MaxConns, o.LimitConns, o.AllowRepeatedPrompts, salt, key)
}

// GoString is String, so that %#v does not print the API key either.
func (o Options) GoString() string { return o.String() }

// redact removes the password of a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// maxTokenTimesCap is the most token times kept per sample.
const maxTokenTimesCap = 65536

// maxText bounds the generated text kept per sample for Response.Data.
const maxText = 4 << 20

// Endpoint is an OpenAI-compatible server, as a netsut.Endpoint. Create it
// with New; it is safe for concurrent use.
type Endpoint struct {
	opts     Options
	base     string // ".../v1", no trailing slash
	display  string // base without a password, for messages
	reqURL   *url.URL
	header   http.Header // shared by every request, never written after New
	tr       *http.Transport
	h1       *h1Client // the specialised HTTP/1.1 client; nil: net/http
	salt     uint64
	warm     atomic.Bool // the requests are a warm-up's (Warmup)
	maxEvent int
	maxTimes int
	hdrBytes int64    // estimate of a request's start line and headers
	extra    []byte   // ExtraBody's members, each followed by a comma
	secrets  []string // scrubbed from messages: the API key, secret header values
	modelMu  sync.Mutex
	model    string
	bodies   atomic.Pointer[bodies]
	pool     sync.Pool // *call
	stats    counters
	tmplReq  http.Request
}

var (
	_ netsut.Endpoint  = (*Endpoint)(nil)
	_ netsut.NodeNamer = (*Endpoint)(nil)
)

// New checks the options and returns an Endpoint. It does not contact the
// server: Check does.
func New(o Options) (*Endpoint, error) {
	if o.BaseURL == "" {
		return nil, errors.New("openai: no base URL")
	}
	u, err := url.Parse(strings.TrimRight(o.BaseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("openai: base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("openai: base URL %s: want http:// or https://", u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %s: no host", u.Redacted())
	}
	if u.Path == "" {
		u.Path = "/v1"
	}
	switch o.API {
	case "":
		o.API = APIChat
	case APIChat, APICompletions:
	default:
		return nil, fmt.Errorf("openai: API %q: want %q or %q", o.API, APIChat, APICompletions)
	}
	if o.Prompts == nil {
		return nil, errors.New("openai: no prompts")
	}
	if o.Salt != nil && (o.AllowRepeatedPrompts || o.History != nil) {
		return nil, errors.New("openai: a salt changes every prompt; it cannot be sent with the prompts exactly (AllowRepeatedPrompts) or with a session's history")
	}
	if o.MaxTokens < 0 || o.MaxConns < 0 || o.MaxEventBytes < 0 || o.MaxTokenTimes < 0 {
		return nil, errors.New("openai: MaxTokens, MaxConns, MaxEventBytes and MaxTokenTimes must not be negative")
	}
	if o.MaxConns == 0 {
		o.MaxConns = 512
	}
	e := &Endpoint{opts: o, base: u.String(), display: u.Redacted(), maxEvent: o.MaxEventBytes, maxTimes: o.MaxTokenTimes, model: o.Model}
	if e.maxEvent == 0 {
		e.maxEvent = DefaultMaxEventBytes
	}
	if e.maxTimes == 0 {
		e.maxTimes = maxTokenTimesCap
		if mt := largestMaxTokens(o); mt > 0 {
			e.maxTimes = min(mt+mt/4+16, maxTokenTimesCap)
		}
	}
	if t := o.Temperature; t != nil && (math.IsNaN(*t) || math.IsInf(*t, 0) || *t < 0) {
		return nil, fmt.Errorf("openai: temperature %v: want a finite number ≥ 0", *t)
	}
	if e.extra, err = extraMembers(o.ExtraBody); err != nil {
		return nil, err
	}
	e.maxTimes = min(e.maxTimes, maxTokenTimesCap)
	path := "/chat/completions"
	if o.API == APICompletions {
		path = "/completions"
	}
	e.reqURL = u.JoinPath(path)
	tlsConf := &tls.Config{InsecureSkipVerify: o.TLS.InsecureSkipVerify}
	if o.TLS.CAFile != "" {
		pem, err := os.ReadFile(o.TLS.CAFile)
		if err != nil {
			return nil, fmt.Errorf("openai: CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("openai: CA file %s: no PEM certificate in it", o.TLS.CAFile)
		}
		tlsConf.RootCAs = pool
	}
	e.tr = &http.Transport{
		// No proxy: a proxy would be measured along with the server.
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        o.MaxConns,
		MaxIdleConnsPerHost: o.MaxConns,
		MaxConnsPerHost:     limit(o.LimitConns, o.MaxConns),
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		// The bytes counted are the bytes on the wire, and gzip would
		// cost the client CPU the benchmark measures.
		DisableCompression: true,
		TLSClientConfig:    tlsConf,
		// Each connection's read buffer: the body is read through the
		// call's own 16 KiB reader, whose large reads bypass this buffer,
		// so 4 KiB costs no throughput and saves memory per open stream
		// (10 000 streams: 4–7 KiB less each, measured).
		ReadBufferSize: 4 << 10,
	}
	e.header = http.Header{"Content-Type": {"application/json"}, "User-Agent": {"aimeter"}}
	if o.Stream {
		e.header["Accept"] = []string{"text/event-stream"}
	}
	if o.APIKey != "" {
		e.header["Authorization"] = []string{"Bearer " + o.APIKey}
		e.secrets = append(e.secrets, o.APIKey)
	}
	if err := e.addHeaders(o); err != nil {
		return nil, err
	}
	switch {
	case o.HTTPClient == ClientNetHTTP:
	case o.HTTPClient == ClientH1 && u.Scheme != "http":
		return nil, fmt.Errorf("openai: HTTP client %q: only for http:// URLs, not %s", ClientH1, u.Redacted())
	case o.HTTPClient == ClientH1, (o.HTTPClient == "" || o.HTTPClient == ClientAuto) && u.Scheme == "http":
		e.h1 = newH1Client(e.reqURL.Host, e.reqURL.RequestURI(), e.header, o.MaxConns, o.LimitConns)
	case o.HTTPClient == "" || o.HTTPClient == ClientAuto:
	default:
		return nil, fmt.Errorf("openai: HTTP client %q: want %q, %q or %q", o.HTTPClient, ClientAuto, ClientH1, ClientNetHTTP)
	}
	e.tmplReq = http.Request{Method: http.MethodPost, URL: e.reqURL, Host: e.reqURL.Host, Header: e.header,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	// "POST /path HTTP/1.1\r\n", "Host: …\r\n", the headers, "Content-Length:
	// NNN\r\n" and the blank line.
	e.hdrBytes = int64(len("POST  HTTP/1.1\r\n")+len(e.reqURL.RequestURI())) + int64(len("Host: \r\n")+len(e.reqURL.Host)) +
		int64(len("Content-Length: 0000\r\n")) + 2
	for k, vs := range e.header {
		for _, v := range vs {
			e.hdrBytes += int64(len(k) + len(v) + 4)
		}
	}
	var seed [8]byte
	_, _ = rand.Read(seed[:]) // crypto/rand.Read does not fail
	e.salt = binary.LittleEndian.Uint64(seed[:])
	e.pool.New = func() any { return e.newCall() }
	b, err := e.buildBodies(o.Model)
	if err != nil {
		return nil, err
	}
	e.bodies.Store(b)
	return e, nil
}

// Model returns the model the requests ask for: Options.Model, or the one
// Check found.
func (e *Endpoint) Model() string {
	e.modelMu.Lock()
	defer e.modelMu.Unlock()
	return e.model
}

// Name describes the server for sut_name: its URL, model and API.
func (e *Endpoint) Name() string {
	m := e.Model()
	if m == "" {
		m = "(first served)"
	}
	mode := "non-streaming"
	if e.opts.Stream {
		mode = "streaming"
	}
	return fmt.Sprintf("OpenAI-compatible server %s (model %s, %s API, %s)", e.display, m, e.opts.API, mode)
}

// Close closes the idle connections.
func (e *Endpoint) Close() error {
	e.tr.CloseIdleConnections()
	if e.h1 != nil {
		e.h1.closeIdle()
	}
	return nil
}

// bodies are the request bodies of every prompt, cut where the nonce goes:
// request i is pre[i] + nonce + post[i]. With Options.Salt the cut is
// where the salt goes, and saltAfter[i] says that the salt follows text
// (the system prompt) rather than preceding it.
type bodies struct {
	pre, post [][]byte
	saltAfter []bool
	// lead[i], when not 0, is the number of nonce words that go between
	// pre[i] and post[i] in place of the prompt's Lead words (words).
	lead  []int
	words [][]byte // the set's NonceWords, JSON-escaped, each after a space
	shift uint     // bits of the nonce each word stands for: log2(len(words))
}

// buildBodies encodes every prompt's request once, so that a request costs
// two copies and no JSON encoding.
func (e *Endpoint) buildBodies(model string) (*bodies, error) {
	var head bytes.Buffer
	head.WriteByte('{')
	if model != "" {
		head.WriteString(`"model":`)
		head.Write(jsonString(model))
		head.WriteByte(',')
	}
	if e.opts.Stream {
		head.WriteString(`"stream":true,`)
		if e.opts.IncludeUsage == nil || *e.opts.IncludeUsage {
			head.WriteString(`"stream_options":{"include_usage":true},`)
		}
	} else {
		head.WriteString(`"stream":false,`)
	}
	if e.opts.IgnoreEOS {
		head.WriteString(`"ignore_eos":true,`)
	}
	if t := e.opts.Temperature; t != nil {
		head.WriteString(`"temperature":` + strconv.FormatFloat(*t, 'g', -1, 64) + ",")
	}
	head.Write(e.extra)
	set := e.opts.Prompts
	b := &bodies{pre: make([][]byte, set.Len()), post: make([][]byte, set.Len()), saltAfter: make([]bool, set.Len())}
	if ws := set.NonceWords(); len(ws) >= 2 && !e.opts.AllowRepeatedPrompts && e.opts.Salt == nil {
		b.lead = make([]int, set.Len())
		b.shift = uint(bits.Len(uint(len(ws))) - 1)
		for _, w := range ws[:1<<b.shift] {
			q := jsonString(w)
			b.words = append(b.words, append([]byte{' '}, q[1:len(q)-1]...))
		}
	}
	var pre, post bytes.Buffer
	for i := range set.Len() {
		p := set.Prompt(i)
		pre.Reset()
		post.Reset()
		pre.Write(head.Bytes())
		if mt := maxTokensOf(e.opts, p); mt > 0 {
			pre.WriteString(`"max_tokens":`)
			pre.WriteString(strconv.Itoa(mt))
			pre.WriteByte(',')
		}
		switch {
		case e.opts.API == APICompletions && p.Text == "":
			return nil, fmt.Errorf("openai: prompt %d of %s is a chat conversation; the completions API needs plain prompts", i, set.Name())
		case e.opts.API == APICompletions:
			pre.WriteString(`"prompt":"`)
			post.Write(jsonString(b.rest(i, p))[1:])
			post.WriteByte('}')
		case p.Text != "":
			pre.WriteString(`"messages":[{"role":"user","content":"`)
			post.Write(jsonString(b.rest(i, p))[1:])
			post.WriteString(`}]}`)
		default:
			pre.WriteString(`"messages":[{"role":`)
			pre.Write(jsonString(p.Messages[0].Role))
			pre.WriteString(`,"content":"`)
			if content := jsonString(p.Messages[0].Content); e.opts.Salt != nil && p.Messages[0].Role == "system" {
				// The salt ends the system prompt.
				pre.Write(content[1 : len(content)-1])
				post.WriteByte('"')
				b.saltAfter[i] = true
			} else {
				post.Write(content[1:])
			}
			post.WriteByte('}')
			for _, m := range p.Messages[1:] {
				post.WriteString(`,{"role":`)
				post.Write(jsonString(m.Role))
				post.WriteString(`,"content":`)
				post.Write(jsonString(m.Content))
				post.WriteByte('}')
			}
			post.WriteString(`]}`)
		}
		b.pre[i] = bytes.Clone(pre.Bytes())
		b.post[i] = bytes.Clone(post.Bytes())
	}
	return b, nil
}

// rest returns the text of plain prompt p (prompt i) that follows the
// nonce: all of it, or, when the nonce takes the place of its Lead words,
// what follows them (and it records the Lead in b.lead).
func (b *bodies) rest(i int, p prompts.Prompt) string {
	if b.lead == nil || p.Lead == 0 {
		return p.Text
	}
	b.lead[i] = p.Lead
	return p.Text[p.LeadBytes():]
}

// appendWordNonce appends the nonce of request id as n words of b.words:
// the bits of the same mix as appendNonce's, b.shift a word.
func (e *Endpoint) appendWordNonce(body []byte, b *bodies, id loadgen.ResponseID, n int) []byte {
	x := uint64(id) ^ e.salt
	if e.warm.Load() {
		x ^= warmMask
	}
	x = mix64(x)
	mask := uint64(1)<<b.shift - 1
	// ⌈64/shift⌉ words take every bit, so a full nonce is a bijection of
	// the mix (the last word may stand for fewer bits).
	for range n {
		body = append(body, b.words[x&mask]...)
		x >>= b.shift
	}
	return body
}

// jsonString encodes s as a JSON string, quotes included, without
// escaping HTML characters.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// appendNonce appends the nonce of request id: 13 base-32 digits of a
// bijective mix of id and the endpoint's random salt (so that two
// requests of one Endpoint never share a nonce, and two runs most likely
// do not either), then a space.
func (e *Endpoint) appendNonce(b []byte, id loadgen.ResponseID) []byte {
	const digits = "abcdefghijklmnopqrstuvwxyz234567"
	x := uint64(id) ^ e.salt
	if e.warm.Load() {
		x ^= warmMask
	}
	// The splitmix64 finaliser, a bijection of uint64.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	for range 13 {
		b = append(b, digits[x&31])
		x >>= 5
	}
	return append(b, ' ')
}

// SaltOf is the salt of query id under seed: 16 hex digits of a bijective
// mix of the two, so that two queries of one run never share a salt and
// the same seed and query always give the same one.
func SaltOf(seed uint64, id loadgen.ResponseID) string {
	var b [16]byte
	return string(appendSaltHex(b[:0], seed, id))
}

func appendSaltHex(b []byte, seed uint64, id loadgen.ResponseID) []byte {
	const digits = "0123456789abcdef"
	// An odd multiple of id plus the mixed seed, mixed again: a bijection
	// of id for each seed, and two seeds' streams are not shifts of each
	// other.
	x := mix64(mix64(seed) + uint64(id)*0x9e3779b97f4a7c15)
	for i := 60; i >= 0; i -= 4 {
		b = append(b, digits[(x>>i)&15])
	}
	return b
}

// mix64 is the splitmix64 finaliser, a bijection of uint64.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// warmMask is mixed into the nonce's salt and the salt's seed during a
// warm-up (Warmup): an arbitrary constant (splitmix64's increment).
const warmMask = 0x9e3779b97f4a7c15

// Warmup marks the requests that follow as a warm-up's (on) or a measured
// run's (off, the default). A warm-up is a separate LoadGen run with the
// same seeds, so its queries have the measured run's query ids and
// samples: its nonces and salts are drawn from another stream (the salt of
// warm-up query id is SaltOf(seed ^ 0x9e3779b97f4a7c15, id)), or it would
// put into the server's prefix cache the very prompts the measured run
// then sends. It is safe for concurrent use; call it between runs.
func (e *Endpoint) Warmup(on bool) { e.warm.Store(on) }

// appendSalt appends the salt of request id as JSON string content: two
// newlines and the marker when it follows the system prompt, the marker
// and two newlines when it leads the prompt.
func (e *Endpoint) appendSalt(b []byte, id loadgen.ResponseID, after bool) []byte {
	if after {
		b = append(b, `\n\n`...)
	}
	seed := *e.opts.Salt
	if e.warm.Load() {
		seed ^= warmMask
	}
	b = append(b, "[salt: "...)
	b = appendSaltHex(b, seed, id)
	b = append(b, ']')
	if !after {
		b = append(b, `\n\n`...)
	}
	return b
}

// call is the per-request state, pooled.
type call struct {
	body    []byte
	index   uint64   // the sample's prompt
	nonce   [14]byte // a History request's nonce
	rd      bytes.Reader
	rc      io.ReadCloser // io.NopCloser(&rd), made once
	wrote   atomic.Bool
	wroteAt time.Time
	trace   httptrace.ClientTrace
	getBody func() (io.ReadCloser, error)
	cb      countingReader
	br      *bufio.Reader
	sse     sseReader
	h1head  h1Head
	h1body  h1Body
	chunk   chunk
	parsed  parsed
	text    []byte
	times   []int64
	buf     []byte
}

func (e *Endpoint) newCall() *call {
	c := &call{br: bufio.NewReaderSize(nil, 16<<10)}
	c.trace.WroteRequest = func(httptrace.WroteRequestInfo) {
		c.wroteAt = time.Now()
		c.wrote.Store(true)
	}
	// The transport sends a request again only when not one byte of it
	// was written (a kept-alive connection the server had closed while
	// idle): no retry hides a failure of the server.
	c.getBody = func() (io.ReadCloser, error) {
		c.rd.Reset(c.body)
		return c.rc, nil
	}
	// A body net/http knows to be in memory (a *bytes.Reader, here behind
	// io.NopCloser) goes out in one write with the headers; any other is
	// written after a separate flush of the headers.
	c.rc = io.NopCloser(&c.rd)
	return c
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// release returns c to the pool if the transport is done with it: it
// reported the end of the write (httptrace's WroteRequest, called once the
// body is written or the write failed). Otherwise the transport may still
// read the body, and c is left to the garbage collector.
func (e *Endpoint) release(c *call) {
	c.cb.r = nil
	c.br.Reset(nil)
	c.h1body = h1Body{}
	if !c.wrote.Load() {
		return
	}
	if cap(c.text) > 64<<10 {
		c.text = nil
	}
	if cap(c.buf) > 1<<20 {
		c.buf = nil
	}
	e.pool.Put(c)
}

// Do sends sample s and fills resp: see netsut.Endpoint. Latency is
// loadgen's (from the scheduled time); Do adds the first-token time (the
// arrival of the first chunk with content, reasoning or a tool call), the
// arrival time of every such chunk, the output tokens (usage, else the
// count of chunks), the generated text, and the bytes each way: the body
// plus an estimate of the HTTP/1.1 start line and headers (the headers as
// sent and received, without chunked-encoding framing; under HTTP/2, whose
// headers are compressed, an overestimate).
func (e *Endpoint) Do(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
	e.do(ctx, r, s, resp)
}

// limit is n where on is set, else 0 (no limit).
func limit(on bool, n int) int {
	if on {
		return n
	}
	return 0
}

// clock is what Do uses of the loadgen.Responder, so that benchmarks can
// drive the request path without a loadgen run.
type clock interface {
	Now() int64
	At(time.Time) int64
	FirstTokenAt(loadgen.ResponseID, int64, []byte)
}

func (e *Endpoint) do(ctx context.Context, r clock, s loadgen.QuerySample, resp *loadgen.Response) {
	issued := r.Now()
	e.stats.requests.Add(1)
	b := e.bodies.Load()
	if s.Index >= uint64(len(b.pre)) {
		e.stats.errors.Add(1)
		resp.Err = loadgen.WithCategory(netsut.CategoryClient, fmt.Errorf("sample index %d is outside the %d prompts", s.Index, len(b.pre)))
		return
	}
	c := e.pool.Get().(*call)
	defer e.release(c)
	c.index = s.Index
	if h := e.opts.History; h != nil && h.follows(s.Index) {
		var nonce []byte
		if !e.opts.AllowRepeatedPrompts {
			nonce = e.appendNonce(c.nonce[:0], s.ID)
		}
		body, err := h.appendBody(c.body[:0], b.pre[s.Index], nonce, e.opts.Prompts.Prompt(int(s.Index)), s.Index)
		if err != nil {
			e.stats.errors.Add(1)
			resp.Err = loadgen.WithCategory(netsut.CategoryClient, err)
			return
		}
		c.body = body
	} else {
		c.body = append(c.body[:0], b.pre[s.Index]...)
		switch {
		case b.lead != nil && b.lead[s.Index] > 0:
			c.body = e.appendWordNonce(c.body, b, s.ID, b.lead[s.Index])
		case e.opts.Salt != nil:
			c.body = e.appendSalt(c.body, s.ID, b.saltAfter[s.Index])
		case !e.opts.AllowRepeatedPrompts:
			c.body = e.appendNonce(c.body, s.ID)
		}
		c.body = append(c.body, b.post[s.Index]...)
	}
	c.text, c.times = c.text[:0], c.times[:0]
	resp.RequestBytes = int64(len(c.body)) + e.hdrBytes
	if e.h1 != nil {
		e.doH1(ctx, r, s, resp, c, issued)
		return
	}
	c.rd.Reset(c.body)
	c.wrote.Store(false)

	req := e.tmplReq.WithContext(httptrace.WithClientTrace(ctx, &c.trace))
	req.Body, req.GetBody = c.rc, c.getBody
	req.ContentLength = int64(len(c.body))
	hres, err := e.tr.RoundTrip(req)
	if err != nil {
		e.stats.errors.Add(1)
		resp.Err = e.failure(ctx, err, false)
		return
	}
	defer hres.Body.Close()
	// Late, because the transport may report the write after the response
	// has come.
	defer func() {
		if c.wrote.Load() {
			e.stats.lateness.Record(r.At(c.wroteAt) - issued)
		}
	}()
	c.cb.r, c.cb.n = hres.Body, 0
	c.br.Reset(&c.cb)
	ct := hres.Header.Get("Content-Type")
	switch {
	case hres.StatusCode/100 != 2:
		resp.Err = e.statusError(hres.StatusCode, hres.Status, c)
	case isJSON(ct), ct == "" && !e.opts.Stream:
		// A streamed request may get a whole JSON body (a server that
		// does not stream, or an error).
		resp.Err = e.readWhole(ctx, resp, c)
	case e.opts.Stream && (ct == "" || isMediaType(ct, "text/event-stream")):
		resp.Err = e.readStream(ctx, r, s, resp, c)
	default:
		resp.Err = e.contentTypeError(hres.Status, ct, c)
	}
	resp.ResponseBytes = c.cb.n + responseHeaderBytes(hres)
	e.finish(resp, c)
}

// finish counts a failed sample, or hands a successful one its text and
// token times.
func (e *Endpoint) finish(resp *loadgen.Response, c *call) {
	if resp.Err != nil {
		e.stats.errors.Add(1)
		return
	}
	if len(c.text) > 0 {
		resp.Data = bytes.Clone(c.text)
	}
	if h := e.opts.History; h != nil {
		h.record(c.index, c.text)
	}
	if len(c.times) > 0 {
		// A copy: c goes back to the pool before netsut hands resp to
		// the Responder.
		resp.TokenTimes = append([]int64(nil), c.times...)
	}
}

// responseHeaderBytes estimates the status line and headers of res as
// HTTP/1.1 sends them.
func responseHeaderBytes(res *http.Response) int64 {
	n := int64(len("HTTP/1.1 200 OK\r\n\r\n"))
	for k, vs := range res.Header {
		for _, v := range vs {
			n += int64(len(k) + len(v) + 4)
		}
	}
	return n
}

// statusError is the error of a non-2xx response: the status and at most
// maxQuoted bytes of the body.
func (e *Endpoint) statusError(code int, status string, c *call) error {
	var prefix [maxQuoted + 1]byte
	n, _ := io.ReadFull(c.br, prefix[:])
	msg := fmt.Sprintf("POST %s: HTTP %s", e.reqURL.Redacted(), status)
	if n > 0 {
		msg += ": " + e.scrub(quotePrefix(prefix[:n]))
	}
	return netsut.HTTPError(code, errors.New(msg))
}

// isMediaType reports whether the Content-Type ct is of media type mt
// (lower case), whatever its parameters; it does not allocate.
func isMediaType(ct, mt string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.EqualFold(strings.TrimSpace(ct), mt)
}

// isJSON reports whether the Content-Type ct is application/json or
// application/…+json.
func isJSON(ct string) bool {
	if isMediaType(ct, "application/json") {
		return true
	}
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	return len(ct) > len("application/+json") && strings.EqualFold(ct[:len("application/")], "application/") &&
		strings.EqualFold(ct[len(ct)-len("+json"):], "+json")
}

// contentTypeError is the error of a 2xx response of another content type
// than the request asks for: the status, the content type and at most
// maxQuoted bytes of the body.
func (e *Endpoint) contentTypeError(status, ct string, c *call) error {
	var prefix [maxQuoted + 1]byte
	n, _ := io.ReadFull(c.br, prefix[:])
	want := "application/json"
	if e.opts.Stream {
		want = "text/event-stream (or application/json)"
	}
	msg := fmt.Sprintf("POST %s: HTTP %s with Content-Type %q, want %s", e.reqURL.Redacted(), status, ct, want)
	if n > 0 {
		msg += ": " + e.scrub(quotePrefix(prefix[:n]))
	}
	return loadgen.WithCategory(CategoryUnexpectedContentType, errors.New(msg))
}

// scrub removes the API key and the values of secret-looking headers from
// text the server sent (a server that echoes the request's headers would
// put them in an error message).
func (e *Endpoint) scrub(s string) string {
	for _, v := range e.secrets {
		s = strings.ReplaceAll(s, v, "(secret)")
	}
	return s
}

// failure categorises an error of sending the request or reading the
// response (netsut.Classify); started says the response had begun.
func (e *Endpoint) failure(ctx context.Context, err error, started bool) error {
	where := "POST " + e.reqURL.Redacted()
	if ctxErr := ctx.Err(); ctxErr != nil {
		cat := netsut.ClassOf(ctx, err, started)
		switch {
		case cat == netsut.CategoryStreamStalled:
			return loadgen.WithCategory(cat, fmt.Errorf("%s: the response stopped before the request's deadline", where))
		case errors.Is(ctxErr, context.DeadlineExceeded):
			return loadgen.WithCategory(cat, fmt.Errorf("%s: no complete response before the request's deadline", where))
		}
		return loadgen.WithCategory(cat, fmt.Errorf("%s: cancelled: %w", where, ctxErr))
	}
	return loadgen.WithCategory(netsut.ClassOf(ctx, err, started), fmt.Errorf("%s: %w", where, err))
}

// isDone reports whether an event is the end marker.
func isDone(data []byte) bool {
	return string(bytes.TrimSpace(data)) == "[DONE]"
}

// readStream reads the server-sent events of a streamed response.
func (e *Endpoint) readStream(ctx context.Context, r clock, s loadgen.QuerySample, resp *loadgen.Response, c *call) error {
	c.sse.reset(c.br, e.maxEvent)
	var chunks int64
	usageTokens := int64(-1)
	for {
		data, err := c.sse.next()
		t := r.Now() // as soon as the event's bytes are in, before decoding
		if err != nil {
			switch {
			case err == io.EOF || errors.Is(err, errPartialEvent):
				if ctx.Err() == nil {
					return loadgen.WithCategory(netsut.CategoryStreamTruncated, fmt.Errorf("POST %s: the stream ended without [DONE] after %d chunks with content", e.reqURL.Redacted(), chunks))
				}
			case errors.Is(err, ErrEventTooLarge):
				return loadgen.WithCategory(netsut.CategoryMalformedSSE, fmt.Errorf("POST %s: %w", e.reqURL.Redacted(), err))
			}
			return e.failure(ctx, err, true)
		}
		if isDone(data) {
			break
		}
		p := &c.parsed
		if err := p.decode(data, &c.chunk); err != nil {
			return loadgen.WithCategory(netsut.CategoryMalformedJSON, errors.New(e.scrub(fmt.Sprintf("POST %s: chunk %d: %v", e.reqURL.Redacted(), chunks+1, err))))
		}
		if p.hasErr {
			return loadgen.WithCategory(netsut.CategoryServerError, fmt.Errorf("POST %s: the stream carried an error: %s", e.reqURL.Redacted(), e.scrub(quotePrefix(p.str(p.errMsg)))))
		}
		if p.hasUsage {
			usageTokens = p.usage
		}
		text, ok := p.content()
		if !ok {
			continue
		}
		chunks++
		if len(c.text)+len(text) <= maxText {
			c.text = append(c.text, text...)
		}
		if chunks == 1 {
			// The first token's time is its bytes' arrival, as the token
			// times have it: one figure for TTFT and the first token.
			r.FirstTokenAt(s.ID, t, c.text)
		}
		if len(c.times) < e.maxTimes {
			c.times = append(c.times, t)
		} else {
			e.stats.timesDropped.Add(1)
		}
	}
	e.drain(c)
	resp.Tokens = e.countTokens(usageTokens, chunks, c.text)
	return nil
}

// countTokens returns the output tokens of a response: the server's
// usage, else the tokenizer's count of its text (when the text was kept
// whole), else the count of content chunks (-1 for a whole response); it
// counts a missing usage and a usage that disagrees with the chunks.
func (e *Endpoint) countTokens(usageTokens, chunks int64, text []byte) int64 {
	if usageTokens < 0 {
		e.stats.missingUsage.Add(1)
		if e.opts.Tokenizer != nil && len(text) < maxText {
			return int64(e.opts.Tokenizer.Count(string(text)))
		}
		return chunks
	}
	if chunks >= 0 && usageTokens != chunks {
		e.stats.mismatches.Add(1)
	}
	return usageTokens
}

// drain reads what follows [DONE] (normally only the end of the chunked
// body), so that the connection goes back to the pool; a body that goes
// on is closed instead.
func (e *Endpoint) drain(c *call) {
	for range 16 {
		n := max(c.br.Buffered(), 1)
		if _, err := c.br.Discard(n); err != nil {
			return
		}
	}
}

// readWhole reads and decodes a non-streamed response.
func (e *Endpoint) readWhole(ctx context.Context, resp *loadgen.Response, c *call) error {
	limit := 16 * e.maxEvent
	if cap(c.buf) < 4096 {
		c.buf = make([]byte, 0, 4096)
	}
	c.buf = c.buf[:0]
	for {
		if len(c.buf) == cap(c.buf) {
			c.buf = append(c.buf, 0)[:len(c.buf)]
		}
		n, err := c.br.Read(c.buf[len(c.buf):cap(c.buf)])
		c.buf = c.buf[:len(c.buf)+n]
		if len(c.buf) > limit {
			return loadgen.WithCategory(netsut.CategoryProtocol, fmt.Errorf("POST %s: %w: a response body of more than %d bytes", e.reqURL.Redacted(), ErrEventTooLarge, limit))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return e.failure(ctx, err, true)
		}
	}
	p := &c.parsed
	if err := p.decode(c.buf, &c.chunk); err != nil {
		return loadgen.WithCategory(netsut.CategoryMalformedJSON, errors.New(e.scrub(fmt.Sprintf("POST %s: %v", e.reqURL.Redacted(), err))))
	}
	if p.hasErr {
		return loadgen.WithCategory(netsut.CategoryServerError, fmt.Errorf("POST %s: the response is an error: %s", e.reqURL.Redacted(), e.scrub(quotePrefix(p.str(p.errMsg)))))
	}
	if p.choices == 0 {
		return loadgen.WithCategory(netsut.CategoryMalformedJSON, fmt.Errorf("POST %s: a response without choices: %s", e.reqURL.Redacted(), e.scrub(quotePrefix(c.buf))))
	}
	text, _ := p.content()
	c.text = append(c.text, text...)
	usageTokens := int64(-1)
	if p.hasUsage {
		usageTokens = p.usage
	}
	// No chunks to check the usage against.
	resp.Tokens = max(e.countTokens(usageTokens, -1, c.text), 0)
	return nil
}
