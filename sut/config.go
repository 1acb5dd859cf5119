// Package sut describes a system under test as data: which kind it is and
// every option it was built with, so that a run bundle can record it
// (sut.json) and a later run can build the same system again
// (`aimeter run --from DIR`). The adapters themselves live in the
// packages below it (sut/null, sut/reference, sut/openai, sut/kserve,
// sut/dispatch); package benchmark builds one from a Config.
//
// A Config never holds a secret: API keys and bearer tokens are named by
// the environment variable that holds them, and URLs are stored without
// their user information.
package sut

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"aimeter/tokenize"
)

// Kind names the kind of system under test.
type Kind string

// The kinds of system under test aimeter can build.
const (
	// Null completes every sample inside IssueQuery (sut/null).
	Null Kind = "null"
	// NullAsync completes every sample from a worker goroutine.
	NullAsync Kind = "null-async"
	// Reference is aimeter's reference model on its data set, in process.
	Reference Kind = "reference"
	// OpenAI is an OpenAI-compatible server at one URL.
	OpenAI Kind = "openai"
	// KServe is a KServe v2 / Triton server at one URL, HTTP or gRPC.
	KServe Kind = "kserve"
	// Dispatch is several servers of one protocol behind one dispatcher.
	Dispatch Kind = "dispatch"
	// ONNX is an ONNX model run in process by ONNX Runtime (sut/onnx;
	// needs a build with the tag onnx).
	ONNX Kind = "onnx"
	// Custom is a SUT a Go program built itself; it cannot be rebuilt
	// from its Config.
	Custom Kind = "custom"
)

// Kinds lists the kinds a Config can name, in the order the CLI lists them.
func Kinds() []Kind { return []Kind{Null, NullAsync, Reference, OpenAI, KServe, Dispatch, ONNX} }

// Config is a system under test and its sample library, as data. Its zero
// value is the null SUT over a null QSL of 1024 samples. It is stored as
// sut.json in a run bundle.
type Config struct {
	// Kind is the kind of SUT; "" means Null.
	Kind Kind `json:"kind"`
	// QSLSize is the number of samples of the null QSL and of the
	// synthetic prompts of an OpenAI run; 0 means 1024. The reference and
	// KServe runs use their data set's size instead.
	QSLSize uint64 `json:"qsl_size,omitempty"`
	// PerformanceSampleCount is what the QSL reports as fitting in memory;
	// 0 means its whole size.
	PerformanceSampleCount uint64 `json:"performance_sample_count,omitempty"`

	// Net holds what every network SUT shares; ignored by the in-process
	// kinds.
	Net Net `json:"net,omitzero"`
	// Reference holds the options of Kind Reference (and the data set a
	// KServe run sends); nil means their defaults.
	Reference *ReferenceConfig `json:"reference,omitempty"`
	// OpenAI holds the options of Kind OpenAI and of Dispatch over OpenAI
	// nodes; nil means their defaults.
	OpenAI *OpenAIConfig `json:"openai,omitempty"`
	// KServe holds the options of Kind KServe and of Dispatch over KServe
	// nodes; nil means their defaults.
	KServe *KServeConfig `json:"kserve,omitempty"`
	// Dispatch holds the options of Kind Dispatch; nil means its defaults.
	Dispatch *DispatchConfig `json:"dispatch,omitempty"`
	// ONNX holds the options of Kind ONNX; nil means its defaults.
	ONNX *ONNXConfig `json:"onnx,omitempty"`
	// Name names a Custom SUT; "" for the other kinds.
	Name string `json:"name,omitempty"`
}

// Net is what every network SUT shares.
type Net struct {
	// URLs are the servers' base URLs: one for OpenAI and KServe, one per
	// node for Dispatch. Stored without user information (Redact).
	URLs []string `json:"urls,omitempty"`
	// RequestTimeout ends a request that takes longer with an error of
	// category timeout; 0 means no bound.
	RequestTimeout time.Duration `json:"request_timeout_ns,omitempty"`
	// CheckTimeout bounds the check of every server before the run; 0
	// means 10 s.
	CheckTimeout time.Duration `json:"check_timeout_ns,omitempty"`
	// MaxConns is the most connections to one server; 0 means the
	// adapter's default.
	MaxConns int `json:"max_conns,omitempty"`
}

