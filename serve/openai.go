package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"aimeter/clocksync"
	"aimeter/sut/servertiming"
)

// OpenAIOptions configure the OpenAI-compatible simulator. The zero value
// serves model "sim" as fast as it can (no delays, no faults), answering
// max_tokens tokens (DefaultMaxTokens when the request has none).
type OpenAIOptions struct {
	// Models are the model ids served and listed by GET /v1/models; a
	// request naming another model gets 404. Nil: ["sim"]. A request with
	// no model gets the first.
	Models []string
	// OwnedBy is the owned_by of every listed model. Empty: "aimeter".
	OwnedBy string
	// OutputTokens is the distribution of output lengths (ParseLengthDist).
	// The request's max_tokens (or else its max_completion_tokens) caps the draw,
	// unless the request sets ignore_eos, which asks for exactly max_tokens
	// tokens, as vLLM does. A draw is rounded and at least 1. Zero value
	// (constant 0): the request's max_tokens, as DistMaxTokens.
	OutputTokens Dist
	// DefaultMaxTokens stands for max_tokens in a request without one. 0:
	// 256.
	DefaultMaxTokens int
	// TTFT is the distribution of the time from a request's arrival to its
	// first token (ParseDurationDist). Zero value: no delay.
	TTFT Dist
	// TPOT is the distribution of the time between consecutive output
	// tokens, drawn once per token. Zero value: no delay.
	TPOT Dist
	// Faults are the probabilities of injected faults. Zero value: none.
	Faults Faults
	// Seed is the run seed. Every request draws its fault, output length,
	// delays and words from a generator seeded with a hash of Seed and the
	// request's prompt (the bytes of its prompt field, or of every
	// message's role and content, as sent), so that a run is reproducible
	// whatever the order or concurrency of its requests, and the same
	// prompt always gets the same answer. See SeedByCounter.
	Seed uint64
	// SeedByCounter seeds each request with a hash of Seed and the
	// request's arrival number (1, 2, …) instead of its prompt: different
	// answers to repeated prompts, reproducible only when requests arrive
	// one at a time. False: seeded by prompt.
	SeedByCounter bool
	// SendLogSize is the number of entries of the in-memory send-time ring
	// read by SendTimes. 0: 65,536. Negative: no ring.
	SendLogSize int
	// SendLog, when set, receives every send time as one JSON line
	// ({"id":"cmpl-1","chunk":0,"unix_ns":…,"arrival_unix_ns":…}, then
	// {"id":"cmpl-1","chunk":1,"unix_ns":…,"tokens":1}, …; see SendTime),
	// written under a lock from
	// the handlers; wrap a file in a bufio.Writer and flush it after
	// Close. The first write error stops the copy and is returned by
	// SendLogErr. Nil: no copy.
	SendLog io.Writer
	// CacheResponses simulates a fault, the result cache that MLPerf's
	// audit test TEST04 exists to detect (loadgen-reference.md §12): a
	// request whose prompt the server has answered before is answered at
	// once, without its TTFT and TPOT delays (the answer itself is the
	// same, as it is seeded by the prompt). For testing `aimeter audit
	// TEST04`, never for benchmarking. False: every request waits its
	// delays.
	CacheResponses bool
}

// Faults are probabilities, each in [0, 1] and together at most 1, of the
// faults the simulator injects. One uniform draw per request picks at most
// one fault.
type Faults struct {
	// Status5xx answers HTTP 500, 503 or 429 (equally likely) with an
	// OpenAI-style JSON error body, before any delay.
	Status5xx float64
	// Reset closes the connection with a TCP RST (SO_LINGER 0) before any
	// response; over HTTP/2 the stream is reset instead.
	Reset float64
	// Stall accepts the request and, with even odds, sends the response
	// headers or not, then never answers until the client goes away (or
	// the server is closed).
	Stall float64
	// Truncate stops a response part of the way (a stream after a random
	// number of its tokens, before `[DONE]`; a non-streaming body half
	// way) and drops the connection.
	Truncate float64
	// Malformed replaces one streamed token event with a `data:` line of
	// invalid JSON (the stream goes on and ends normally); a non-streaming
	// body is cut to invalid JSON with a correct Content-Length.
	Malformed float64
	// NoUsage leaves out the usage (the usage event of a stream that asked
	// for it with stream_options.include_usage; the usage object of a
	// non-streaming response).
	NoUsage float64
}

