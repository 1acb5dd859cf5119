package cli

import (
	"strings"

	"github.com/spf13/pflag"

	"aimeter/sut/openai"
	"aimeter/tokenize"
)

// openaiFlags are the flags of --sut openai.
type openaiFlags struct {
	model        string
	api          string
	stream       bool
	prompts      string
	inputTokens  int
	outputTokens int
	ignoreEOS    bool
	apiKeyEnv    string
	caCert       string
	insecure     bool
	headers      []string
	allowHeaders bool
	extraBody    string
	temperature  float64
	httpClient   string
	tokenizer    string
	inputLengths string
	salt         bool
	saltSeed     uint64
	// outputLengths is --output-lengths, a tokenize.ParseLengths spec.
	outputLengths string
}

// openaiFlagNames lists the flags addOpenAIFlags defines, for the help's
// flag groups.
var openaiFlagNames = []string{"served-model", "api", "stream", "prompts", "input-tokens", "output-tokens",
	"ignore-eos", "api-key-env", "ca-cert", "insecure-skip-verify", "header", "allow-header-override", "extra-body", "temperature", "http-client", "tokenizer", "input-lengths", "output-lengths", "salt", "salt-seed"}

func addOpenAIFlags(fl *pflag.FlagSet, o *openaiFlags) {
	fl.StringVar(&o.model, "served-model", "", "--sut openai: the model name to request (default: the first one GET /v1/models lists); --model stays the MLPerf config key")
	fl.StringVar(&o.api, "api", openai.APIChat, "--sut openai: chat (/v1/chat/completions) or completions (/v1/completions)")
	fl.BoolVar(&o.stream, "stream", true, "--sut openai: stream responses (server-sent events) and measure time to first token and per token")
	fl.StringVar(&o.prompts, "prompts", "", "--sut openai: JSONL file of prompts ({\"prompt\": …} or {\"messages\": […]} a line); default: --qsl-size synthetic prompts of --input-tokens words")
	fl.IntVar(&o.inputTokens, "input-tokens", 128, "--sut openai: words per synthetic prompt (≈ tokens; a rare word is often 2 or more), or exact tokens with --tokenizer")
	fl.StringVar(&o.inputLengths, "input-lengths", "", "--sut openai: draw each synthetic prompt's length instead of --input-tokens: N, uniform:MIN:MAX, normal:MEAN:SD or hist:FILE (CSV LENGTH,WEIGHT rows) (words, or tokens with --tokenizer)")
	fl.StringVar(&o.tokenizer, "tokenizer", "", "--sut openai: the server's tokenizer, a tiktoken encoding ("+strings.Join(tokenize.Encodings, ", ")+") or the path of a Hugging Face tokenizer.json: synthetic prompts (--input-tokens), trace prompts and generated session turns (--user-words) get exact lengths in its tokens, and a response without usage is counted in them (default: one word stands for one token)")
	fl.IntVar(&o.outputTokens, "output-tokens", 128, "--sut openai: max_tokens of each request (0 = the server's default)")
	fl.StringVar(&o.outputLengths, "output-lengths", "", "--sut openai: draw each synthetic prompt's max_tokens instead of --output-tokens, in the forms of --input-lengths (tokens)")
	fl.BoolVar(&o.ignoreEOS, "ignore-eos", false, "--sut openai: send ignore_eos so that every response has --output-tokens tokens (vLLM, SGLang)")
	fl.StringVar(&o.apiKeyEnv, "api-key-env", "OPENAI_API_KEY", "--sut openai: environment variable holding the API key sent as a bearer token (none sent when unset or empty)")
	fl.StringVar(&o.caCert, "ca-cert", "", "--sut openai: PEM file of the certificate authorities to trust for https")
	fl.BoolVar(&o.insecure, "insecure-skip-verify", false, "--sut openai: accept any server certificate (test servers only)")
	fl.StringArrayVar(&o.headers, "header", nil, "--sut openai: extra HTTP header \"Name: value\" sent with every request (repeatable); Content-Type, Authorization and Accept need --allow-header-override; the value of a secret-looking header (Authorization, X-Api-Key, …) is not recorded in the bundle")
	fl.BoolVar(&o.allowHeaders, "allow-header-override", false, "--sut openai: let --header replace Content-Type, Authorization or Accept")
	fl.StringVar(&o.extraBody, "extra-body", "", "--sut openai: JSON object whose members are added to every request body, e.g. '{\"top_k\": 20}'; keys the client sets (model, stream, max_tokens, temperature, …) are refused")
	fl.StringVar(&o.httpClient, "http-client", openai.ClientAuto, "--sut openai: HTTP client of the requests: auto (aimeter's HTTP/1.1 streaming client for http://, net/http for https://), h1 (aimeter's, http:// only) or net/http")
	fl.BoolVar(&o.salt, "salt", false, "--sut openai: mark each query with MLPerf Endpoints' per-query anti-caching salt, \"[salt: 16 hex digits]\", instead of the leading nonce: after the system prompt in a chat request that has one (so a prefix cache may share the system prompt, never the user content), else at the start of the prompt; recorded in the bundle, and each query's salt follows from --salt-seed and its sequence number")
	fl.Uint64Var(&o.saltSeed, "salt-seed", 0, "--salt: the seed of the salts; the same seed sends the same salts again (Endpoints seeds them with the seed set's model_seed)")
	fl.Float64Var(&o.temperature, "temperature", 0, "--sut openai: sampling temperature sent with every request (default: none sent, the server's default)")
}
