package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"aimeter/dataset/prompts"
	"aimeter/loadgen"
	"aimeter/sut/kserve"
	"aimeter/sut/netsut"
	"aimeter/sut/openai"
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
	// set is the prompt set, read or made once (several endpoints of
	// --sut dispatch --backend openai share it).
	set *prompts.Set
	// exactPrompts is set by adjustOpenAISettings for accuracy and
	// submission runs: the prompts go out without their nonce.
	exactPrompts bool
}

// openaiFlagNames lists the flags addOpenAIFlags defines, for the help's
// flag groups.
var openaiFlagNames = []string{"served-model", "api", "stream", "prompts", "input-tokens", "output-tokens",
	"ignore-eos", "api-key-env", "ca-cert", "insecure-skip-verify"}

func addOpenAIFlags(fl *pflag.FlagSet, o *openaiFlags) {
	fl.StringVar(&o.model, "served-model", "", "--sut openai: the model name to request (default: the first one GET /v1/models lists); --model stays the MLPerf config key")
	fl.StringVar(&o.api, "api", openai.APIChat, "--sut openai: chat (/v1/chat/completions) or completions (/v1/completions)")
	fl.BoolVar(&o.stream, "stream", true, "--sut openai: stream responses (server-sent events) and measure time to first token and per token")
	fl.StringVar(&o.prompts, "prompts", "", "--sut openai: JSONL file of prompts ({\"prompt\": …} or {\"messages\": […]} a line); default: --qsl-size synthetic prompts of --input-tokens words")
	fl.IntVar(&o.inputTokens, "input-tokens", 128, "--sut openai: words per synthetic prompt (≈ tokens; a rare word is often 2 or more)")
	fl.IntVar(&o.outputTokens, "output-tokens", 128, "--sut openai: max_tokens of each request (0 = the server's default)")
	fl.BoolVar(&o.ignoreEOS, "ignore-eos", false, "--sut openai: send ignore_eos so that every response has --output-tokens tokens (vLLM, SGLang)")
	fl.StringVar(&o.apiKeyEnv, "api-key-env", "OPENAI_API_KEY", "--sut openai: environment variable holding the API key sent as a bearer token (none sent when unset or empty)")
	fl.StringVar(&o.caCert, "ca-cert", "", "--sut openai: PEM file of the certificate authorities to trust for https")
	fl.BoolVar(&o.insecure, "insecure-skip-verify", false, "--sut openai: accept any server certificate (test servers only)")
}

// adjustOpenAISettings applies what --sut openai implies to the settings:
// token latencies when streaming (unless a config file or --set chose),
// exact prompts for the runs whose responses are scored, and, in place
// of the self-test defaults (sized for the null SUT), a load a real
// server can take: 10 queries/s for 10 s.
func adjustOpenAISettings(f *runFlags, s *loadgen.Settings, sources settingSources) {
	if f.sut != "openai" {
		return
	}
	// The self-test defaults size runs for the null SUT (100 000
	// queries/s); a server gets a gentler load unless told otherwise.
	selfTest := func(key string) bool {
		if !strings.HasPrefix(sources[key], "aimeter's self-test defaults") {
			return false
		}
		sources[key] = "aimeter's defaults for --sut openai (no --model and no config file given)"
		return true
	}
	if selfTest("min_duration") {
		s.MinDurationMs = 10_000
	}
	if selfTest("target_qps") {
		s.ServerTargetQPS, s.OfflineExpectedQPS = 10, 10
	}
	if selfTest("target_latency") {
		s.ServerTargetLatencyNs = uint64(time.Minute)
		s.SingleStreamExpectedLatencyNs = uint64(time.Second)
		s.MultiStreamExpectedLatencyNs = uint64(2 * time.Second)
	}
	f.openai.exactPrompts = s.Mode == loadgen.AccuracyOnly || s.Mode == loadgen.SubmissionRun
}

// newOpenAISUT builds the OpenAI-compatible client and its prompts, and
// checks the server before the run.
func newOpenAISUT(ctx context.Context, st *State, f *runFlags) (loadgen.SUT, loadgen.QSL, func(), error) {
	u, err := f.net.oneURL("openai")
	if err != nil {
		return nil, nil, nil, err
	}
	if err := f.net.validate(); err != nil {
		return nil, nil, nil, err
	}
	ep, err := newOpenAIEndpoint(u, f)
	if err != nil {
		return nil, nil, nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, f.net.checkTimeout)
	err = ep.Check(cctx)
	cancel()
	if err != nil {
		ep.Close()
		return nil, nil, nil, withCode(ExitFailure, fmt.Errorf("--sut openai: the server is not usable: %w", err))
	}
	set := f.openai.set
	if !f.quiet {
		fmt.Fprintf(st.Stderr, "aimeter: %s; %d prompts from %s\n", ep.Name(), set.Len(), set.Name())
	}
	sut := netsut.New(ctx, ep, netsut.Options{RequestTimeout: f.net.requestTimeout})
	return sut, set, func() { sut.Close() }, nil
}