// ReferenceConfig is the reference model and its data set.
type ReferenceConfig struct {
	// Dataset is "fashion-mnist", "synthetic" or "auto" (Fashion-MNIST
	// when installed); "" means "auto".
	Dataset string `json:"dataset,omitempty"`
	// Weights is the trained weights file; "" means the user cache.
	Weights string `json:"weights,omitempty"`
}

// OpenAIConfig is the client of an OpenAI-compatible server.
type OpenAIConfig struct {
	// ServedModel is the model name to request; "" means the first one
	// GET /v1/models lists.
	ServedModel string `json:"served_model,omitempty"`
	// API is "chat" or "completions"; "" means "chat".
	API string `json:"api,omitempty"`
	// NoStream asks for whole responses instead of server-sent events
	// (no time to first token). The zero value streams.
	NoStream bool `json:"no_stream,omitempty"`
	// Prompts is a JSONL file of prompts; "" means synthetic prompts.
	Prompts string `json:"prompts,omitempty"`
	// PromptsSHA256 is the hex SHA-256 of the Prompts file when the run
	// read it; a run repeated from a bundle refuses a file that differs.
	PromptsSHA256 string `json:"prompts_sha256,omitempty"`
	// InputTokens is the words per synthetic prompt, or its tokens of
	// Tokenizer when one is named; 0 means 128.
	InputTokens int `json:"input_tokens,omitempty"`
	// InputLengths, if set, draws each synthetic prompt's length from a
	// distribution instead of InputTokens: "N", "uniform:MIN:MAX",
	// "normal:MEAN:SD" or "hist:FILE" (tokenize.ParseLengths), in words,
	// or in Tokenizer's tokens when one is named.
	InputLengths string `json:"input_lengths,omitempty"`
	// InputLengthsSHA256 is the hex SHA-256 of the histogram file of a
	// "hist:FILE" InputLengths when the run read it; a run repeated from
	// a bundle refuses a file that differs.
	InputLengthsSHA256 string `json:"input_lengths_sha256,omitempty"`
	// OutputLengths, if set, draws each synthetic prompt's max_tokens from
	// a distribution instead of OutputTokens, in the forms of InputLengths.
	OutputLengths string `json:"output_lengths,omitempty"`
	// OutputLengthsSHA256 is as InputLengthsSHA256, for OutputLengths.
	OutputLengthsSHA256 string `json:"output_lengths_sha256,omitempty"`
	// Tokenizer names the server's tokenizer (package tokenize): a
	// tiktoken encoding (cl100k_base, o200k_base, …) or the path of a
	// Hugging Face tokenizer.json. With it, synthetic prompts, trace
	// prompts and generated session turns have exact lengths in its
	// tokens, and a response without usage is counted in them. "" means
	// none: one word stands for one token.
	Tokenizer string `json:"tokenizer,omitempty"`
	// TokenizerSHA256 is the hex SHA-256 of the Tokenizer file when the
	// run read one; a run repeated from a bundle refuses a file that
	// differs.
	TokenizerSHA256 string `json:"tokenizer_sha256,omitempty"`
	// OutputTokens is max_tokens of each request; 0 means the server's
	// default.
	OutputTokens int `json:"output_tokens,omitempty"`
	// IgnoreEOS sends ignore_eos so that every response has OutputTokens
	// tokens.
	IgnoreEOS bool `json:"ignore_eos,omitempty"`
	// APIKeyEnv names the environment variable holding the API key; ""
	// sends none. The key itself is never stored.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// CACert is a PEM file of the authorities to trust for https; "" means
	// the system's.
	CACert string `json:"ca_cert,omitempty"`
	// InsecureSkipVerify accepts any server certificate.
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty"`
	// Headers are extra HTTP headers sent with every request, "Name:
	// value" each (--header). The value of a header whose name looks
	// secret (IsSecretHeader: Authorization, X-Api-Key, …) is never
	// stored: Redacted replaces it with RedactedValue, and a run repeated
	// from its bundle refuses it until it is given again.
	Headers []string `json:"headers,omitempty"`
	// AllowHeaderOverride lets Headers replace the headers the client
	// sets itself: Content-Type, Authorization and Accept.
	AllowHeaderOverride bool `json:"allow_header_override,omitempty"`
	// ExtraBody is a JSON object whose members are added to every request
	// body (--extra-body '{"top_k": 20}'); "" adds none. A key the client
	// sets itself (model, stream, max_tokens, …) is refused before the
	// run.
	ExtraBody string `json:"extra_body,omitempty"`
	// Temperature is sent as temperature; nil sends none (the server's
	// default).
	Temperature *float64 `json:"temperature,omitempty"`
	// SaltSeed, when set (--salt, --salt-seed), marks each query of a
	// performance run with MLPerf Endpoints' per-query anti-caching salt
	// seeded by it, in place of the nonce (openai.Options.Salt: between
	// the system prompt and the user content; query id k, the record of
	// seq id k − 1, carries openai.SaltOf(seed, k)). Nil sends the nonce.
	SaltSeed *uint64 `json:"salt_seed,omitempty"`
	// HTTPClient is the HTTP client of the requests (--http-client):
	// "auto" or "" (aimeter's HTTP/1.1 client for http:// URLs, net/http
	// for https://), "h1" (aimeter's, http:// only) or "net/http".
	HTTPClient string `json:"http_client,omitempty"`
}

