package cli

import (
	"strings"

	"github.com/spf13/pflag"

	"aimeter/sut"
	"aimeter/sut/openai"
	"aimeter/tokenize"
)

// openaiFlags are the flags of --sut openai: each sets its field of the
// SUT's configuration (cfg), but for those config fills in.
type openaiFlags struct {
	cfg         sut.OpenAIConfig
	stream      bool
	temperature float64
	salt        bool
	saltSeed    uint64
}

// openaiFlagNames lists the flags addOpenAIFlags defines, for the help's
// flag groups.
var openaiFlagNames = []string{"served-model", "api", "stream", "prompts", "input-tokens", "output-tokens",
	"ignore-eos", "api-key-env", "ca-cert", "insecure-skip-verify", "header", "allow-header-override", "extra-body", "temperature", "http-client", "tokenizer", "input-lengths", "output-lengths", "salt", "salt-seed"}

func addOpenAIFlags(fl *pflag.FlagSet, o *openaiFlags) {
	fl.StringVar(&o.cfg.ServedModel, "served-model", "", "--sut openai: the model name to request (default: the first one GET /v1/models lists); --model stays the MLPerf config key")
	fl.StringVar(&o.cfg.API, "api", openai.APIChat, "--sut openai: chat (/v1/chat/completions) or completions (/v1/completions)")
	fl.BoolVar(&o.stream, "stream", true, "--sut openai: stream responses (server-sent events) and measure time to first token and per token")
	fl.StringVar(&o.cfg.Prompts, "prompts", "", "--sut openai: JSONL file of prompts ({\"prompt\": …} or {\"messages\": […]} a line); default: --qsl-size synthetic prompts of --input-tokens words")
	fl.IntVar(&o.cfg.InputTokens, "input-tokens", 128, "--sut openai: words per synthetic prompt (≈ tokens; a rare word is often 2 or more), or exact tokens with --tokenizer: of the prompt or chat user content as sent, the nonce included (a chat template's tokens are the server's)")
	fl.StringVar(&o.cfg.InputLengths, "input-lengths", "", "--sut openai: draw each synthetic prompt's length instead of --input-tokens: N, uniform:MIN:MAX, normal:MEAN:SD or hist:FILE (CSV LENGTH,WEIGHT rows) (words, or tokens with --tokenizer)")
	fl.StringVar(&o.cfg.Tokenizer, "tokenizer", "", "--sut openai: the server's tokenizer, a tiktoken encoding ("+strings.Join(tokenize.Encodings, ", ")+") or the path of a Hugging Face tokenizer.json: synthetic prompts (--input-tokens), trace prompts and generated session turns (--user-words) get exact lengths in its tokens, and a response without usage is counted in them (default: one word stands for one token)")
	fl.IntVar(&o.cfg.OutputTokens, "output-tokens", 128, "--sut openai: max_tokens of each request (0 = the server's default)")
	fl.StringVar(&o.cfg.OutputLengths, "output-lengths", "", "--sut openai: draw each synthetic prompt's max_tokens instead of --output-tokens, in the forms of --input-lengths (tokens)")
	fl.BoolVar(&o.cfg.IgnoreEOS, "ignore-eos", false, "--sut openai: send ignore_eos so that every response has --output-tokens tokens (vLLM, SGLang)")
	fl.StringVar(&o.cfg.APIKeyEnv, "api-key-env", "OPENAI_API_KEY", "--sut openai: environment variable holding the API key sent as a bearer token (none sent when unset or empty)")
	fl.StringVar(&o.cfg.CACert, "ca-cert", "", "--sut openai: PEM file of the certificate authorities to trust for https")
	fl.BoolVar(&o.cfg.InsecureSkipVerify, "insecure-skip-verify", false, "--sut openai: accept any server certificate (test servers only)")
	fl.StringArrayVar(&o.cfg.Headers, "header", nil, "--sut openai: extra HTTP header \"Name: value\" sent with every request (repeatable); Content-Type, Authorization and Accept need --allow-header-override; the value of a secret-looking header (Authorization, X-Api-Key, …) is not recorded in the bundle")
	fl.BoolVar(&o.cfg.AllowHeaderOverride, "allow-header-override", false, "--sut openai: let --header replace Content-Type, Authorization or Accept")
	fl.StringVar(&o.cfg.ExtraBody, "extra-body", "", "--sut openai: JSON object whose members are added to every request body, e.g. '{\"top_k\": 20}'; keys the client sets (model, stream, max_tokens, temperature, …) are refused")
	fl.StringVar(&o.cfg.HTTPClient, "http-client", openai.ClientAuto, "--sut openai: HTTP client of the requests: auto (aimeter's HTTP/1.1 streaming client for http://, net/http for https://), h1 (aimeter's, http:// only) or net/http")
	fl.BoolVar(&o.salt, "salt", false, "--sut openai: mark each query with MLPerf Endpoints' per-query anti-caching salt, \"[salt: 16 hex digits]\", instead of the leading nonce: after the system prompt in a chat request that has one (so a prefix cache may share the system prompt, never the user content), else at the start of the prompt; recorded in the bundle, and each query's salt follows from --salt-seed and its sequence number")
	fl.Uint64Var(&o.saltSeed, "salt-seed", 0, "--salt: the seed of the salts; the same seed sends the same salts again (Endpoints seeds them with the seed set's model_seed)")
	fl.Float64Var(&o.temperature, "temperature", 0, "--sut openai: sampling temperature sent with every request (default: none sent, the server's default)")
}

// config is the OpenAIConfig of the flags: --stream, --temperature (sent
// only when given), --salt with its seed, and the default client (auto)
// left to the library. A count the flags cannot leave unset is checked
// here, naming its flag.
func (o *openaiFlags) config(changed func(string) bool) (*sut.OpenAIConfig, error) {
	if o.cfg.InputTokens < 1 || o.cfg.OutputTokens < 0 {
		return nil, usageError("--input-tokens must be ≥ 1; --output-tokens and --max-conns must not be negative")
	}
	c := o.cfg
	c.NoStream = !o.stream
	if c.HTTPClient == openai.ClientAuto {
		c.HTTPClient = ""
	}
	if changed("temperature") {
		t := o.temperature
		c.Temperature = &t
	}
	if o.salt {
		seed := o.saltSeed
		c.SaltSeed = &seed
	}
	return &c, nil
}
