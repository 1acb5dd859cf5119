package accuracy

import (
	"fmt"

	"aimeter/loadgen"
)

// CheckLabels checks ground-truth labels for a log of one class byte a
// response: each must be a class of 0 to 255.
func CheckLabels(labels []int) error {
	for i, l := range labels {
		if l < 0 || l > 255 {
			return fmt.Errorf("entry %d is %d, want a class of 0 to 255 (one byte a response)", i, l)
		}
	}
	return nil
}

// LabelScore is the top-1 score of an accuracy log against labels, with
// its judgement against a target when one is given; its JSON form is what
// aimeter accuracy log --labels prints.
type LabelScore struct {
	// Accuracy is the score in percent.
	Accuracy float64 `json:"accuracy"`
	Correct  int     `json:"correct"`
	Metric   string  `json:"metric"`
	Missing  int     `json:"missing"`
	// Pass is whether Accuracy reaches Target; nil without a target.
	Pass   *bool `json:"pass,omitempty"`
	Scored int   `json:"scored"`
	// Target and TargetText are the target's value (percent) and its
	// text as given; nil without a target.
	Target     *float64 `json:"target,omitempty"`
	TargetText *string  `json:"target_text,omitempty"`
}

// Passed is *Pass, true without a target.
func (s *LabelScore) Passed() bool { return s.Pass == nil || *s.Pass }

// ScoreLabels scores entries top-1 (Top1) against labels (CheckLabels'
// classes, indexed by qsl_idx) and, when target is not nil, judges the
// score against it.
func ScoreLabels(entries []loadgen.AccuracyEntry, labels []int, target *Target) (*LabelScore, error) {
	s, err := Top1(entries, len(labels), func(i uint64) uint8 { return uint8(labels[i]) })
	if err != nil {
		return nil, err
	}
	out := &LabelScore{Metric: "top-1", Accuracy: 100 * s.Value, Correct: s.Correct, Scored: s.Scored, Missing: s.Missing}
	if target != nil {
		pass := out.Accuracy >= target.Value
		out.Pass, out.Target, out.TargetText = &pass, &target.Value, &target.Text
	}
	return out, nil
}