// openaiPrompts reads or makes the prompt set of the OpenAI flags, once.
func openaiPrompts(f *runFlags) (*prompts.Set, error) {
	o := &f.openai
	if o.set != nil {
		return o.set, nil
	}
	if err := needFile("--prompts", o.prompts); err != nil {
		return nil, err
	}
	var set *prompts.Set
	var err error
	if o.prompts != "" {
		set, err = prompts.ReadJSONL(o.prompts)
	} else {
		if f.qslSize > 1<<24 {
			return nil, usageError("--qsl-size %d: at most %d synthetic prompts", f.qslSize, 1<<24)
		}
		set, err = prompts.Synthetic(prompts.SyntheticOptions{Count: int(f.qslSize), InputWords: o.inputTokens})
	}
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	set.SetPerformanceSampleCount(f.perfSamples)
	o.set = set
	return set, nil
}

// newOpenAIEndpoint builds the client of one OpenAI-compatible server at
// rawURL from the OpenAI flags (--sut openai, or a node of --sut dispatch
// --backend openai). It does not contact the server.
func newOpenAIEndpoint(rawURL string, f *runFlags) (*openai.Endpoint, error) {
	o := &f.openai
	if o.inputTokens < 1 || o.outputTokens < 0 || f.net.maxConns < 0 {
		return nil, usageError("--input-tokens must be ≥ 1; --output-tokens and --max-conns must not be negative")
	}
	if err := needFile("--ca-cert", o.caCert); err != nil {
		return nil, err
	}
	set, err := openaiPrompts(f)
	if err != nil {
		return nil, err
	}
	key := ""
	if o.apiKeyEnv != "" {
		key = os.Getenv(o.apiKeyEnv)
	}
	ep, err := openai.New(openai.Options{
		BaseURL: rawURL, Model: o.model, API: o.api, Stream: o.stream, MaxTokens: o.outputTokens, IgnoreEOS: o.ignoreEOS,
		APIKey: key, TLS: openai.TLSOptions{CAFile: o.caCert, InsecureSkipVerify: o.insecure}, MaxConns: f.net.maxConns, LimitConns: f.net.maxConns > 0,
		Prompts: set, AllowRepeatedPrompts: o.exactPrompts,
	})
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	return ep, nil
}

// printClientStats prints the client's own counters after a run against an
// OpenAI-compatible or a KServe v2 server; other SUTs print nothing.
func printClientStats(st *State, sut loadgen.SUT) {
	ns, ok := sut.(*netsut.SUT)
	if !ok {
		return
	}
	w := st.Stdout
	var lateness netsut.Durations
	switch ep := ns.Endpoint().(type) {
	case *openai.Endpoint:
		s := ep.Stats()
		fmt.Fprintln(w, "client:")
		fmt.Fprintf(w, "  requests %d, errors %d\n", s.Requests, s.Errors)
		fmt.Fprintf(w, "  token count mismatches (usage vs chunks) %d, responses without usage %d, token times dropped %d\n",
			s.TokenMismatches, s.MissingUsage, s.TokenTimesDropped)
		lateness = s.SendLateness
	case *kserve.Endpoint:
		s := ep.Stats()
		if s.Requests == 0 { // HTTP: nothing counted
			return
		}
		fmt.Fprintln(w, "client:")
		fmt.Fprintf(w, "  requests %d, errors %d\n", s.Requests, s.Errors)
		lateness = s.SendLateness
	default:
		return
	}
	if lateness.Count > 0 {
		fmt.Fprintf(w, "  send lateness (request written − issued) p50 %v, p99 %v, max %v\n",
			lateness.P50, lateness.P99, lateness.Max)
	}
}

// openaiTokenLatencies turns token latencies on for a streaming --sut
// openai run unless a config file chose. It applies before --set, as an
// earlier file would, so that --set ttft_latency and tpot_latency (which
// LoadGen reads only while token latencies are on) take effect.
func openaiTokenLatencies(f *runFlags, s *loadgen.Settings, sources settingSources) {
	if f.sut != "openai" && !(f.sut == "dispatch" && f.dispatch.backend == "openai") {
		return
	}
	if _, set := sources["use_token_latencies"]; !set && f.openai.stream {
		s.UseTokenLatencies = true
		sources["use_token_latencies"] = "--sut openai --stream"
	}
}
