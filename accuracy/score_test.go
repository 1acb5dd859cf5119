package accuracy

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestScoreJSON runs every metric of the table through ScoreJSON, as
// `aimeter accuracy score` does: the output's field names and values, and
// an error for a bad input.
func TestScoreJSON(t *testing.T) {
	for _, tc := range []struct {
		metric, input, want, bad, badErr string
	}{
		{"topk", `{"num_classes":2,"scores":[[0.1,0.9],[0.8,0.2]],"labels":[1,1]}`, `{"top1":0.5,"top5":1,"n":2}`,
			`{"num_classes":2,"scores":[[0.1,0.9]],"labels":[1,1]}`, "1 rows of scores for 2 labels"},
		{"auc", `{"scores":[0.1,0.4,0.35,0.8],"labels":[0,0,1,1]}`, `{"auc":0.75,"defined":true}`,
			`{"scores":[0.1],"labels":[0,1]}`, "1 scores for 2 labels"},
		{"auc", `{"scores":[0.1,0.4],"labels":[1,1]}`, `{"auc":null,"defined":false}`, "", ""},
		{"miou", `{"num_classes":2,"ignore_index":null,"images":[{"height":1,"width":4,"gt":[0,0,1,1],"pred":[0,0,1,1]}]}`, `{"miou":1,"pixel_accuracy":1,"iou":[1,1]}`,
			`{"num_classes":2,"images":[{"height":1,"width":4,"gt":[0,0,1],"pred":[0,0,1,1]}]}`, "images[0]: 1×4"},
		{"dice", `{"volumes":[{"shape":[1,2],"pred":[1,0],"target":[1,0]}]}`, `{"mean_dice":1,"global_dice":1,"per_volume":[1]}`,
			`{"volumes":[]}`, "no volumes"},
		{"squad", `{"questions":[{"id":"q1","answers":[{"text":"The Cat"}]},{"id":"q2","answers":["x"]}],"predictions":{"q1":"cat!"}}`,
			`{"exact_match":50,"f1":50,"questions":2,"unanswered":1}`,
			`{"questions":[{"id":"q1","answers":[]}],"predictions":{}}`, "has no answers"},
		{"wer", `{"references":["a b c"],"hypotheses":["a x c"]}`, `{"wer":0.3333333333333333,"cer":0.2,"words":3,"chars":5}`,
			`{"references":["a"],"hypotheses":[]}`, "1 references for 0 hypotheses"},
	} {
		out, err := ScoreJSON(tc.metric, []byte(tc.input))
		if err != nil {
			t.Errorf("%s: %v", tc.metric, err)
			continue
		}
		got, _ := json.Marshal(out)
		if string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.metric, got, tc.want)
		}
		if tc.bad != "" {
			if _, err := ScoreJSON(tc.metric, []byte(tc.bad)); err == nil || !strings.Contains(err.Error(), tc.badErr) {
				t.Errorf("%s of %s: %v, want an error saying %q", tc.metric, tc.bad, err, tc.badErr)
			}
		}
	}
	if _, err := ScoreJSON("nope", nil); err == nil || !strings.Contains(err.Error(), "known: ") {
		t.Errorf("an unknown metric: %v", err)
	}
}
