package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"aimeter/serve"
)

type serveOpenAIFlags struct {
	addr          string
	models        []string
	ownedBy       string
	outputTokens  string
	ttft          string
	tpot          string
	maxTokens     int
	fault5xx      float64
	faultReset    float64
	faultStall    float64
	faultTruncate float64
	faultMalform  float64
	faultNoUsage  float64
	seed          uint64
	seedByCounter bool
	// cacheResponses is serve.OpenAIOptions.CacheResponses.
	cacheResponses bool
	sendLog        string
}

func newServeOpenAICommand(st *State) *cobra.Command {
	var f serveOpenAIFlags
	cmd := &cobra.Command{
		Use:   "openai",
		Short: "Serve an OpenAI-compatible streaming simulator with seeded latencies and injected faults",
		Long:  helpText("serve_openai"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServeOpenAI(cmd.Context(), st, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "listen address (host:port; port 0 picks a free one)")
	fl.StringArrayVar(&f.models, "model", []string{"sim"}, "model id served (repeat for more)")
	fl.StringVar(&f.ownedBy, "owned-by", "aimeter", "owned_by of the listed models")
	fl.StringVar(&f.outputTokens, "output-tokens", "max_tokens", "output length distribution: "+serve.LengthDistForms)
	fl.StringVar(&f.ttft, "ttft", "0", "time to first token distribution: "+serve.DurationDistForms)
	fl.StringVar(&f.tpot, "tpot", "0", "time per output token distribution (drawn per token), forms as --ttft")
	fl.IntVar(&f.maxTokens, "max-tokens", 256, "max_tokens of a request that has none")
	fl.Float64Var(&f.fault5xx, "fault-5xx", 0, "probability of an HTTP 500, 503 or 429 answer")
	fl.Float64Var(&f.faultReset, "fault-reset", 0, "probability of a connection reset (TCP RST)")
	fl.Float64Var(&f.faultStall, "fault-stall", 0, "probability of a stall: no answer until the client goes away")
	fl.Float64Var(&f.faultTruncate, "fault-truncate", 0, "probability of a response cut short (no [DONE]) and the connection dropped")
	fl.Float64Var(&f.faultMalform, "fault-malformed", 0, "probability of one event (or body) of invalid JSON")
	fl.Float64Var(&f.faultNoUsage, "fault-no-usage", 0, "probability of a response without usage")
	fl.Uint64Var(&f.seed, "seed", 0, "run seed of every draw")
	fl.BoolVar(&f.seedByCounter, "seed-by-counter", false, "seed each request by its arrival number instead of its prompt")
	fl.StringVar(&f.sendLog, "send-log", "", "write every event's send time and tokens, and each request's arrival, as JSON lines to this file")
	fl.BoolVar(&f.cacheResponses, "cache-responses", false, "simulate a result cache (a fault for testing aimeter audit TEST04): a prompt answered before is answered at once, without TTFT and TPOT delays")
	cmd.SetOut(st.Stdout)
	return cmd
}

// openAIFlags names the flag of each serve.OpenAIOptions field that
// serve.FieldError reports.
var openAIFlags = map[string]string{
	"OutputTokens": "--output-tokens", "TTFT": "--ttft", "TPOT": "--tpot",
	"DefaultMaxTokens": "--max-tokens", "Models": "--model", "Faults": "--fault-*",
	"Faults.Status5xx": "--fault-5xx", "Faults.Reset": "--fault-reset", "Faults.Stall": "--fault-stall",
	"Faults.Truncate": "--fault-truncate", "Faults.Malformed": "--fault-malformed", "Faults.NoUsage": "--fault-no-usage",
}

// openAIOptions turns the flags into simulator options, checked
// (serve.OpenAIOptions.Check); errors name the flag.
func (f *serveOpenAIFlags) openAIOptions() (serve.OpenAIOptions, error) {
	o := serve.OpenAIOptions{
		Models: f.models, OwnedBy: f.ownedBy, DefaultMaxTokens: f.maxTokens,
		Seed: f.seed, SeedByCounter: f.seedByCounter, CacheResponses: f.cacheResponses,
		Faults: serve.Faults{Status5xx: f.fault5xx, Reset: f.faultReset, Stall: f.faultStall,
			Truncate: f.faultTruncate, Malformed: f.faultMalform, NoUsage: f.faultNoUsage},
	}
	if f.maxTokens < 1 { // 0 is the library's default, not a value to give
		return o, fmt.Errorf("--max-tokens %d: must be at least 1", f.maxTokens)
	}
	err := o.ParseDists(f.outputTokens, f.ttft, f.tpot)
	if err == nil {
		err = o.Check()
	}
	return o, openAIFlagError(err)
}

// openAIFlagError names the flag of a serve.FieldError.
func openAIFlagError(err error) error {
	var fe *serve.FieldError
	if errors.As(err, &fe) && openAIFlags[fe.Field] != "" {
		sep := " "
		if !strings.HasPrefix(fe.Field, "Faults.") {
			sep = ": " // a probability's Err starts with its value
		}
		return fmt.Errorf("%s%s%w", openAIFlags[fe.Field], sep, fe.Err)
	}
	return err
}

func runServeOpenAI(parent context.Context, st *State, f *serveOpenAIFlags) error {
	opts, err := f.openAIOptions()
	if err != nil {
		return withCode(ExitUsage, err)
	}
	ctx, stop := interruptible(parent, st)
	defer stop()
	stats, err := serve.ServeOpenAI(ctx, opts, serve.OpenAIServeOptions{
		Addr: f.addr, SendLog: f.sendLog,
		Ready: func(addr net.Addr) {
			fmt.Fprintf(st.Stdout, "aimeter serve openai: listening on http://%s (models %s; output tokens %s, TTFT %s, TPOT %s, seed %d)\n",
				addr, strings.Join(opts.Models, ", "), f.outputTokens, f.ttft, f.tpot, f.seed)
		},
		ShutdownFailed: func(timeout time.Duration, err error) {
			fmt.Fprintf(st.Stderr, "aimeter serve openai: shutdown after %v: %v; connections closed\n", timeout, err)
		},
	})
	if stats != nil {
		fmt.Fprintf(st.Stdout, "aimeter serve openai: stopped; %s\n", *stats)
	}
	var le *serve.ListenError
	var se *serve.SendLogError
	var oe *serve.OptionsError
	switch {
	case errors.As(err, &se) && se.Create:
		return withCode(ExitFailure, fmt.Errorf("--send-log: %w", se.Err))
	case errors.As(err, &se):
		return withCode(ExitFailure, fmt.Errorf("--send-log %s: %w", se.Path, se.Err))
	case errors.As(err, &oe):
		return withCode(ExitUsage, openAIFlagError(err))
	case errors.As(err, &le):
		return withCode(ExitFailure, fmt.Errorf("--addr %s: %w", le.Addr, le.Err))
	case err != nil:
		return withCode(ExitFailure, err)
	}
	return nil
}