// RedactedValue stands for a secret that is not stored.
const RedactedValue = "REDACTED"

// ParseHeader splits "Name: value" (or "Name:value") at its first colon,
// trimming the spaces around both.
func ParseHeader(h string) (name, value string, err error) {
	name, value, ok := strings.Cut(h, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" {
		return "", "", fmt.Errorf("want \"Name: value\"")
	}
	return name, value, nil
}

// RedactHeader returns "Name: value" with the value replaced by
// RedactedValue when the name looks secret; anything else unchanged.
func RedactHeader(h string) string {
	name, _, err := ParseHeader(h)
	if err != nil || !IsSecretHeader(name) {
		return h
	}
	return name + ": " + RedactedValue
}

// HTTPHeader returns Headers as an http.Header. A header given more than
// once is sent with every value. A secret header whose value was redacted
// when the run was recorded is an error.
func (o *OpenAIConfig) HTTPHeader() (http.Header, error) {
	if len(o.Headers) == 0 {
		return nil, nil
	}
	h := http.Header{}
	for _, raw := range o.Headers {
		name, value, err := ParseHeader(raw)
		if err != nil {
			return nil, &FieldError{"header", RedactHeader(raw), err.Error()}
		}
		if IsSecretHeader(name) && value == RedactedValue {
			return nil, &FieldError{"header", name, "its value looks secret and was not recorded with the run; give --header again"}
		}
		h.Add(name, value)
	}
	return h, nil
}

// KServeConfig is the client of a KServe v2 / Triton server.
type KServeConfig struct {
	// GRPC uses gRPC instead of HTTP/REST.
	GRPC bool `json:"grpc,omitempty"`
	// Model is the model's name on the server; "" means "fashion-mlp".
	Model string `json:"model,omitempty"`
	// ModelVersion is the model version; "" means the server's choice.
	ModelVersion string `json:"model_version,omitempty"`
	// BinaryData sends tensors in the binary tensor data extension (HTTP).
	BinaryData bool `json:"binary_data,omitempty"`
	// Stream sends every request over one ModelStreamInfer stream (gRPC).
	Stream bool `json:"grpc_stream,omitempty"`
	// TokenEnv names the environment variable holding a bearer token; ""
	// sends none. The token itself is never stored.
	TokenEnv string `json:"token_env,omitempty"`
	// ServerTiming keeps the server's stage times (Server-Timing).
	ServerTiming bool `json:"server_timing,omitempty"`

	// The inputs of a model other than the reference model, built from
	// its metadata (package sut/kserve, InputOptions). The reference data
	// set is sent when none of Shapes, BatchSize above 1, InputData and
	// DataMode is set and the model's metadata takes it (one FP32 input
	// of 784 values); otherwise these apply, and the QSL has QSLSize
	// samples (0 means 1024, or InputData's entries) and no labels.

	// Shapes gives the shape of inputs with dynamic (-1) dimensions, by
	// input name (--shape NAME:d1,d2): the whole shape, or the shape
	// without the batch dimension when the first dimension is -1. Nil
	// means none; a dynamic dimension other than a leading batch
	// dimension is then refused before the run.
	Shapes map[string][]int64 `json:"shapes,omitempty"`
	// BatchSize is the size of a leading -1 (batch) dimension; 0 means 1.
	BatchSize int `json:"batch_size,omitempty"`
	// InputData is a JSON input data file in perf_analyzer's format; ""
	// means generated data (DataMode).
	InputData string `json:"input_data,omitempty"`
	// InputDataSHA256 is the hex SHA-256 of the InputData file when the
	// run read it; a run repeated from a bundle refuses a file that
	// differs. "" means not recorded.
	InputDataSHA256 string `json:"input_data_sha256,omitempty"`
	// DataMode is "random" (seeded pseudo-random values) or "zero"; ""
	// means "random" for a model other than the reference model.
	DataMode string `json:"data_mode,omitempty"`
	// Seed seeds the random data; 0 is a seed like any other.
	Seed uint64 `json:"seed,omitempty"`
	// Compression is the QSL-side compression of the samples sent (HTTP;
	// the MLPerf network division's options): "none", "lossless" (gzip,
	// each body compressed when its sample is loaded) or "original" (the
	// data set's own compressed form); "" means none.
	Compression string `json:"compression,omitempty"`
}

