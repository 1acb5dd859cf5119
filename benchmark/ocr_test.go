package benchmark

import (
	"os"
	"strings"
	"testing"

	"aimeter/dataset/ocr"
	"aimeter/loadgen"
)

// The ocr-dbnet scorer matches the logged boxes with the ground truth:
// the truth itself scores 100 %, half the words missed and a stray box
// lower, a malformed response is an error naming its entry.
func TestOCRScorer(t *testing.T) {
	for _, f := range []string{ocr.DefaultFont, ocr.DefaultWords} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("%s is missing: run %s", f, ocr.SetupHint)
		}
	}
	set, err := ocr.Generate(ocr.Options{Images: 4, MinWords: 2, MaxWords: 2, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	score := ocrScorer(set)
	entries := func(boxes func(i int) []ocr.Quad) []loadgen.AccuracyEntry {
		var out []loadgen.AccuracyEntry
		for i := range set.Len() {
			out = append(out, loadgen.AccuracyEntry{SeqID: uint64(i), QSLIndex: uint64(i), Data: ocr.EncodeQuads(nil, boxes(i))})
		}
		return out
	}
	tests := []struct {
		why   string
		boxes func(i int) []ocr.Quad
		want  float64
		pass  bool
	}{
		{"the ground truth itself", set.Boxes, 100, true},
		{"the first word of each image only: recall 1/2, precision 1", func(i int) []ocr.Quad { return set.Boxes(i)[:1] }, 100 * 2 * 0.5 / 1.5, false},
		{"each truth plus a stray box: precision 2/3, recall 1", func(i int) []ocr.Quad {
			return append(set.Boxes(i), ocr.Quad{{0, 0}, {3, 0}, {3, 3}, {0, 3}})
		}, 100 * 2 * (2.0 / 3) / (2.0/3 + 1), false},
		{"nothing detected", func(int) []ocr.Quad { return nil }, 0, false},
	}
	for _, tc := range tests {
		c, err := score(entries(tc.boxes))
		if err != nil {
			t.Fatalf("%s: %v", tc.why, err)
		}
		if d := c.Value - tc.want; d > 1e-9 || d < -1e-9 || c.Pass != tc.pass || c.Target != 100*OCRTargetHMean {
			t.Errorf("%s: %+v, want value %v, pass %v", tc.why, c, tc.want, tc.pass)
		}
	}
	bad := entries(set.Boxes)
	bad[2].Data = bad[2].Data[:5]
	if _, err := score(bad); err == nil || !strings.Contains(err.Error(), "seq_id 2") {
		t.Errorf("a truncated response: %v", err)
	}
	out := entries(set.Boxes)
	out[0].QSLIndex = 99
	if _, err := score(out); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("an index outside the set: %v", err)
	}
	if _, err := score(nil); err == nil {
		t.Error("an empty log scored")
	}
}