// OpenAIStats counts what the simulator did. Each injected fault kind has
// its own counter.
type OpenAIStats struct {
	Requests     int64 // generation requests received (completions and chat)
	Streams      int64 // of them, streaming
	Completed    int64 // responses written to the end (malformed and no-usage ones included)
	BadRequests  int64 // answered 4xx: bad JSON, unknown model, wrong method or path
	ClientGone   int64 // responses cut short because the client went away or the server closed
	Chunks       int64 // SSE events written (every data: line)
	OutputTokens int64 // tokens written
	Status500    int64 // injected HTTP 500
	Status503    int64 // injected HTTP 503
	Status429    int64 // injected HTTP 429
	Resets       int64 // injected connection resets
	Stalls       int64 // injected stalls
	Truncated    int64 // injected truncations
	Malformed    int64 // injected malformed events or bodies
	NoUsage      int64 // injected missing usage
	CacheHits    int64 // requests answered from the simulated cache (CacheResponses)
}

// String writes the stats on one line.
func (s OpenAIStats) String() string {
	return fmt.Sprintf("requests %d (streams %d), completed %d, bad requests %d, client gone %d, chunks %d, output tokens %d; faults: 500 %d, 503 %d, 429 %d, reset %d, stall %d, truncate %d, malformed %d, no usage %d",
		s.Requests, s.Streams, s.Completed, s.BadRequests, s.ClientGone, s.Chunks, s.OutputTokens,
		s.Status500, s.Status503, s.Status429, s.Resets, s.Stalls, s.Truncated, s.Malformed, s.NoUsage) + s.cacheHits()
}

func (s OpenAIStats) cacheHits() string {
	if s.CacheHits == 0 {
		return ""
	}
	return fmt.Sprintf("; simulated cache hits %d", s.CacheHits)
}

// stats are the live counters behind OpenAIStats.
type stats struct {
	requests, streams, completed, badRequests, clientGone, chunks, outputTokens atomic.Int64
	s500, s503, s429, resets, stalls, truncated, malformed, noUsage             atomic.Int64
	cacheHits                                                                   atomic.Int64
	// For the metrics only (metrics.go): requests being answered, prompt
	// tokens accepted, and prompt tokens looked up in and found in the
	// simulated cache.
	running, promptTokens, prefixQueries, prefixHits atomic.Int64
}

// OpenAIServer is the OpenAI-compatible streaming simulator, an
// http.Handler serving
//
//	GET  /v1/models
//	POST /v1/completions
//	POST /v1/chat/completions
//	GET  /health
//
// Responses have the shapes OpenAI and vLLM send. A streaming response is
// Server-Sent Events: for chat, first an event with the assistant role and
// empty content (sent at once, before the first token, as OpenAI does: a
// client must time the first token by the first non-empty content, not the
// first event); then one event per token, each token one word followed by
// a space; then an event with empty content and the finish_reason ("stop",
// or "length" when max_tokens cut the draw or ignore_eos was set); then,
// when stream_options.include_usage is set, an event with empty choices and
// the usage; then `data: [DONE]`.
//
// Prompt tokens are counted as words (runs of non-space characters) of the
// prompt, or of the text of all messages; a prompt given as token ids
// counts one per id.
//
// Token i is sent at arrival + TTFT + TPOT₁ + … + TPOTᵢ₋₁, each time
// measured from the request's arrival (not by cumulative sleeps), with one
// reused timer per request. A non-streaming response is sent whole at the
// time its last token would have been.
//
// Server-Timing: a non-streaming response carries the header
//
//	Server-Timing: aimeter-dispatch;dur=Q, aimeter-inference;dur=P+D, aimeter-first-token;dur=Q+P+D, queue;dur=Q, prefill;dur=P, decode;dur=D
//
// (milliseconds, the metric names of package sut/servertiming): Q is the
// measured time from the request's arrival to the start of the simulated
// generation (reading and decoding the body), P the drawn TTFT, D the sum of
// the drawn TPOTs. A streaming response carries it as an HTTP trailer, with
// aimeter-first-token;dur=Q+P, when the request says it accepts trailers
// (TE: trailers); otherwise not at all.
//
// Close ends stalls and streams in progress, so that http.Server.Shutdown
// returns promptly.
type OpenAIServer struct {
	opts       OpenAIOptions
	models     map[string][]byte // id → JSON-quoted id
	firstModel []byte
	modelsBody []byte
	tails      [2][][]byte // [completions, chat][word] pre-rendered event tails
	maxTokens  int
	zeroDelay  bool
	stats      stats
	seq        atomic.Uint64
	sendLog    *sendLog
	closed     chan struct{}
	closeOnce  sync.Once
	bufs       sync.Pool // *[]byte
	cache      sync.Map  // prompt hash → struct{}: the prompts answered (CacheResponses)
	metrics    http.Handler
}

