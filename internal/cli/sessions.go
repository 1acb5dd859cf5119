package cli

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"aimeter/benchmark"
	"aimeter/bundle"
)

// sessionFlags are the flags of aimeter sessions beyond those of aimeter
// run.
type sessionFlags struct {
	sharegpt     string
	sessions     int
	turns        string
	userWords    int
	answerTokens int
	think        time.Duration
	interval     time.Duration
	seed         uint64
	history      string
}

func newSessionsCommand(st *State) *cobra.Command {
	var f runFlags
	var slo string
	var g gbtFlags
	var sf sessionFlags
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "Run multi-turn chat sessions (ShareGPT or generated) against an OpenAI-compatible server",
		Long:  helpText("sessions"),
		Example: `  aimeter sessions --sut openai --url http://localhost:8000 --sessions 100 --turns 2:6 --think 2s
  aimeter sessions --sut openai --url http://localhost:8000 --sharegpt ShareGPT_V3.json --sessions 500 --interval 100ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			changed := cmd.Flags().Changed
			for _, name := range []string{"from", "duration", "concurrency", "warmup", "scenario", "mode", "prompts", "performance-sample-count", "qsl-size", "input-tokens", "input-lengths", "output-tokens", "output-lengths"} {
				if cmd.Flags().Lookup(name) != nil && changed(name) {
					return usageError("--%s does not apply to sessions: %s", name, sessionRefusal(name))
				}
			}
			if g.mode >= 0 {
				return usageError("--arrival-mode does not apply to sessions: they set their own load")
			}
			in := &benchmark.Sessions{ShareGPT: sf.sharegpt, Sessions: sf.sessions, Think: sf.think, Interval: sf.interval, Seed: sf.seed, History: sf.history,
				UserWords: sf.userWords, AnswerTokens: sf.answerTokens}
			lo, hi, err := parseTurns(sf.turns)
			if err != nil {
				return err
			}
			in.MinTurns, in.MaxTurns = lo, hi
			p, err := planFromFlags(cmd, st, &f, &g)
			if err != nil {
				return err
			}
			// The flags of generated sessions apply without --sharegpt
			// only (benchmark.Rules): their defaults go, what was given
			// is refused.
			p.Sessions = in
			clearDefaults(changed, p)
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
	fl.StringVar(&sf.sharegpt, "sharegpt", "", "ShareGPT file of conversations (JSON array or JSON lines); default: generated sessions")
	fl.IntVar(&sf.sessions, "sessions", 10, "number of generated sessions, or the most taken from --sharegpt (0 = all of the file)")
	fl.StringVar(&sf.turns, "turns", "3", "turns of a generated session: N or MIN:MAX (uniform)")
	fl.IntVar(&sf.userWords, "user-words", 64, "words of each generated user message (≈ tokens), or exact tokens with --tokenizer")
	fl.IntVar(&sf.answerTokens, "answer-tokens", 64, "max_tokens of each generated turn")
	fl.DurationVar(&sf.think, "think", 0, "think time between an answer and the next turn of its session")
	fl.DurationVar(&sf.interval, "interval", 0, "time between the starts of consecutive sessions (0 = all at once)")
	fl.Uint64Var(&sf.seed, "session-seed", 0, "seed of the generated sessions")
	fl.StringVar(&sf.history, "history", bundle.HistoryServer, "what a later turn's history holds as the answers to the earlier turns: server (the server's own answers, as a chat client sends them) or dataset (the data set's answers, the same text every run)")
	return cmd
}

// sessionRefusal says why a run flag does not apply to sessions.
func sessionRefusal(name string) string {
	switch name {
	case "from":
		return "repeat a sessions run with aimeter run --from DIR"
	case "prompts", "qsl-size", "input-tokens", "input-lengths", "output-tokens", "output-lengths", "performance-sample-count":
		return "the sessions' turns are the prompts (--sharegpt, or --user-words and --answer-tokens)"
	}
	return "sessions set their own load and run on the Server scenario's issuing"
}

// parseTurns parses N or MIN:MAX.
func parseTurns(v string) (int, int, error) {
	lo, hi, ranged := strings.Cut(v, ":")
	a, err1 := strconv.Atoi(lo)
	b := a
	var err2 error
	if ranged {
		b, err2 = strconv.Atoi(hi)
	}
	if err1 != nil || err2 != nil || a < 1 || b < a {
		return 0, 0, usageError("--turns %q: want N or MIN:MAX with 1 ≤ MIN ≤ MAX", v)
	}
	return a, b, nil
}
