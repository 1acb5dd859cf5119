package accuracy

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// tol is the tolerance of the cross-checks on 0–1 scales: the Go and
// Python sums may add in different orders.
const tol = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

func TestTopK(t *testing.T) {
	for _, tc := range []struct {
		scores     [][]float64
		labels     []int
		top1, top5 float64
		reason     string
	}{
		{[][]float64{{0.1, 0.9}, {0.8, 0.2}}, []int{1, 1}, 0.5, 1, "one right, one second of two: top-5 holds every class"},
		{[][]float64{{0.5, 0.5, 0.1}}, []int{1}, 0, 1, "a tie ranks the lower class first: label 1 is second"},
		{[][]float64{{0.5, 0.5, 0.1}}, []int{0}, 1, 1, "a tie ranks the lower class first: label 0 is first"},
		{[][]float64{{6, 5, 4, 3, 2, 1}}, []int{5}, 0, 0, "sixth of six is outside the top five"},
		{[][]float64{{6, 5, 4, 3, 2, 1}}, []int{4}, 0, 1, "fifth of six is inside"},
		{[][]float64{{1, 1, 1, 1, 1, 1}}, []int{5}, 0, 0, "all tied: the last class ranks last"},
	} {
		got, err := TopK(tc.scores, tc.labels, len(tc.scores[0]))
		if err != nil || got.Top1 != tc.top1 || got.Top5 != tc.top5 || got.N != len(tc.labels) {
			t.Errorf("%s: %+v, %v; want top1 %v top5 %v", tc.reason, got, err, tc.top1, tc.top5)
		}
	}
	for _, tc := range []struct {
		scores [][]float64
		labels []int
		want   string
	}{
		{[][]float64{{1, 2}}, []int{1, 0}, "1 rows of scores for 2 labels"},
		{[][]float64{{1, 2}, {1}}, []int{0, 0}, "scores[1] has 1 values"},
		{[][]float64{{1, 2}}, []int{2}, "labels[0] is 2"},
		{[][]float64{{1, math.NaN()}}, []int{0}, "scores[0][1] is NaN"},
		{nil, nil, "no samples"},
	} {
		if _, err := TopK(tc.scores, tc.labels, 2); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v / %v: %v, want an error saying %q", tc.scores, tc.labels, err, tc.want)
		}
	}
}

func TestAUC(t *testing.T) {
	for _, tc := range []struct {
		scores []float64
		labels []int
		want   float64
		ok     bool
		reason string
	}{
		{[]float64{0.1, 0.4, 0.35, 0.8}, []int{0, 0, 1, 1}, 0.75, true, "scikit-learn's documented example"},
		{[]float64{1, 2, 3}, []int{0, 1, 1}, 1, true, "perfect ranking"},
		{[]float64{3, 2, 1}, []int{0, 1, 1}, 0, true, "reversed ranking"},
		{[]float64{1, 1, 1, 1}, []int{0, 1, 0, 1}, 0.5, true, "every score tied: ties count one half"},
		{[]float64{1, 2, 2, 3}, []int{0, 0, 1, 1}, 0.875, true, "one tied pair across classes: 3.5 of 4 pairs"},
		{[]float64{1, 2}, []int{1, 1}, 0, false, "one class only: undefined"},
	} {
		got, ok, err := AUC(tc.scores, tc.labels)
		if err != nil || ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%s: %v, %v, %v; want %v, %v", tc.reason, got, ok, err, tc.want, tc.ok)
		}
	}
	if _, _, err := AUC([]float64{1, 2}, []int{0, 2}); err == nil || !strings.Contains(err.Error(), "labels[1] is 2") {
		t.Errorf("a label of 2: %v", err)
	}
}