var _ http.Handler = (*OpenAIServer)(nil)

// words are the output vocabulary: one word per token.
var words = [...]string{
	"the", "of", "and", "to", "in", "a", "is", "that", "for", "it",
	"as", "was", "with", "be", "by", "on", "not", "he", "this", "are",
	"or", "his", "from", "at", "which", "but", "have", "an", "had", "they",
	"you", "were", "their", "one", "all", "we", "can", "her", "has", "there",
	"been", "if", "more", "when", "will", "would", "who", "so", "no", "model",
	"token", "server", "time", "first", "stream", "data", "load", "test", "rate", "query",
	"sample", "latency", "window", "batch",
}

// FieldError is an option of OpenAIOptions that is out of range or
// cannot be read (Check, ParseDists): Field is its path from
// OpenAIOptions ("TTFT", "Faults.Reset"; "Faults" for the faults
// together), Err says what is wrong without naming the field.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return "serve: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Check returns a *FieldError for the first option out of range, nil if
// all are in range.
func (opts OpenAIOptions) Check() error {
	bad := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
	}
	sum := 0.0
	for _, x := range [...]struct {
		name string
		v    float64
	}{{"Status5xx", opts.Faults.Status5xx}, {"Reset", opts.Faults.Reset}, {"Stall", opts.Faults.Stall}, {"Truncate", opts.Faults.Truncate}, {"Malformed", opts.Faults.Malformed}, {"NoUsage", opts.Faults.NoUsage}} {
		if !(x.v >= 0 && x.v <= 1) {
			return bad("Faults."+x.name, "%v: a probability is in [0, 1]", x.v)
		}
		sum += x.v
	}
	if sum > 1+1e-9 {
		return bad("Faults", "the fault probabilities add up to %v, more than 1 (one fault at most per request)", sum)
	}
	if opts.OutputTokens.Duration {
		return bad("OutputTokens", "a distribution of durations, not of lengths")
	}
	if opts.OutputTokens.Kind == DistPerPromptToken {
		return bad("OutputTokens", "cannot be prompt: (per prompt token)")
	}
	for _, d := range [...]struct {
		name string
		d    Dist
	}{{"TTFT", opts.TTFT}, {"TPOT", opts.TPOT}} {
		if d.d.Kind == DistMaxTokens {
			return bad(d.name, "cannot be max_tokens")
		}
		if err := d.d.check(); err != nil {
			return &FieldError{Field: d.name, Err: err}
		}
	}
	if err := opts.OutputTokens.check(); err != nil {
		return &FieldError{Field: "OutputTokens", Err: err}
	}
	if opts.DefaultMaxTokens < 0 {
		return bad("DefaultMaxTokens", "%d is negative", opts.DefaultMaxTokens)
	}
	for _, m := range opts.Models {
		if m == "" {
			return bad("Models", "an empty model id")
		}
	}
	return nil
}

// ParseDists sets OutputTokens, TTFT and TPOT from their text forms
// (ParseLengthDist, ParseDurationDist); a form it cannot read is a
// *FieldError whose Err lists the accepted forms.
func (opts *OpenAIOptions) ParseDists(outputTokens, ttft, tpot string) error {
	var err error
	if opts.OutputTokens, err = ParseLengthDist(outputTokens); err != nil {
		return &FieldError{Field: "OutputTokens", Err: fmt.Errorf("%w (accepted forms: %s)", err, LengthDistForms)}
	}
	if opts.TTFT, err = ParseDurationDist(ttft); err != nil {
		return &FieldError{Field: "TTFT", Err: fmt.Errorf("%w (accepted forms: %s)", err, DurationDistForms)}
	}
	if opts.TPOT, err = ParseDurationDist(tpot); err != nil {
		return &FieldError{Field: "TPOT", Err: fmt.Errorf("%w (accepted forms: %s)", err, DurationDistForms)}
	}
	return nil
}

