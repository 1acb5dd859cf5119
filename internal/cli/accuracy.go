package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"aimeter/accuracy"
)

// maxScoreInput bounds what aimeter accuracy score reads: 1 GiB of JSON.
const maxScoreInput = 1 << 30

func newAccuracyCommand(st *State) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "accuracy",
		Short: "Score model outputs with the reference implementations' metrics",
		Long: `Score model outputs with scorers that match the reference implementations
exactly (scikit-learn, pycocotools, sacreBLEU, rouge-score, the official
SQuAD script, ...; see docs/accuracy.md). "aimeter accuracy score METRIC"
reads one JSON object and prints one.`,
	}
	cmd.AddCommand(newAccuracyScoreCommand(st))
	return cmd
}

func newAccuracyScoreCommand(st *State) *cobra.Command {
	var input string
	var names []string
	var lines []string
	for _, m := range accuracy.Metrics() {
		names = append(names, m[0])
		lines = append(lines, fmt.Sprintf("  %-9s %s", m[0], m[1]))
	}
	cmd := &cobra.Command{
		Use:   "score METRIC --input FILE.json",
		Short: "Score one JSON input object with a metric and print the result as JSON",
		Long: `Read one JSON object from --input (- for standard input), score it with
METRIC and print the result, one JSON object, on standard output; exit 0.
A malformed or inconsistent input (mismatched lengths, values out of
range) is an error naming the field and the entry, and exit 2: never a
partial score. The metrics (input and output fields in docs/accuracy.md):

` + strings.Join(lines, "\n"),
		Args:      cobra.ExactArgs(1),
		ValidArgs: names,
		RunE: func(cmd *cobra.Command, args []string) error {
			return scoreCommand(st, args[0], input)
		},
	}
	cmd.Flags().StringVarP(&input, "input", "i", "", "the JSON input object; - for standard input (required)")
	return cmd
}

func scoreCommand(st *State, metric, input string) error {
	if input == "" {
		return usageError("--input is required: the JSON input object, or - for standard input")
	}
	var r io.Reader = st.Stdin
	if input != "-" {
		f, err := os.Open(input)
		if err != nil {
			return usageError("--input: %v", err)
		}
		defer f.Close()
		r = f
	}
	if r == nil {
		r = strings.NewReader("")
	}
	data, err := io.ReadAll(io.LimitReader(r, maxScoreInput+1))
	if err != nil {
		return withCode(ExitFailure, fmt.Errorf("reading %s: %w", input, err))
	}
	if len(data) > maxScoreInput {
		return usageError("--input %s: larger than %d bytes", input, maxScoreInput)
	}
	out, err := accuracy.ScoreJSON(metric, data)
	if err != nil {
		return usageError("%s: %v", metric, err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	_, err = fmt.Fprintf(st.Stdout, "%s\n", b)
	return err
}