func TestMeanIoU(t *testing.T) {
	ignore := 255
	for _, tc := range []struct {
		images   []SegImage
		k        int
		ignore   *int
		miou, pa float64
		reason   string
	}{
		{[]SegImage{{1, 4, []int{0, 0, 1, 1}, []int{0, 1, 1, 1}}}, 2, nil, (0.5 + 2.0/3) / 2, 0.75,
			"class 0: 1 of union 2; class 1: 2 of union 3"},
		{[]SegImage{{1, 4, []int{0, 0, 1, 255}, []int{0, 0, 1, 0}}}, 3, &ignore, 1, 1,
			"the ignored pixel is skipped; class 2 is in neither map and left out"},
		{[]SegImage{{1, 2, []int{0, 0}, []int{0, 0}}, {1, 2, []int{1, 1}, []int{0, 1}}}, 2, nil, (2.0/3 + 0.5) / 2, 0.75,
			"two images pool into one confusion matrix"},
	} {
		got, err := MeanIoU(tc.images, tc.k, tc.ignore)
		if err != nil || !near(got.MIoU, tc.miou) || !near(got.PixelAccuracy, tc.pa) {
			t.Errorf("%s: %+v, %v; want mIoU %v, pixel accuracy %v", tc.reason, got, err, tc.miou, tc.pa)
		}
	}
	if _, err := MeanIoU([]SegImage{{2, 2, []int{0, 0, 0}, []int{0, 0, 0}}}, 2, nil); err == nil || !strings.Contains(err.Error(), "images[0]: 2×2") {
		t.Errorf("a short image: %v", err)
	}
	if _, err := MeanIoU([]SegImage{{1, 2, []int{0, 0}, []int{0, 7}}}, 2, nil); err == nil || !strings.Contains(err.Error(), "images[0].pred[1] is 7") {
		t.Errorf("a class out of range: %v", err)
	}
}

func TestDice(t *testing.T) {
	vols := []Volume{
		{[]int{2, 2}, []int{1, 1, 0, 0}, []int{1, 0, 0, 0}}, // 2·1/3
		{[]int{1, 3}, []int{0, 0, 0}, []int{0, 0, 0}},       // both empty: 1
		{[]int{1, 2}, []int{1, 0}, []int{0, 1}},             // no overlap: 0
	}
	got, err := Dice(vols, nil)
	if err != nil || !near(got.MeanDice, (2.0/3+1+0)/3) || !near(got.GlobalDice, 2.0/5) {
		t.Errorf("Dice = %+v, %v; want mean (2/3+1+0)/3 and global 2·1/5", got, err)
	}
	sm, _ := Dice(vols, &KiTS19Smooth)
	if !near(sm.PerVolume[1], 1) || !near(sm.PerVolume[2], 1e-6/(2+1e-6)) || !near(sm.PerVolume[0], (2+1e-6)/(3+1e-6)) {
		t.Errorf("smoothed Dice = %v", sm.PerVolume)
	}
	if _, err := Dice([]Volume{{[]int{2, 2}, []int{1, 1, 0}, []int{1, 0, 0, 0}}}, nil); err == nil || !strings.Contains(err.Error(), "volumes[0]: shape [2 2] has 4 voxels") {
		t.Errorf("a short mask: %v", err)
	}
	if _, err := Dice([]Volume{{[]int{1, 1}, []int{2}, []int{1}}}, nil); err == nil || !strings.Contains(err.Error(), "volumes[0].pred[0] is 2") {
		t.Errorf("a mask value of 2: %v", err)
	}
}