// NewOpenAI returns a simulator with the given options, or a *FieldError
// naming the option that is out of range (Check).
func NewOpenAI(opts OpenAIOptions) (*OpenAIServer, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	if len(opts.Models) == 0 {
		opts.Models = []string{"sim"}
	}
	if opts.OwnedBy == "" {
		opts.OwnedBy = "aimeter"
	}
	s := &OpenAIServer{
		opts:      opts,
		models:    make(map[string][]byte, len(opts.Models)),
		maxTokens: opts.DefaultMaxTokens,
		zeroDelay: opts.TTFT.isZero() && opts.TPOT.isZero(),
		closed:    make(chan struct{}),
	}
	if s.maxTokens == 0 {
		s.maxTokens = 256
	}
	if s.opts.OutputTokens.Kind == DistConst && s.opts.OutputTokens.A == 0 {
		s.opts.OutputTokens = Dist{Kind: DistMaxTokens}
	}
	created := time.Now().Unix()
	var list bytes.Buffer
	list.WriteString(`{"object":"list","data":[`)
	for i, m := range opts.Models {
		q, _ := json.Marshal(m) // a string always marshals
		s.models[m] = q
		if i == 0 {
			s.firstModel = q
		} else {
			list.WriteByte(',')
		}
		ob, _ := json.Marshal(opts.OwnedBy)
		fmt.Fprintf(&list, `{"id":%s,"object":"model","created":%d,"owned_by":%s}`, q, created, ob)
	}
	list.WriteString("]}")
	s.modelsBody = list.Bytes()
	for _, w := range words {
		s.tails[0] = append(s.tails[0], []byte(`"text":"`+w+` ","logprobs":null,"finish_reason":null}]}`+"\n\n"))
		s.tails[1] = append(s.tails[1], []byte(`"delta":{"content":"`+w+` "},"logprobs":null,"finish_reason":null}]}`+"\n\n"))
	}
	size := opts.SendLogSize
	if size == 0 {
		size = 1 << 16
	}
	if size > 0 || opts.SendLog != nil {
		s.sendLog = &sendLog{w: opts.SendLog}
		if size > 0 {
			s.sendLog.ring = make([]sendEntry, size)
		}
	}
	s.bufs.New = func() any { b := make([]byte, 0, 1024); return &b }
	s.registerMetrics()
	return s, nil
}

// Stats returns the counters so far.
func (s *OpenAIServer) Stats() OpenAIStats {
	c := &s.stats
	return OpenAIStats{
		Requests: c.requests.Load(), Streams: c.streams.Load(), Completed: c.completed.Load(),
		BadRequests: c.badRequests.Load(), ClientGone: c.clientGone.Load(), Chunks: c.chunks.Load(),
		OutputTokens: c.outputTokens.Load(),
		Status500:    c.s500.Load(), Status503: c.s503.Load(), Status429: c.s429.Load(),
		Resets: c.resets.Load(), Stalls: c.stalls.Load(), Truncated: c.truncated.Load(),
		Malformed: c.malformed.Load(), NoUsage: c.noUsage.Load(), CacheHits: c.cacheHits.Load(),
	}
}

// SendTimes returns the send-time ring, oldest first: at most SendLogSize
// entries, the latest ones.
func (s *OpenAIServer) SendTimes() []SendTime { return s.sendLog.entries() }

// SendLogErr returns the first error writing OpenAIOptions.SendLog.
func (s *OpenAIServer) SendLogErr() error { return s.sendLog.err() }

// Close ends stalled requests and responses in progress by dropping their
// connections (streams end without `[DONE]`), and drops later requests that
// have a delay to wait the same way. It returns nil; call it before
// http.Server.Shutdown.
func (s *OpenAIServer) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return nil
}

// ServeHTTP serves one request.
func (s *OpenAIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/completions", "/v1/chat/completions":
		if r.Method != http.MethodPost {
			s.badRequest(w, http.StatusMethodNotAllowed, "use POST")
			return
		}
		s.generate(w, r, r.URL.Path == "/v1/chat/completions")
	case "/v1/models":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.badRequest(w, http.StatusMethodNotAllowed, "use GET")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(s.modelsBody)))
		w.Write(s.modelsBody)
	case "/health":
		w.WriteHeader(http.StatusOK)
	case MetricsPath:
		s.metrics.ServeHTTP(w, r)
	case clocksync.Path:
		// The clock of the shards of a sharded test (docs/sharding.md).
		clocksync.Handler(nil).ServeHTTP(w, r)
	default:
		s.badRequest(w, http.StatusNotFound, "no such path: "+r.URL.Path)
	}
}

// oaRequest is the part of a completions or chat request the simulator
// reads.
type oaRequest struct {
	Model               string          `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            []oaMessage     `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	IgnoreEOS bool `json:"ignore_eos"`
}

type oaMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// maxBody bounds a request body.
const maxBody = 64 << 20

// plan is everything drawn for one request.
type plan struct {
	fault        fault
	status       int  // for faultStatus
	stallHeaders bool // for faultStall
	cutAt        int  // for faultTruncate: tokens sent before the cut
	badAt        int  // for faultMalformed: the token whose event is broken
	tokens       int
	finish       string
	ttft         time.Duration
	word         int  // index of the first word
	rng          rng  // continues with the TPOT draws
	cached       bool // a simulated cache hit: no TPOT delays (CacheResponses)
}