// OwnInputs reports whether the options ask for inputs other than the
// reference data set, whatever the model's metadata says.
func (k *KServeConfig) OwnInputs() bool {
	return k != nil && (len(k.Shapes) > 0 || k.BatchSize > 1 || k.InputData != "" || k.DataMode != "")
}

// ParseShapes reads the shapes of KServeConfig.Shapes, one NAME:d1,d2,…
// each (as perf_analyzer's --shape): an input's name, the last colon, and
// its dimensions, each an integer ≥ 1; nil for none. An error begins with
// the value it refuses, so that a caller can put the name of the option
// that gave it in front.
func ParseShapes(vals []string) (map[string][]int64, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := make(map[string][]int64, len(vals))
	for _, v := range vals {
		i := strings.LastIndexByte(v, ':')
		if i <= 0 || i == len(v)-1 {
			return nil, fmt.Errorf("%q: want NAME:d1,d2,…", v)
		}
		name := v[:i]
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s given twice", name)
		}
		var dims []int64
		for _, f := range strings.Split(v[i+1:], ",") {
			d, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil || d < 1 {
				return nil, fmt.Errorf("%q: dimension %q is not an integer ≥ 1", v, f)
			}
			dims = append(dims, d)
		}
		out[name] = dims
	}
	return out, nil
}

// DispatchConfig is a dispatcher over several servers.
type DispatchConfig struct {
	// Backend is the protocol every node speaks ("openai", "kserve" or
	// one a program adds); "" means "openai".
	Backend string `json:"backend,omitempty"`
	// Policy is "round-robin" or "least-outstanding"; "" means
	// "round-robin".
	Policy string `json:"policy,omitempty"`
	// AllowDownNodes runs without the nodes that are down at the start
	// instead of refusing to start.
	AllowDownNodes bool `json:"allow_down_nodes,omitempty"`
}

// WorkloadOCRDBNet is the workload of the GB/T scenario T13-1: DBNet text
// detection (PaddleOCR's PP-OCRv4 detector) on generated word images
// (dataset/ocr), scored by H-mean at IoU 0.5.
const WorkloadOCRDBNet = "ocr-dbnet"

