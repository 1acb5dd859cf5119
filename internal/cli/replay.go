package cli

import (
	"time"

	"github.com/spf13/cobra"

	"aimeter/benchmark"
)

// replayFlags are the flags of aimeter replay beyond those of aimeter run.
type replayFlags struct {
	speedup     float64
	maxRequests int
	maxDuration time.Duration
	seed        uint64
}

func newReplayCommand(st *State) *cobra.Command {
	var f runFlags
	var slo string
	var g gbtFlags
	var rf replayFlags
	cmd := &cobra.Command{
		Use:   "replay TRACE",
		Short: "Replay a request trace (Mooncake JSONL or CSV) against an OpenAI-compatible server",
		Long: `Replay a trace: request k goes out at its time in the trace, with a prompt of
its input length and max_tokens its output length, and its latency (TTFT, TPOT,
end to end) counts from that scheduled time, never from the send.

TRACE is Mooncake's JSONL (one {"timestamp": ms, "input_length": N,
"output_length": M, "hash_ids": [...]} a line; prompts whose hash ids are equal
share equal text block by block, so a prefix cache hits as it did in the trace)
or a CSV of t_ms,input_tokens,output_tokens[,session] (a session's requests
share a growing prefix). The first request goes out at once; the others keep
their gaps, divided by --speedup. --max-requests and --max-duration cut the
schedule. A malformed trace (unordered or negative times, a missing field, an
absurd length) is refused before the run, naming its line and field.

The run is a Server performance run with explicit arrivals: it is VALID when
every request of the schedule went out and the latency bound was met. The send
lateness (issue time minus trace time: p50, p99, max, and the requests later
than 1 ms) is printed after the run; the records of the bundle hold both times.
Add --ignore-eos so that the server writes each request's output length.
See docs/replay.md.`,
		Example: `  aimeter replay trace.jsonl --sut openai --url http://localhost:8000 --ignore-eos
  aimeter replay trace.jsonl --sut openai --url http://localhost:8000 --speedup 2 --max-duration 5m
  aimeter replay requests.csv --sut openai --url http://localhost:8000 --max-requests 1000`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			changed := cmd.Flags().Changed
			for _, name := range []string{"from", "duration", "concurrency", "warmup", "scenario", "mode", "prompts", "performance-sample-count", "qsl-size", "input-tokens", "input-lengths", "output-tokens", "output-lengths"} {
				if cmd.Flags().Lookup(name) != nil && changed(name) {
					return usageError("--%s does not apply to a replay: %s", name, replayRefusal[name])
				}
			}
			if g.mode >= 0 {
				return usageError("--arrival-mode does not apply to a replay: the trace is the arrival schedule")
			}
			p, err := planFromFlags(cmd, st, &f, &g)
			if err != nil {
				return err
			}
			p.Replay = &benchmark.Replay{Path: args[0], Speedup: rf.speedup, MaxRequests: rf.maxRequests, MaxDuration: rf.maxDuration, Seed: rf.seed}
			if p.SLO, err = parseRunSLO(slo); err != nil {
				return err
			}
			f.goMemLimit.SetGoMemoryLimit()
			return runPlan(cmd.Context(), st, p, f.quiet, f.json, f.store)
		},
	}
	addRunFlags(cmd, &f, &g)
	addStoreFlags(cmd, &f.store)
	addSLOFlag(cmd, &slo)
	fl := cmd.Flags()
	fl.Float64Var(&rf.speedup, "speedup", 1, "divide the trace's gaps by this factor (2: twice as fast, 0.5: half speed)")
	fl.IntVar(&rf.maxRequests, "max-requests", 0, "replay only the first N requests of the trace (0 = all)")
	fl.DurationVar(&rf.maxDuration, "max-duration", 0, "replay only the requests scheduled before this offset, after --speedup (e.g. 5m; 0 = all)")
	fl.Uint64Var(&rf.seed, "prompt-seed", 0, "seed of the prompts' words (the same seed and trace give the same prompts)")
	return cmd
}

// replayRefusal says why a run flag does not apply to a replay.
var replayRefusal = map[string]string{
	"from":                     "repeat a replay with aimeter run --from DIR",
	"duration":                 "the trace sets the duration; cut it with --max-duration",
	"concurrency":              "the trace sets when each request goes out",
	"warmup":                   "a replay has no warm-up; cut the trace instead",
	"scenario":                 "a replay runs on the Server scenario's issuing",
	"mode":                     "a replay is a performance run",
	"prompts":                  "the prompts are built from the trace",
	"performance-sample-count": "every request is a sample of its own",
	"qsl-size":                 "the trace's requests are the samples",
	"input-tokens":             "the trace gives each request's input length",
	"input-lengths":            "the trace gives each request's input length",
	"output-tokens":            "the trace gives each request's output length (max_tokens)",
	"output-lengths":           "the trace gives each request's output length (max_tokens)",
}