type fault uint8

const (
	faultNone fault = iota
	faultStatus
	faultReset
	faultStall
	faultTruncate
	faultMalformed
	faultNoUsage
)

func (s *OpenAIServer) generate(w http.ResponseWriter, r *http.Request, chat bool) {
	arrival := time.Now()
	seq := s.seq.Add(1)
	s.stats.requests.Add(1)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		s.badRequest(w, http.StatusBadRequest, "reading the request body: "+err.Error())
		return
	}
	var req oaRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.badRequest(w, http.StatusBadRequest, "the request body is not valid JSON: "+err.Error())
		return
	}
	model := s.firstModel
	if req.Model != "" {
		q, ok := s.models[req.Model]
		if !ok {
			s.writeError(w, http.StatusNotFound, "invalid_request_error", "model_not_found", "The model `"+req.Model+"` does not exist.")
			s.stats.badRequests.Add(1)
			return
		}
		model = q
	}
	var promptTokens int
	h := newFNV(s.opts.Seed)
	if chat {
		if len(req.Messages) == 0 {
			s.badRequest(w, http.StatusBadRequest, "messages is empty")
			return
		}
		for _, m := range req.Messages {
			promptTokens += countContent(m.Content)
			h.str(m.Role)
			h.byte(0)
			h.bytes(m.Content)
			h.byte(0)
		}
	} else {
		if len(req.Prompt) == 0 {
			s.badRequest(w, http.StatusBadRequest, "prompt is missing")
			return
		}
		promptTokens = countPrompt(req.Prompt)
		h.bytes(req.Prompt)
	}
	var st uint64
	if s.opts.SeedByCounter {
		st = (&rng{s: s.opts.Seed ^ seq*0x9e3779b97f4a7c15}).next()
	} else {
		st = uint64(h)
	}
	maxTokens, hasMax := s.maxTokens, false
	if req.MaxCompletionTokens != nil {
		maxTokens, hasMax = *req.MaxCompletionTokens, true
	}
	if req.MaxTokens != nil {
		maxTokens, hasMax = *req.MaxTokens, true
	}
	if maxTokens < 1 || maxTokens > maxLength {
		s.badRequest(w, http.StatusBadRequest, fmt.Sprintf("max_tokens = %d is outside [1, %d]", maxTokens, maxLength))
		return
	}
	p := s.draw(st, promptTokens, maxTokens, hasMax, req.IgnoreEOS)
	s.stats.promptTokens.Add(int64(promptTokens))
	if s.opts.CacheResponses {
		s.stats.prefixQueries.Add(int64(promptTokens))
		if _, hit := s.cache.LoadOrStore(uint64(h), struct{}{}); hit {
			p.ttft, p.cached = 0, true
			s.stats.cacheHits.Add(1)
			s.stats.prefixHits.Add(int64(promptTokens))
		}
	}
	s.stats.running.Add(1)
	defer s.stats.running.Add(-1)
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	if req.Stream {
		s.stats.streams.Add(1)
	}

	switch p.fault {
	case faultStatus:
		s.injectStatus(w, p.status)
		return
	case faultReset:
		s.stats.resets.Add(1)
		reset(w)
		return
	case faultStall:
		s.stats.stalls.Add(1)
		if p.stallHeaders {
			if req.Stream {
				setStreamHeaders(w, false)
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
			w.WriteHeader(http.StatusOK)
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
		s.stats.clientGone.Add(1)
		select {
		case <-r.Context().Done():
		case <-s.closed:
			panic(http.ErrAbortHandler) // drop the connection
		}
		return
	case faultTruncate:
		s.stats.truncated.Add(1)
	case faultMalformed:
		s.stats.malformed.Add(1)
	case faultNoUsage:
		s.stats.noUsage.Add(1)
	}
	g := gen{
		s: s, w: w, r: r, p: &p, seq: seq, chat: chat, model: model,
		arrival: arrival, queue: time.Since(arrival), promptTokens: promptTokens,
		created: arrival.Unix(),
	}
	if req.Stream {
		g.stream(includeUsage)
	} else {
		g.whole()
	}
}

// draw makes the plan of one request from its seed.
func (s *OpenAIServer) draw(seed uint64, promptTokens, maxTokens int, hasMax, ignoreEOS bool) plan {
	p := plan{rng: rng{s: seed}}
	r := &p.rng
	f := &s.opts.Faults
	u := r.float()
	detail := r.float()
	switch {
	case u < f.Status5xx:
		p.fault = faultStatus
		p.status = [...]int{500, 503, 429}[int(detail*3)%3]
	case u < f.Status5xx+f.Reset:
		p.fault = faultReset
	case u < f.Status5xx+f.Reset+f.Stall:
		p.fault, p.stallHeaders = faultStall, detail < 0.5
	case u < f.Status5xx+f.Reset+f.Stall+f.Truncate:
		p.fault = faultTruncate
	case u < f.Status5xx+f.Reset+f.Stall+f.Truncate+f.Malformed:
		p.fault = faultMalformed
	case u < f.Status5xx+f.Reset+f.Stall+f.Truncate+f.Malformed+f.NoUsage:
		p.fault = faultNoUsage
	}
	p.finish = "stop"
	switch d := s.opts.OutputTokens; {
	case ignoreEOS && hasMax, d.Kind == DistMaxTokens:
		p.tokens = maxTokens
		p.finish = "length"
	default:
		n := int(math.Round(d.sample(r, promptTokens)))
		if n < 1 {
			n = 1
		}
		if n >= maxTokens {
			n, p.finish = maxTokens, "length"
		}
		p.tokens = n
	}
	p.cutAt = int(detail * float64(p.tokens)) // 0 … tokens-1
	p.badAt = p.cutAt
	p.ttft = s.opts.TTFT.sampleDuration(r, promptTokens)
	p.word = r.intn(len(words))
	return p
}

// gen writes one response.
type gen struct {
	s            *OpenAIServer
	w            http.ResponseWriter
	r            *http.Request
	p            *plan
	seq          uint64
	chat         bool
	model        []byte
	arrival      time.Time
	queue        time.Duration
	promptTokens int
	created      int64
	timer        *time.Timer
	decode       time.Duration // the sum of the TPOTs drawn so far
}

// wait blocks until arrival+at; false if the client went away first. If
// the server is closed first, it drops the connection (a panic with
// http.ErrAbortHandler), so that no partial response looks complete.
func (g *gen) wait(at time.Duration) bool {
	d := time.Until(g.arrival.Add(at))
	if d <= 0 {
		return true
	}
	if g.timer == nil {
		g.timer = time.NewTimer(d)
	} else {
		g.timer.Reset(d)
	}
	select {
	case <-g.timer.C:
		return true
	case <-g.r.Context().Done():
	case <-g.s.closed:
		g.timer.Stop()
		g.s.stats.clientGone.Add(1)
		panic(http.ErrAbortHandler)
	}
	g.timer.Stop()
	return false
}

// tpot draws the next inter-token time.
func (g *gen) tpot() time.Duration {
	if g.s.opts.TPOT.isZero() || g.p.cached {
		return 0
	}
	d := g.s.opts.TPOT.sampleDuration(&g.p.rng, g.promptTokens)
	g.decode += d
	return d
}

// prefix appends the start of an event or response object, up to and
// including `"choices":[`.
func (g *gen) prefix(b []byte, stream bool) []byte {
	if stream {
		b = append(b, "data: "...)
	}
	b = append(b, `{"id":"`...)
	if g.chat {
		b = append(b, "chatcmpl-"...)
	} else {
		b = append(b, "cmpl-"...)
	}
	b = strconv.AppendUint(b, g.seq, 10)
	b = append(b, `","object":"`...)
	switch {
	case g.chat && stream:
		b = append(b, "chat.completion.chunk"...)
	case g.chat:
		b = append(b, "chat.completion"...)
	default:
		b = append(b, "text_completion"...)
	}
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, g.created, 10)
	b = append(b, `,"model":`...)
	b = append(b, g.model...)
	b = append(b, `,"choices":[`...)
	return b
}