// ONNXConfig is an ONNX model run in process and its data.
type ONNXConfig struct {
	// Workload is "ocr-dbnet" (WorkloadOCRDBNet: the detector on generated
	// word images, its pre- and post-processing, scored) or "" (any model
	// fed seeded random inputs of its own fixed input shape).
	Workload string `json:"workload,omitempty"`
	// Model is the .onnx file; "" means, for ocr-dbnet, PaddleOCR's v4
	// detector in $AIMETER_OCR_MODELS (scripts/setup-onnx.sh); required
	// otherwise.
	Model string `json:"model,omitempty"`
	// ModelSHA256 is the hex SHA-256 of the model file the run read; a run
	// repeated from a bundle refuses a file that differs.
	ModelSHA256 string `json:"model_sha256,omitempty"`
	// Library is the ONNX Runtime shared library; "" means
	// $AIMETER_ONNXRUNTIME_LIB.
	Library string `json:"library,omitempty"`
	// Input and Output name the model's input and output; "" means the
	// first of each.
	Input  string `json:"input,omitempty"`
	Output string `json:"output,omitempty"`
	// IntraOpThreads is ONNX Runtime's intra-op thread count; 0 means 1.
	IntraOpThreads int `json:"intra_op_threads,omitempty"`
	// MaxBatch is the most samples of one model call; 0 means 1.
	MaxBatch int `json:"max_batch,omitempty"`
	// Workers is the number of model calls run at once; 0 means 1.
	Workers int `json:"workers,omitempty"`
	// NoSpin keeps ONNX Runtime's intra-op threads from spinning while
	// they wait; false lets them spin (its default).
	NoSpin bool `json:"no_spin,omitempty"`
	// Images is the number of generated images of ocr-dbnet; 0 means 64.
	Images int `json:"images,omitempty"`
	// ImageSize is the side of the square generated images, in pixels; 0
	// means 320.
	ImageSize int `json:"image_size,omitempty"`
	// Seed seeds the generated images or the random inputs; 0 is a seed
	// like any other.
	Seed uint64 `json:"seed,omitempty"`
}

// DefaultQSLSize is the null QSL's size when Config.QSLSize is 0.
const DefaultQSLSize = 1024

// KindOrNull returns c.Kind, or Null when it is empty.
func (c *Config) KindOrNull() Kind {
	if c.Kind == "" {
		return Null
	}
	return c.Kind
}

// QSLSizeOrDefault returns c.QSLSize, or DefaultQSLSize when it is 0.
func (c *Config) QSLSizeOrDefault() uint64 {
	if c.QSLSize == 0 {
		return DefaultQSLSize
	}
	return c.QSLSize
}

// IsNetwork reports whether the kind talks to servers over the network.
func (k Kind) IsNetwork() bool { return k == OpenAI || k == KServe || k == Dispatch }

// Backend returns the protocol of a Dispatch config's nodes ("openai" by
// default), the kind itself for OpenAI and KServe, and "" otherwise.
func (c *Config) Backend() string {
	switch c.KindOrNull() {
	case OpenAI, KServe:
		return string(c.Kind)
	case Dispatch:
		if c.Dispatch != nil && c.Dispatch.Backend != "" {
			return c.Dispatch.Backend
		}
		return string(OpenAI)
	}
	return ""
}

// Redacted returns a copy of c fit to store: every URL without its user
// information, the value of every secret-looking header replaced by
// RedactedValue. c itself is not changed.
func (c Config) Redacted() Config {
	if c.Net.URLs != nil {
		urls := make([]string, len(c.Net.URLs))
		for i, u := range c.Net.URLs {
			urls[i] = RedactURL(u)
		}
		c.Net.URLs = urls
	}
	if c.OpenAI != nil && len(c.OpenAI.Headers) > 0 {
		o := *c.OpenAI
		o.Headers = make([]string, len(c.OpenAI.Headers))
		for i, h := range c.OpenAI.Headers {
			o.Headers[i] = RedactHeader(h)
		}
		c.OpenAI = &o
	}
	return c
}

// RedactURL drops the user information (a password, a token) from a URL
// before it is shown or stored; an unparsable URL that may hold one is
// replaced whole.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		if err != nil && strings.Contains(raw, "@") {
			return "(unparsable URL)"
		}
		return raw
	}
	u.User = nil
	return u.String()
}

// secretHeaderWords mark a header whose value is secret.
var secretHeaderWords = []string{"auth", "key", "token", "secret", "password", "passwd", "credential", "cookie", "session", "signature"}

