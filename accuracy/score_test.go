package accuracy

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// tol is the tolerance of the checks of floats on 0–1 scales (of 0–100
// scores divided by 100): the Go and Python sums may add in different
// orders. Counts are compared exactly.
const tol = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

// TestScoreJSON runs every metric of the table through ScoreJSON, as
// `aimeter accuracy score` does: the output's field names and values, and
// an error for a bad input, which names the field and the entry.
func TestScoreJSON(t *testing.T) {
	for _, tc := range []struct {
		metric, input, want, bad, badErr string
	}{
		{"topk", `{"num_classes":2,"scores":[[0.1,0.9],[0.8,0.2]],"labels":[1,1],"extra":"ignored"}`, `{"top1":0.5,"top5":1,"n":2}`,
			`{"num_classes":2,"scores":[[0.1,0.9]],"labels":[1,1]}`, "1 rows of scores for 2 labels"},
		{"topk", `{"num_classes":3,"scores":[[1,1,0]],"labels":[1]}`, `{"top1":0,"top5":1,"n":1}`,
			`{"num_classes":3,"scores":[[1,1,0]],"labels":[3]}`, "labels[0] is 3, outside [0, 3)"},
		{"auc", `{"scores":[0.1,0.4,0.35,0.8],"labels":[0,0,1,1]}`, `{"auc":0.75,"defined":true}`,
			`{"scores":[0.1],"labels":[0,1]}`, "1 scores for 2 labels"},
		{"auc", `{"scores":[0.1,0.4],"labels":[1,1]}`, `{"auc":null,"defined":false}`,
			`{"scores":[0.1,0.4],"labels":[1,3]}`, "labels[1] is 3"},
		{"miou", `{"num_classes":2,"ignore_index":null,"images":[{"height":1,"width":4,"gt":[0,0,1,1],"pred":[0,0,1,1]}]}`, `{"miou":1,"pixel_accuracy":1,"iou":[1,1]}`,
			`{"num_classes":2,"images":[{"height":1,"width":4,"gt":[0,0,1],"pred":[0,0,1,1]}]}`, "images[0].gt has 3 values, want height×width = 1×4 = 4"},
		{"miou", `{"num_classes":3,"ignore_index":255,"images":[{"height":1,"width":3,"gt":[0,255,1],"pred":[0,1,1]}]}`, `{"miou":1,"pixel_accuracy":1,"iou":[1,1,null]}`,
			`{"num_classes":2,"ignore_index":255,"images":[{"height":1,"width":2,"gt":[0,0],"pred":[0,2]}]}`, "images[0].pred[1] (row 0, column 1) is 2"},
		{"dice", `{"volumes":[{"shape":[1,2],"pred":[1,0],"target":[1,0]},{"shape":[1],"pred":[0],"target":[0]}]}`, `{"mean_dice":1,"global_dice":1,"per_volume":[1,1]}`,
			`{"volumes":[]}`, "no volumes"},
		{"dice", `{"smoothed":true,"volumes":[{"shape":[2],"pred":[1,0],"target":[0,1]}]}`, `{"mean_dice":4.99999750000125e-7,"global_dice":4.99999750000125e-7,"per_volume":[4.99999750000125e-7]}`,
			`{"volumes":[{"shape":[2,2],"pred":[1,0],"target":[0,1,0,0]}]}`, "volumes[0].pred has 2 values, want the product of shape [2 2] = 4"},
		{"squad", `{"questions":[{"id":"q1","answers":[{"text":"The Cat"}]},{"id":"q2","answers":["x"]}],"predictions":{"q1":"cat!"}}`,
			`{"exact_match":50,"f1":50,"questions":2,"unanswered":1}`,
			`{"questions":[{"id":"q1","answers":[]}],"predictions":{}}`, `questions[0].answers: none for id "q1"`},
		{"squad", `{"questions":[{"id":"q1","answers":["a b","c"]}],"predictions":{"q1":"b c"}}`,
			`{"exact_match":0,"f1":66.66666666666666,"questions":1,"unanswered":0}`,
			`{"questions":[{"id":"q1","answers":[{"txt":"x"}]}],"predictions":{}}`, "answers[0]: want a string or an object with a text"},
		{"wer", `{"references":["a b c"],"hypotheses":["a x c"]}`, `{"wer":0.3333333333333333,"cer":0.2,"words":3,"chars":5}`,
			`{"references":["a"],"hypotheses":[]}`, "1 references for 0 hypotheses"},
		{"wer", `{"references":["a b",""],"hypotheses":["a b","c"]}`, `{"wer":0.5,"cer":0.3333333333333333,"words":2,"chars":3}`,
			`{"references":[""],"hypotheses":["c"]}`, "no words in any reference"},
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
		if out, err := ScoreJSON(tc.metric, []byte(tc.bad)); err == nil || !strings.Contains(err.Error(), tc.badErr) {
			t.Errorf("%s of %s: %v, %v; want an error saying %q", tc.metric, tc.bad, out, err, tc.badErr)
		}
		if _, err := ScoreJSON(tc.metric, []byte(`{"scores":`)); err == nil || !strings.HasPrefix(err.Error(), "input: ") {
			t.Errorf("%s of truncated JSON: %v", tc.metric, err)
		}
	}
	if _, err := ScoreJSON("nope", nil); err == nil || !strings.Contains(err.Error(), "known: ") {
		t.Errorf("an unknown metric: %v", err)
	}
}
