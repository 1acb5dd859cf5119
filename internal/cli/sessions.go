package cli

import (
	"github.com/spf13/cobra"

	"aimeter/benchmark"
	"aimeter/bundle"
	"aimeter/derived/metrics"
)

func newSessionsCommand(st *State) *cobra.Command {
	var f runFlags
	var slo metrics.SLO
	var g gbtFlags
	var in benchmark.Sessions // the flags of generated or ShareGPT sessions
	var turns string
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "Run multi-turn chat sessions (ShareGPT or generated) against an OpenAI-compatible server",
		Long:  helpText("sessions"),
		Example: `  aimeter sessions --sut openai --url http://localhost:8000 --sessions 100 --turns 2:6 --think 2s
  aimeter sessions --sut openai --url http://localhost:8000 --sharegpt ShareGPT_V3.json --sessions 500 --interval 100ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := refuseOwnLoad(cmd, &g, "sessions", sessionRefusal, "they set their own load"); err != nil {
				return err
			}
			var err error
			if in.MinTurns, in.MaxTurns, err = benchmark.ParseTurns(turns); err != nil {
				return usageError("--turns %v", err)
			}
			p, err := planFromFlags(cmd, st, &f, &g)
			if err != nil {
				return err
			}
			// The flags of generated sessions apply without --sharegpt
			// only (benchmark.Rules): their defaults go, what was given
			// is refused.
			p.Sessions = &in
			clearDefaults(cmd.Flags().Changed, p)
			return runOwnLoad(cmd, st, &f, p, slo)
		},
	}
	addRunFlags(cmd, &f, &g)
	addStoreFlags(cmd, &f.store)
	addSLOFlag(cmd, &slo)
	fl := cmd.Flags()
	fl.StringVar(&in.ShareGPT, "sharegpt", "", "ShareGPT file of conversations (JSON array or JSON lines); default: generated sessions")
	fl.IntVar(&in.Sessions, "sessions", 10, "number of generated sessions, or the most taken from --sharegpt (0 = all of the file)")
	fl.StringVar(&turns, "turns", "3", "turns of a generated session: N or MIN:MAX (uniform)")
	fl.IntVar(&in.UserWords, "user-words", 64, "words of each generated user message (≈ tokens), or exact tokens with --tokenizer")
	fl.IntVar(&in.AnswerTokens, "answer-tokens", 64, "max_tokens of each generated turn")
	fl.DurationVar(&in.Think, "think", 0, "think time between an answer and the next turn of its session")
	fl.DurationVar(&in.Interval, "interval", 0, "time between the starts of consecutive sessions (0 = all at once)")
	fl.Uint64Var(&in.Seed, "session-seed", 0, "seed of the generated sessions")
	fl.StringVar(&in.History, "history", bundle.HistoryServer, "what a later turn's history holds as the answers to the earlier turns: server (the server's own answers, as a chat client sends them) or dataset (the data set's answers, the same text every run)")
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