// IsSecretHeader reports whether the HTTP header name (any case) looks as
// if its value were secret: Authorization, X-Api-Key, Cookie, X-Auth-Token,
// … Such values are never stored or shown.
func IsSecretHeader(name string) bool {
	name = strings.ToLower(name)
	for _, w := range secretHeaderWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// Validate checks what can be checked of c without building the SUT: a
// known kind, the URLs a network kind needs, and options in range. The
// error names the field (as in sut.json).
func (c *Config) Validate() error {
	k := c.KindOrNull()
	known := k == Custom
	for _, x := range Kinds() {
		known = known || k == x
	}
	if !known {
		return &FieldError{"kind", string(c.Kind), fmt.Sprintf("want %s", kindList())}
	}
	n := &c.Net
	switch {
	case k == Custom:
		return &FieldError{"kind", string(k), "a custom SUT is built by the program that ran it and cannot be rebuilt from its configuration"}
	case (k == OpenAI || k == KServe) && len(n.URLs) == 0:
		return &FieldError{"url", "", fmt.Sprintf("--sut %s needs --url (the server's base URL, e.g. http://localhost:8000)", k)}
	case (k == OpenAI || k == KServe) && len(n.URLs) > 1:
		return &FieldError{"url", "", fmt.Sprintf("--sut %s takes one --url (got %d); use --sut dispatch --backend %s for several servers", k, len(n.URLs), k)}
	case k == Dispatch && len(n.URLs) == 0:
		return &FieldError{"url", "", "--sut dispatch: give each node with --url (at least one)"}
	case n.RequestTimeout < 0:
		return &FieldError{"request_timeout", n.RequestTimeout.String(), "must be ≥ 0"}
	case n.CheckTimeout < 0:
		return &FieldError{"check_timeout", n.CheckTimeout.String(), "must be > 0"}
	case n.MaxConns < 0:
		return &FieldError{"max_conns", fmt.Sprint(n.MaxConns), "must not be negative"}
	}
	if k == Dispatch {
		// One server's client checks its own URL (a gRPC KServe URL may
		// be a bare host:port); a dispatcher's nodes are checked here.
		for _, raw := range n.URLs {
			u, err := url.Parse(raw)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return &FieldError{"url", RedactURL(raw), "want an http:// or https:// URL with a host"}
			}
		}
	}
	if o := c.OpenAI; o != nil {
		switch {
		case o.InputTokens < 0:
			return &FieldError{"input_tokens", fmt.Sprint(o.InputTokens), "must be ≥ 1"}
		case o.OutputTokens < 0:
			return &FieldError{"output_tokens", fmt.Sprint(o.OutputTokens), "must not be negative"}
		case o.Temperature != nil && (math.IsNaN(*o.Temperature) || math.IsInf(*o.Temperature, 0) || *o.Temperature < 0):
			return &FieldError{"temperature", fmt.Sprint(*o.Temperature), "want a finite number ≥ 0"}
		case o.HTTPClient != "" && o.HTTPClient != "auto" && o.HTTPClient != "h1" && o.HTTPClient != "net/http":
			return &FieldError{"http_client", o.HTTPClient, "want auto, h1 or net/http"}
		case o.Prompts != "" && o.InputLengths != "":
			return &FieldError{"input_lengths", o.InputLengths, "applies to synthetic prompts, not to a --prompts file"}
		case o.Prompts != "" && o.OutputLengths != "":
			return &FieldError{"output_lengths", o.OutputLengths, "applies to synthetic prompts, not to a --prompts file (give a prompt its own \"max_tokens\")"}
		}
		// A bad length distribution (or histogram file) is refused here,
		// before the run contacts the server.
		for _, l := range []struct{ field, spec string }{{"input_lengths", o.InputLengths}, {"output_lengths", o.OutputLengths}} {
			if l.spec == "" {
				continue
			}
			if _, err := tokenize.ParseLengths(l.spec); err != nil {
				return &FieldError{l.field, l.spec, err.Error()}
			}
		}
		if _, err := o.HTTPHeader(); err != nil {
			return err
		}
		if o.ExtraBody != "" {
			var members map[string]json.RawMessage
			if err := json.Unmarshal([]byte(o.ExtraBody), &members); err != nil || members == nil {
				return &FieldError{"extra_body", o.ExtraBody, "want a JSON object, such as {\"top_k\": 20}"}
			}
		}
	}
	if ks := c.KServe; ks != nil {
		switch {
		case ks.Stream && !ks.GRPC:
			return &FieldError{"grpc_stream", "", "--grpc-stream needs --grpc (ModelStreamInfer is a gRPC call)"}
		case ks.BatchSize < 0:
			return &FieldError{"batch_size", fmt.Sprint(ks.BatchSize), "must be ≥ 1"}
		case ks.DataMode != "" && ks.DataMode != "random" && ks.DataMode != "zero":
			return &FieldError{"data_mode", ks.DataMode, "want random or zero"}
		case ks.InputData != "" && ks.DataMode != "":
			return &FieldError{"data_mode", ks.DataMode, "--input-data-mode does not apply to data read from --input-data"}
		}
		for name, shape := range ks.Shapes {
			for _, d := range shape {
				if d < 1 {
					return &FieldError{"shapes", fmt.Sprintf("%s:%v", name, shape), "every dimension must be ≥ 1"}
				}
			}
		}
	}
	if r := c.Reference; r != nil {
		switch r.Dataset {
		case "", "auto", "fashion-mnist", "synthetic":
		default:
			return &FieldError{"dataset", r.Dataset, "want fashion-mnist, synthetic or auto"}
		}
	}
	if x := c.ONNX; x != nil {
		switch {
		case x.Workload != "" && x.Workload != WorkloadOCRDBNet:
			return &FieldError{"onnx_workload", x.Workload, "want " + WorkloadOCRDBNet + " or none (a model fed random inputs)"}
		case x.Workload == "" && x.Model == "" && k == ONNX:
			return &FieldError{"onnx_model", "", "--sut onnx needs --onnx-model (an .onnx file), or --onnx-workload " + WorkloadOCRDBNet}
		case x.IntraOpThreads < 0:
			return &FieldError{"onnx_threads", fmt.Sprint(x.IntraOpThreads), "must be ≥ 1"}
		case x.MaxBatch < 0:
			return &FieldError{"onnx_batch", fmt.Sprint(x.MaxBatch), "must be ≥ 1"}
		case x.Workers < 0:
			return &FieldError{"onnx_workers", fmt.Sprint(x.Workers), "must be ≥ 1"}
		case x.Images < 0 || x.Images > 1<<20:
			return &FieldError{"ocr_images", fmt.Sprint(x.Images), "want 1 to 1048576"}
		case x.ImageSize != 0 && (x.ImageSize < 64 || x.ImageSize > 4096):
			return &FieldError{"ocr_image_size", fmt.Sprint(x.ImageSize), "want 64 to 4096 pixels"}
		}
	} else if k == ONNX {
		return &FieldError{"onnx_model", "", "--sut onnx needs --onnx-model (an .onnx file), or --onnx-workload " + WorkloadOCRDBNet}
	}
	if k == ONNX && c.ONNX.Workload != "" && c.QSLSize != 0 {
		return &FieldError{"qsl_size", fmt.Sprint(c.QSLSize), "--onnx-workload " + c.ONNX.Workload + " generates its own images: use --ocr-images"}
	}
	if k != Null && k != NullAsync && k != OpenAI && k != Dispatch && k != KServe && k != ONNX && c.QSLSize != 0 && k != Custom {
		return &FieldError{"qsl_size", fmt.Sprint(c.QSLSize), fmt.Sprintf("--sut %s uses its data set's size; the QSL size applies to the null SUTs, synthetic prompts, a KServe model's own inputs and dispatched runs", k)}
	}
	return nil
}

func kindList() string {
	var names []string
	for _, k := range Kinds() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

// FieldError is a SUT configuration that cannot be used: the field (its
// name in sut.json, which is also aimeter run's flag with - for _, and
// "kind" for --sut), its value and why.
type FieldError struct {
	Field, Value, Why string
}

// Flag is the aimeter run flag of the field: "--sut" for kind, else the
// field's name with - for _ ("--max-conns").
func (e *FieldError) Flag() string {
	if e.Field == "kind" {
		return "--sut"
	}
	return "--" + strings.ReplaceAll(e.Field, "_", "-")
}

// Error is `FLAG "VALUE": WHY`, or WHY alone (a sentence naming the
// flag) when there is no value to show.
func (e *FieldError) Error() string {
	if e.Value == "" {
		return e.Why
	}
	return fmt.Sprintf("%s %q: %s", e.Flag(), e.Value, e.Why)
}
