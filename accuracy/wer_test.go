package accuracy

import (
	"strings"
	"testing"
)

func TestErrorRates(t *testing.T) {
	for _, tc := range []struct {
		refs, hyps []string
		wer, cer   float64
		reason     string
	}{
		{[]string{"the cat sat"}, []string{"the cat sat"}, 0, 0, "identical"},
		{[]string{"the cat sat"}, []string{"the cat"}, 1.0 / 3, 4.0 / 11, "a deleted word (and its 4 characters, space included)"},
		{[]string{"a b", "c d e"}, []string{"a x", "c d e f"}, 2.0 / 5, 3.0 / 8, "corpus rate: edits and reference lengths summed over pairs"},
		{[]string{"abc"}, []string{""}, 1, 1, "empty hypothesis: every reference word deleted"},
		{[]string{"né"}, []string{"ne"}, 1, 0.5, "characters are code points, not bytes"},
	} {
		got, err := ErrorRates(tc.refs, tc.hyps)
		if err != nil || !near(got.WER, tc.wer) || !near(got.CER, tc.cer) {
			t.Errorf("%s: %+v, %v; want WER %v, CER %v", tc.reason, got, err, tc.wer, tc.cer)
		}
	}
	if _, err := ErrorRates([]string{" "}, []string{"x"}); err == nil || !strings.Contains(err.Error(), "undefined") {
		t.Errorf("an empty reference: %v", err)
	}
}
