package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"aimeter/accuracy"
	"aimeter/benchmark"
)

// maxScoreInput bounds what aimeter accuracy score reads: 1 GiB of JSON.
const maxScoreInput = 1 << 30

func newAccuracyCommand(st *State) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "accuracy",
		Short: "Score model outputs with the reference implementations' metrics",
		Long:  helpText("accuracy"),
		Example: `  aimeter accuracy aimeter-out          # a reference-model run, against its data set's labels
  aimeter accuracy log run --labels labels.json --target "99% of FP32 (76.46)"
  aimeter accuracy score bleu --input hyps.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return scoreLogCommand(cmd, st, args[0], "", "")
		},
	}
	cmd.AddCommand(newAccuracyScoreCommand(st), newAccuracyLogCommand(st))
	return cmd
}

func newAccuracyLogCommand(st *State) *cobra.Command {
	var labelsFile, targetText string
	cmd := &cobra.Command{
		Use:   "log DIR [--labels LABELS.json] [--target SPEC]",
		Short: "Score a run's mlperf_log_accuracy.json top-1 against ground-truth labels",
		Long:  helpText("accuracy_log"),
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return scoreLogCommand(cmd, st, args[0], labelsFile, targetText)
		},
	}
	cmd.Flags().StringVar(&labelsFile, "labels", "", "JSON array of the class of each sample, by qsl_idx (default: the reference data set of the bundle's run)")
	cmd.Flags().StringVar(&targetText, "target", "", `quality target, e.g. "99% of FP32 (76.46)" or 75.69 (percent)`)
	return cmd
}

func scoreLogCommand(cmd *cobra.Command, st *State, dir, labelsFile, targetText string) error {
	if labelsFile == "" {
		if targetText != "" {
			return usageError("--target applies with --labels; without them the reference data set's own target is used")
		}
		return scoreBundleCommand(cmd, st, dir)
	}
	var target *accuracy.Target
	if targetText != "" {
		t, err := accuracy.ParseTarget(targetText)
		if err != nil {
			return usageError("--target: %v", err)
		}
		target = &t
	}
	score, err := benchmark.ScoreLogLabels(dir, labelsFile, target)
	var ue *benchmark.UsageError
	switch {
	case errors.As(err, &ue) && ue.Field == "Labels":
		return usageError("--labels: %v", ue.Err)
	case errors.As(err, &ue):
		return usageError("%v", ue.Err)
	case err != nil:
		return withCode(ExitFailure, err)
	}
	b, _ := json.Marshal(score)
	fmt.Fprintf(st.Stdout, "%s\n", b)
	if !score.Passed() {
		return withCode(ExitInvalid, fmt.Errorf("top-1 %.4f%% is below the target %s = %.4f%%", score.Accuracy, target.Text, target.Value))
	}
	return nil
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
		Use:       "score METRIC --input FILE.json",
		Short:     "Score one JSON input object with a metric and print the result as JSON",
		Long:      helpText("accuracy_score") + strings.Join(lines, "\n"),
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

// scoreBundleCommand scores the accuracy log of the bundle in dir against
// the reference data set it ran on (benchmark.ScoreBundle).
func scoreBundleCommand(cmd *cobra.Command, st *State, dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return withCode(ExitFailure, err)
	}
	check, err := benchmark.ScoreBundle(cmd.Context(), dir, func(n benchmark.Notice) { printNotice(st, n, true) })
	if err != nil {
		return usageError("%v", err)
	}
	out := map[string]any{"metric": check.Metric, "accuracy": check.Value}
	if check.Target > 0 {
		out["target"], out["pass"] = check.Target, check.Pass
	}
	b, _ := json.Marshal(out)
	fmt.Fprintf(st.Stdout, "%s\n", b)
	if check.Target > 0 && !check.Pass {
		return withCode(ExitInvalid, fmt.Errorf("%s %.4f is below the target %.4f", check.Metric, check.Value, check.Target))
	}
	return nil
}
