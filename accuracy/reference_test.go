package accuracy

import (
	"math/rand/v2"
	"strings"
	"testing"
)

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

// TestTextMatchReferences cross-checks ErrorRates with the Levenshtein
// package (distance of word lists and of strings) and SQuAD with the
// official evaluate-v1.1.py functions, restated in Python (tolerance
// 1e-9).
func TestTextMatchReferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vocab := []string{"the", "a", "An", "cat", "Cat,", "sat", "on", "mat.", "théâtre", "don't", "x-ray", "(42)", "über", "THE", "and", "_id"}
	sentence := func() string {
		n := rng.IntN(8)
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	type pair struct{ Ref, Hyp string }
	var pairs []pair
	for range 300 {
		pairs = append(pairs, pair{sentence() + " end", sentence()})
	}
	const program = `
import json, sys, re, string, collections
import Levenshtein
def normalize_answer(s):
    s = s.lower()
    s = ''.join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r'\b(a|an|the)\b', ' ', s)
    return ' '.join(s.split())
def f1(p, g):
    pt, gt = normalize_answer(p).split(), normalize_answer(g).split()
    same = sum((collections.Counter(pt) & collections.Counter(gt)).values())
    if same == 0: return 0.0
    pr, rc = same / len(pt), same / len(gt)
    return 2 * pr * rc / (pr + rc)
pairs = json.load(sys.stdin)
we = sum(Levenshtein.distance(p["Ref"].split(), p["Hyp"].split()) for p in pairs)
ce = sum(Levenshtein.distance(p["Ref"], p["Hyp"]) for p in pairs)
w = sum(len(p["Ref"].split()) for p in pairs); c = sum(len(p["Ref"]) for p in pairs)
em = 100 * sum(normalize_answer(p["Hyp"]) == normalize_answer(p["Ref"]) for p in pairs) / len(pairs)
f = 100 * sum(f1(p["Hyp"], p["Ref"]) for p in pairs) / len(pairs)
print(json.dumps({"wer": we / w, "cer": ce / c, "em": em, "f1": f}))
`
	var want struct{ WER, CER, EM, F1 float64 }
	pyRef(t, program, pairs, &want)
	refs, hyps := make([]string, len(pairs)), make([]string, len(pairs))
	qs := make([]SQuADQuestion, len(pairs))
	preds := map[string]string{}
	for i, p := range pairs {
		refs[i], hyps[i] = p.Ref, p.Hyp
		id := string(rune('A'+i%26)) + strings.Repeat("x", i/26)
		qs[i] = SQuADQuestion{ID: id, Answers: []string{p.Ref}}
		preds[id] = p.Hyp
	}
	er, err := ErrorRates(refs, hyps)
	if err != nil || !near(er.WER, want.WER) || !near(er.CER, want.CER) {
		t.Errorf("ErrorRates %+v, %v; Levenshtein %v, %v", er, err, want.WER, want.CER)
	}
	sq, err := SQuAD(qs, preds)
	if err != nil || !near(sq.ExactMatch/100, want.EM/100) || !near(sq.F1/100, want.F1/100) {
		t.Errorf("SQuAD %+v, %v; official script %v, %v", sq, err, want.EM, want.F1)
	}
}
