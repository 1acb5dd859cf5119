package accuracy

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"aimeter/internal/peerstest"
)

// pyRef runs a Python program of a reference implementation (scikit-learn,
// pycocotools, sacrebleu, rouge-score, nltk, Levenshtein, numpy; installed
// by scripts/install-peers.sh kserve-python) with input as JSON on its
// standard input, and decodes its standard output, one JSON value, into
// out. The test is skipped when no virtualenv has the references, or fails
// under AIMETER_REQUIRE_PEERS=1 (as in CI).
func pyRef(t *testing.T, program string, input, out any) {
	t.Helper()
	bin := peerstest.Bin(t, nil, "numpy, sklearn, sacrebleu, rouge_score, pycocotools, nltk, Levenshtein, shapely")
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "python"), "-c", program)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("reference program: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("reference program output: %v\n%s", err, stdout.String())
	}
}
