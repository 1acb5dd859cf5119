package mllog_test

import (
	"context"
	"testing"

	"aimeter/train/mllog"
)

// TestQuoteLineIsItsStreams: a child's stdout and stderr feed one parser,
// their lines interleaving as the pipes are read; a quoted line is
// numbered within its own stream, so that the number is the same on every
// run (it was the count of both streams' lines so far, which moved with
// the order the pipes were read in).
func TestQuoteLineIsItsStreams(t *testing.T) {
	script := `echo "stderr first" >&2; printf 'one\ntwo\n:::MLLOG {not json\n'; echo "stderr last" >&2`
	for i := range 20 {
		res, err := mllog.RunCommand(context.Background(), []string{"sh", "-c", script}, mllog.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if q := res.Stats.FirstMalformed; len(q) != 1 || q[0].Line != 3 || res.Stats.Lines != 5 {
			t.Fatalf("run %d: quotes %+v, %d lines; want the malformed line as stdout's third of five lines", i, q, res.Stats.Lines)
		}
	}
}