// usage appends `"usage":{…}`.
func (g *gen) usage(b []byte) []byte {
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(g.promptTokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(g.p.tokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(g.promptTokens+g.p.tokens), 10)
	b = append(b, '}')
	return b
}

// serverTiming formats the Server-Timing value (as servertiming.Format
// would, with durations in milliseconds to the microsecond); firstToken is
// the aimeter-first-token duration.
func (g *gen) serverTiming(firstToken time.Duration) string {
	var a [256]byte
	b := a[:0]
	m := func(name string, d time.Duration) {
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, name...)
		b = append(b, ";dur="...)
		us := d.Microseconds()
		b = strconv.AppendInt(b, us/1000, 10)
		if f := us % 1000; f != 0 {
			b = append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
			for b[len(b)-1] == '0' {
				b = b[:len(b)-1]
			}
		}
	}
	m(servertiming.MetricDispatch, g.queue)
	m(servertiming.MetricInference, g.p.ttft+g.decode)
	m(servertiming.MetricFirstToken, firstToken)
	m("queue", g.queue)
	m("prefill", g.p.ttft)
	m("decode", g.decode)
	return string(b)
}

func setStreamHeaders(w http.ResponseWriter, trailer bool) {
	h := w.Header()
	h["Content-Type"] = []string{"text/event-stream"}
	h["Cache-Control"] = []string{"no-cache"}
	if trailer {
		h["Trailer"] = []string{"Server-Timing"}
	}
}