// TestClassifyMatchReferences cross-checks TopK with numpy's stable
// argsort, AUC with scikit-learn's roc_auc_score, MeanIoU and Dice with
// numpy, on random inputs with many ties (tolerance 1e-9).
func TestClassifyMatchReferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	type sample struct {
		Scores [][]float64 `json:"scores"`
		Labels []int       `json:"labels"`
		AUCS   []float64   `json:"auc_scores"`
		AUCL   []int       `json:"auc_labels"`
		Images []SegImage  `json:"images"`
		K      int         `json:"k"`
		Vols   []Volume    `json:"volumes"`
	}
	var cases []sample
	for c := range 6 {
		var s sample
		classes := 3 + c*2
		for range 200 {
			row := make([]float64, classes)
			for j := range row {
				row[j] = float64(rng.IntN(4)) / 4 // quantised: many ties
			}
			s.Scores = append(s.Scores, row)
			s.Labels = append(s.Labels, rng.IntN(classes))
			s.AUCS = append(s.AUCS, float64(rng.IntN(10))/10)
			s.AUCL = append(s.AUCL, rng.IntN(2))
		}
		s.K = 2 + c
		for range 3 {
			h, w := 1+rng.IntN(6), 1+rng.IntN(6)
			im := SegImage{Height: h, Width: w}
			for range h * w {
				g := rng.IntN(s.K)
				p := g
				if rng.IntN(3) == 0 {
					p = rng.IntN(s.K)
				}
				im.GT, im.Pred = append(im.GT, g), append(im.Pred, p)
			}
			s.Images = append(s.Images, im)
			v := Volume{Shape: []int{2, 3, 1 + rng.IntN(3)}}
			n := 6 * v.Shape[2]
			for range n {
				v.Pred, v.Target = append(v.Pred, rng.IntN(2)), append(v.Target, rng.IntN(2))
			}
			s.Vols = append(s.Vols, v)
		}
		cases = append(cases, s)
	}
	const program = `
import json, sys
import numpy as np
from sklearn.metrics import roc_auc_score
out = []
for c in json.load(sys.stdin):
    s = np.array(c["scores"]); y = np.array(c["labels"])
    order = np.argsort(-s, axis=1, kind="stable")
    top1 = float(np.mean(order[:, 0] == y)); top5 = float(np.mean([y[i] in order[i, :5] for i in range(len(y))]))
    auc = float(roc_auc_score(c["auc_labels"], c["auc_scores"]))
    k = c["k"]; conf = np.zeros((k, k), dtype=np.int64)
    for im in c["images"]:
        np.add.at(conf, (np.array(im["gt"]), np.array(im["pred"])), 1)
    tp = np.diag(conf); union = conf.sum(0) + conf.sum(1) - tp
    iou = tp[union > 0] / union[union > 0]
    miou = float(iou.mean()); pa = float(tp.sum() / conf.sum())
    dices = []; inter = 0; tot = 0
    for v in c["volumes"]:
        p = np.array(v["pred"]).reshape(v["shape"]); t = np.array(v["target"]).reshape(v["shape"])
        i = int((p & t).sum()); s2 = int(p.sum() + t.sum())
        dices.append(1.0 if s2 == 0 else 2 * i / s2); inter += i; tot += s2
    out.append({"top1": top1, "top5": top5, "auc": auc, "miou": miou, "pa": pa,
                "mean_dice": float(np.mean(dices)), "global_dice": 1.0 if tot == 0 else 2 * inter / tot})
print(json.dumps(out))
`
	var want []struct {
		Top1, Top5, AUC, MIoU, PA float64
		MeanDice                  float64 `json:"mean_dice"`
		GlobalDice                float64 `json:"global_dice"`
	}
	pyRef(t, program, cases, &want)
	for i, c := range cases {
		tk, err := TopK(c.Scores, c.Labels, len(c.Scores[0]))
		if err != nil || !near(tk.Top1, want[i].Top1) || !near(tk.Top5, want[i].Top5) {
			t.Errorf("case %d: TopK %+v, %v; numpy %v, %v", i, tk, err, want[i].Top1, want[i].Top5)
		}
		auc, ok, err := AUC(c.AUCS, c.AUCL)
		if err != nil || !ok || !near(auc, want[i].AUC) {
			t.Errorf("case %d: AUC %v, %v, %v; scikit-learn %v", i, auc, ok, err, want[i].AUC)
		}
		seg, err := MeanIoU(c.Images, c.K, nil)
		if err != nil || !near(seg.MIoU, want[i].MIoU) || !near(seg.PixelAccuracy, want[i].PA) {
			t.Errorf("case %d: MeanIoU %v %v, %v; numpy %v %v", i, seg.MIoU, seg.PixelAccuracy, err, want[i].MIoU, want[i].PA)
		}
		d, err := Dice(c.Vols, nil)
		if err != nil || !near(d.MeanDice, want[i].MeanDice) || !near(d.GlobalDice, want[i].GlobalDice) {
			t.Errorf("case %d: Dice %+v, %v; numpy %v %v", i, d, err, want[i].MeanDice, want[i].GlobalDice)
		}
	}
}

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
