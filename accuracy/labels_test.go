package accuracy

import (
	"encoding/json"
	"testing"

	"aimeter/loadgen"
)

func TestCheckLabels(t *testing.T) {
	if err := CheckLabels([]int{0, 255, 7}); err != nil {
		t.Errorf("valid labels: %v", err)
	}
	if err := CheckLabels([]int{0, 256}); err == nil || err.Error() != "entry 1 is 256, want a class of 0 to 255 (one byte a response)" {
		t.Errorf("256: %v", err)
	}
}

// TestScoreLabels: the JSON object aimeter accuracy log --labels prints,
// with and without a target, and a target missed.
func TestScoreLabels(t *testing.T) {
	entries := []loadgen.AccuracyEntry{{SeqID: 0, QSLIndex: 0, Data: []byte{1}}, {SeqID: 1, QSLIndex: 1, Data: []byte{3}}, {SeqID: 2, QSLIndex: 2, Data: []byte{2}}}
	labels := []int{1, 2, 2, 0}
	for _, tc := range []struct {
		target *Target
		want   string
		pass   bool
	}{
		{nil, `{"accuracy":50,"correct":2,"metric":"top-1","missing":1,"scored":3}`, true},
		{&Target{Value: 40, Text: "40%"}, `{"accuracy":50,"correct":2,"metric":"top-1","missing":1,"pass":true,"scored":3,"target":40,"target_text":"40%"}`, true},
		{&Target{Value: 75.5, Text: "99% of FP32 (76.26)"}, `{"accuracy":50,"correct":2,"metric":"top-1","missing":1,"pass":false,"scored":3,"target":75.5,"target_text":"99% of FP32 (76.26)"}`, false},
	} {
		s, err := ScoreLabels(entries, labels, tc.target)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(s)
		if string(b) != tc.want || s.Passed() != tc.pass {
			t.Errorf("got  %s (pass %v)\nwant %s (pass %v)", b, s.Passed(), tc.want, tc.pass)
		}
	}
	if _, err := ScoreLabels(entries, labels[:2], nil); err == nil {
		t.Error("a qsl_idx outside the labels was scored")
	}
}