// acceptsTrailers reports whether the request carries TE: trailers.
func acceptsTrailers(r *http.Request) bool {
	for _, v := range r.Header.Values("Te") {
		for part := range strings.SplitSeq(v, ",") {
			name, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(name), "trailers") {
				return true
			}
		}
	}
	return false
}

// stream writes an SSE response.
func (g *gen) stream(includeUsage bool) {
	s, p, w := g.s, g.p, g.w
	trailer := acceptsTrailers(g.r)
	setStreamHeaders(w, trailer)
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if !s.zeroDelay && fl != nil {
		fl.Flush() // headers at once, as vLLM sends them
	}
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	pre := g.prefix((*bp)[:0], true)
	n := len(pre)
	tails := s.tails[0]
	if g.chat {
		tails = s.tails[1]
	}
	chunk := 0
	// send writes one event carrying tokens output tokens.
	send := func(tokens int, parts ...[]byte) bool {
		for _, b := range parts {
			if _, err := w.Write(b); err != nil {
				return false
			}
		}
		if fl != nil {
			fl.Flush()
		}
		s.sendLog.add(g.seq, g.chat, chunk, tokens, time.Now().UnixNano(), g.arrival.UnixNano())
		chunk++
		s.stats.chunks.Add(1)
		return true
	}
	gone := func() { s.stats.clientGone.Add(1) }
	if g.chat {
		b := append(pre, `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
		if !send(0, b) {
			gone()
			return
		}
	}
	at := p.ttft
	for i := 0; i < p.tokens; i++ {
		if i > 0 {
			at += g.tpot()
		}
		if !s.zeroDelay && !g.wait(at) {
			gone()
			return
		}
		if p.fault == faultTruncate && i == p.cutAt {
			if fl != nil {
				fl.Flush() // the headers at least
			}
			panic(http.ErrAbortHandler) // drop the connection (HTTP/1) or reset the stream (HTTP/2)
		}
		var ok bool
		if p.fault == faultMalformed && i == p.badAt {
			ok = send(1, pre[:n], []byte(`{"index":0,"text":"`+"\n\n"))
		} else {
			tail := tails[(p.word+i)%len(tails)]
			ok = send(1, pre[:n], index0, tail)
		}
		if !ok {
			gone()
			return
		}
		s.stats.outputTokens.Add(1)
	}
	b := append(pre[:n], `{"index":0,`...)
	if g.chat {
		b = append(b, `"delta":{},"logprobs":null,"finish_reason":"`...)
	} else {
		b = append(b, `"text":"","logprobs":null,"finish_reason":"`...)
	}
	b = append(b, p.finish...)
	b = append(b, "\"}]}\n\n"...)
	if !send(0, b) {
		gone()
		return
	}
	if includeUsage && p.fault != faultNoUsage {
		b = append(pre[:n], "],"...)
		b = g.usage(b)
		b = append(b, "}\n\n"...)
		if !send(0, b) {
			gone()
			return
		}
	}
	if !send(0, done) {
		gone()
		return
	}
	*bp = b[:0]
	if trailer {
		w.Header().Set("Server-Timing", g.serverTiming(g.queue+p.ttft))
	}
	s.stats.completed.Add(1)
}

var (
	index0 = []byte(`{"index":0,`)
	done   = []byte("data: [DONE]\n\n")
)

// whole writes a non-streaming response.
func (g *gen) whole() {
	s, p, w := g.s, g.p, g.w
	at := p.ttft
	for i := 1; i < p.tokens; i++ {
		at += g.tpot()
	}
	if !s.zeroDelay && !g.wait(at) {
		s.stats.clientGone.Add(1)
		return
	}
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	b := g.prefix((*bp)[:0], false)
	if g.chat {
		b = append(b, `{"index":0,"message":{"role":"assistant","content":"`...)
	} else {
		b = append(b, `{"index":0,"text":"`...)
	}
	for i := 0; i < p.tokens; i++ {
		b = append(b, words[(p.word+i)%len(words)]...)
		b = append(b, ' ')
	}
	if g.chat {
		b = append(b, `"},"logprobs":null,"finish_reason":"`...)
	} else {
		b = append(b, `","logprobs":null,"finish_reason":"`...)
	}
	b = append(b, p.finish...)
	b = append(b, `"}]`...)
	if p.fault != faultNoUsage {
		b = append(b, ',')
		b = g.usage(b)
	}
	b = append(b, "}\n"...)
	*bp = b
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Server-Timing"] = []string{g.serverTiming(g.queue + at)}
	switch p.fault {
	case faultTruncate:
		h["Content-Length"] = []string{strconv.Itoa(len(b))}
		w.Write(b[:len(b)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler) // the body ends short of its Content-Length
	case faultMalformed:
		b = b[:len(b)/2]
	}
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	if _, err := w.Write(b); err != nil {
		s.stats.clientGone.Add(1)
		return
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	s.sendLog.add(g.seq, g.chat, 0, p.tokens, time.Now().UnixNano(), g.arrival.UnixNano())
	s.stats.outputTokens.Add(int64(p.tokens))
	s.stats.completed.Add(1)
}

// injectStatus answers an injected HTTP error.
func (s *OpenAIServer) injectStatus(w http.ResponseWriter, status int) {
	switch status {
	case 500:
		s.stats.s500.Add(1)
		s.writeError(w, status, "server_error", "internal_error", "injected fault: internal server error")
	case 503:
		s.stats.s503.Add(1)
		w.Header().Set("Retry-After", "1")
		s.writeError(w, status, "server_error", "service_unavailable", "injected fault: service unavailable")
	default:
		s.stats.s429.Add(1)
		w.Header().Set("Retry-After", "1")
		s.writeError(w, status, "requests", "rate_limit_exceeded", "injected fault: rate limit exceeded")
	}
}

// reset closes the connection with a TCP RST: hijacked, SO_LINGER 0, closed.
// Where the connection cannot be hijacked (HTTP/2) the stream is reset.
func reset(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			c := conn
			if nc, ok := c.(interface{ NetConn() net.Conn }); ok { // TLS
				c = nc.NetConn()
			}
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// badRequest answers a client error.
func (s *OpenAIServer) badRequest(w http.ResponseWriter, status int, msg string) {
	s.stats.badRequests.Add(1)
	s.writeError(w, status, "invalid_request_error", nil, msg)
}

// writeError writes an OpenAI-style error body.
func (s *OpenAIServer) writeError(w http.ResponseWriter, status int, typ string, code any, msg string) {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// countPrompt counts the tokens of a completions prompt: words of a string
// or of an array of strings, one per id of a token array (or arrays).
func countPrompt(raw json.RawMessage) int {
	if n, ok := countPlain(raw); ok {
		return n
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return len(strings.Fields(str))
	}
	var strs []string
	if json.Unmarshal(raw, &strs) == nil {
		n := 0
		for _, s := range strs {
			n += len(strings.Fields(s))
		}
		return n
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil {
		return len(ids)
	}
	var idss [][]int64
	if json.Unmarshal(raw, &idss) == nil {
		n := 0
		for _, ids := range idss {
			n += len(ids)
		}
		return n
	}
	return 0
}

// countContent counts the words of a message's content: a string, or an
// array of parts whose text fields count.
func countContent(raw json.RawMessage) int {
	if n, ok := countPlain(raw); ok {
		return n
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return len(strings.Fields(str))
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		n := 0
		for _, p := range parts {
			n += len(strings.Fields(p.Text))
		}
		return n
	}
	return 0
}

// fnv64 is FNV-1a, 64 bits, written out to hash without allocating.
type fnv64 uint64

// newFNV starts a hash with the eight bytes of seed (little-endian).
func newFNV(seed uint64) fnv64 {
	h := fnv64(14695981039346656037)
	for i := 0; i < 8; i++ {
		h.byte(byte(seed >> (8 * i)))
	}
	return h
}

func (h *fnv64) byte(c byte) { *h = (*h ^ fnv64(c)) * 1099511628211 }

func (h *fnv64) bytes(b []byte) {
	for _, c := range b {
		h.byte(c)
	}
}

func (h *fnv64) str(s string) {
	for i := 0; i < len(s); i++ {
		h.byte(s[i])
	}
}

// countPlain counts the words of a JSON string without escapes, the common
// case, without decoding it; ok is false for anything else.
func countPlain(raw []byte) (n int, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return 0, false
	}
	in := false
	for _, c := range raw[1 : len(raw)-1] {
		switch {
		case c == '\\' || c == '"' || c < 0x20 || c >= 0x80:
			return 0, false // escapes and non-ASCII (Unicode spaces): decode
		case c == ' ':
			in = false
		case !in:
			in = true
			n++
		}
	}
	return n, true
}
