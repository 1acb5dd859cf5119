package cli

import (
	"github.com/spf13/cobra"

	"aimeter/benchmark"
	"aimeter/derived/metrics"
)

func newReplayCommand(st *State) *cobra.Command {
	var f runFlags
	var slo metrics.SLO
	var g gbtFlags
	var rp benchmark.Replay // the flags of the replay; its Path is the argument
	cmd := &cobra.Command{
		Use:   "replay TRACE",
		Short: "Replay a request trace (Mooncake JSONL or CSV) against an OpenAI-compatible server",
		Long:  helpText("replay"),
		Example: `  aimeter replay trace.jsonl --sut openai --url http://localhost:8000 --ignore-eos
  aimeter replay trace.jsonl --sut openai --url http://localhost:8000 --speedup 2 --max-duration 5m
  aimeter replay requests.csv --sut openai --url http://localhost:8000 --max-requests 1000`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			why := func(name string) string { return replayRefusal[name] }
			if err := refuseOwnLoad(cmd, &g, "a replay", why, "the trace is the arrival schedule"); err != nil {
				return err
			}
			if err := checkSpeedup(rp.Speedup); err != nil {
				return err
			}
			p, err := planFromFlags(cmd, st, &f, &g)
			if err != nil {
				return err
			}
			rp.Path = args[0]
			p.Replay = &rp
			return runOwnLoad(cmd, st, &f, p, slo)
		},
	}
	addRunFlags(cmd, &f, &g)
	addStoreFlags(cmd, &f.store)
	addSLOFlag(cmd, &slo)
	fl := cmd.Flags()
	fl.Float64Var(&rp.Speedup, "speedup", 1, "divide the trace's gaps by this factor (2: twice as fast, 0.5: half speed)")
	fl.IntVar(&rp.MaxRequests, "max-requests", 0, "replay only the first N requests of the trace (0 = all)")
	fl.DurationVar(&rp.MaxDuration, "max-duration", 0, "replay only the requests scheduled before this offset, after --speedup (e.g. 5m; 0 = all)")
	fl.Uint64Var(&rp.Seed, "prompt-seed", 0, "seed of the prompts' words (the same seed and trace give the same prompts)")
	return cmd
}

// checkSpeedup refuses a --speedup outside trace.Schedule's range, 0
// included: the plan's zero Replay.Speedup means 1, but a 0 typed on the
// command line is a mistake (a factor that would stop the clock), not a
// request for the trace's own pace.
func checkSpeedup(v float64) error {
	if !(v >= 1e-6 && v <= 1e6) {
		return usageError("--speedup %v: want a factor in [1e-6, 1e6] (2 replays twice as fast, 0.5 at half speed, 1 at the trace's pace)", v)
	}
	return nil
}

// ownLoadFlags are the run flags that do not apply to a command that
// brings its own load, prompts and issuing (aimeter replay, aimeter
// sessions).
var ownLoadFlags = []string{"from", "duration", "concurrency", "warmup", "scenario", "mode", "prompts", "performance-sample-count", "qsl-size", "input-tokens", "input-lengths", "output-tokens", "output-lengths"}

// refuseOwnLoad refuses the first of ownLoadFlags the user gave, saying
// why (why), and --arrival-mode (arrival says why not); what names the
// command's run ("a replay").
func refuseOwnLoad(cmd *cobra.Command, g *gbtFlags, what string, why func(flag string) string, arrival string) error {
	for _, name := range ownLoadFlags {
		if cmd.Flags().Lookup(name) != nil && cmd.Flags().Changed(name) {
			return usageError("--%s does not apply to %s: %s", name, what, why(name))
		}
	}
	if g.mode >= 0 {
		return usageError("--arrival-mode does not apply to %s: %s", what, arrival)
	}
	return nil
}

// runOwnLoad runs the plan of aimeter replay or aimeter sessions, with
// the per-request SLO of --slo, and prints its outcome.
func runOwnLoad(cmd *cobra.Command, st *State, f *runFlags, p *benchmark.Plan, slo metrics.SLO) error {
	p.SLO = slo.Bundle()
	f.goMemLimit.SetGoMemoryLimit()
	return runPlan(cmd.Context(), st, p, f.quiet, f.json, f.store)
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
