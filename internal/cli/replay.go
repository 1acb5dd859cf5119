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
		Long:  helpText("replay"),
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
