package train

import (
	"slices"
	"strconv"
	"strings"

	"aimeter/gbt"
	"aimeter/gbt/testinfo"
)

// CatalogueEntry is one training scenario row of Tables 1–4 of GB/T 45087
// (GB-6.4.1.1, GB-6.4.1.2, GB-6.4.2.1, GB-6.4.2.2). Cells are as the
// standard prints them, with the implementer's notes' readings applied
// and recorded in Note.
type CatalogueEntry struct {
	// ID is "T<table>-<row>", e.g. "T1-1"; it is the closed-mode model
	// number of field 8 (IN-07).
	ID string `json:"id"`
	// ReqID is the requirement ID of the row, e.g. "GB-6.4.1-T1-1".
	ReqID string `json:"req_id"`
	// Table (1–4) and Row are the row's place in the standard.
	Table int `json:"table"`
	Row   int `json:"row"`
	// Mode is closed (Tables 1, 3) or open (2, 4); Class general (1, 2)
	// or special (3, 4).
	Mode  testinfo.TestMode      `json:"test_mode"`
	Class testinfo.ScenarioClass `json:"scenario_class"`
	// Type is the scenario type ("Image recognition", …; Annex D).
	Type string `json:"type"`
	// Model is the reference model; "" in open mode, where the tested
	// party chooses.
	Model string `json:"model,omitempty"`
	// Dataset is the data set as printed.
	Dataset string `json:"dataset"`
	// Threshold is the quality target; nil for the rows that end at a
	// step limit (Table 1 rows 9–12, IN-23) and for the rows that give
	// none, where the tester sets it (ThresholdTesterDefined).
	Threshold              *gbt.Threshold `json:"threshold,omitempty"`
	ThresholdTesterDefined bool           `json:"threshold_tester_defined,omitempty"`
	// StepLimit is the test termination condition in optimizer steps
	// (GB-6.4.1-T1-FNd, IN-20); 0 when the row has a threshold instead.
	StepLimit int `json:"step_limit,omitempty"`
	// Optimizer and Loss are the optimisation method and loss function;
	// "" where the table leaves them to the tested party (IN-26).
	Optimizer string `json:"optimizer,omitempty"`
	Loss      string `json:"loss,omitempty"`
	// Trials is the number of trials (5 or 3); 0 in the open-mode tables,
	// which do not fix it (see TrialCount).
	Trials int `json:"trials,omitempty"`
	// Precisions are the allowed result-model precisions (GB-6.3-a-2).
	Precisions []testinfo.Precision `json:"precisions"`
	// TextGeneration marks the rows whose throughput is in tokens/s
	// (IN-23).
	TextGeneration bool `json:"text_generation,omitempty"`
	// Note records a reading of an implementer's note.
	Note string `json:"note,omitempty"`
}

// TrialCount is the number of trials to run: Trials, or 5 where the table
// does not fix it (the open-mode tables; 5 is what the closed rows with a
// quality threshold ask).
func (s CatalogueEntry) TrialCount() int {
	if s.Trials > 0 {
		return s.Trials
	}
	return 5
}

// Target returns the scenario's quality target for Config.Target; nil
// without a threshold.
func (s CatalogueEntry) Target() *Target {
	if s.Threshold == nil {
		return nil
	}
	return &Target{Metric: s.Threshold.Metric, Value: s.Threshold.Fraction, LowerIsBetter: s.Threshold.Comparator == gbt.Less}
}

// TrialDone reports whether a trial of the scenario may stop: its quality
// target is reached (accuracy, on the 0–1 scale, strictly beyond the
// threshold, IN-14) or, for a step-limited row, steps has reached the
// step limit (IN-23). accuracy nil is "not measured yet". A row whose
// threshold the tester sets never reports done: use a Target instead.
func (s CatalogueEntry) TrialDone(accuracy *float64, steps int) bool {
	if s.StepLimit > 0 {
		return steps >= s.StepLimit
	}
	t := s.Target()
	return t != nil && accuracy != nil && t.Reached(*accuracy)
}

// pct builds a percentage threshold, the fraction rounded to 12
// significant digits so that 74 % is exactly 0.74 (IN-24).
func pct(metric string, c gbt.Comparator, v float64, literal string) *gbt.Threshold {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v/100, 'g', 12, 64), 64)
	return &gbt.Threshold{Metric: metric, Comparator: c, Value: v, Unit: "%", Fraction: f, Literal: literal}
}

// frac builds a threshold given as a fraction.
func frac(metric string, c gbt.Comparator, v float64, literal string) *gbt.Threshold {
	return &gbt.Threshold{Metric: metric, Comparator: c, Value: v, Fraction: v, Literal: literal}
}

var (
	all3  = []testinfo.Precision{testinfo.FP16, testinfo.FP32, testinfo.BF16}
	noBF  = []testinfo.Precision{testinfo.FP16, testinfo.FP32}
	reqOf = map[int]string{1: "GB-6.4.1-T1-", 2: "GB-6.4.1-T2-", 3: "GB-6.4.2-T3-", 4: "GB-6.4.2-T4-"}
)

func scenario(table, row int, s CatalogueEntry) CatalogueEntry {
	s.Table, s.Row = table, row
	s.ID = "T" + strconv.Itoa(table) + "-" + strconv.Itoa(row)
	s.ReqID = reqOf[table] + strconv.Itoa(row)
	s.Mode, s.Class = testinfo.TestClosed, testinfo.ScenarioGeneral
	if table == 2 || table == 4 {
		s.Mode = testinfo.TestOpen
	}
	if table >= 3 {
		s.Class = testinfo.ScenarioSpecial
	}
	if s.Precisions == nil {
		s.Precisions = all3
	}
	return s
}

var scenarios = []CatalogueEntry{
	// Table 1: general, closed (GB-6.4.1.1).
	scenario(1, 1, CatalogueEntry{Type: "Image recognition", Model: "Resnet50_v1.5", Dataset: "Imagenet2012", Threshold: pct("Top1 accuracy", gbt.Greater, 74, "Top1 accuracy > 74%"), Optimizer: "SGD+Momentum", Trials: 5, Loss: "Softmax+Cross-Entropy Loss"}),
	scenario(1, 2, CatalogueEntry{Type: "Image recognition", Model: "Inception v3", Dataset: "Imagenet2012", Threshold: pct("Top1 accuracy", gbt.Greater, 78.06, "Top1 accuracy > 78.06%"), Optimizer: "Adam", Trials: 5, Loss: "Cross-Entropy Loss"}),
	scenario(1, 3, CatalogueEntry{Type: "Semantic segmentation", Model: "Deeplab_v3", Dataset: "Cityscapes", Threshold: pct("mIOU", gbt.Greater, 77.98, "mIOU > 77.98%"), Optimizer: "Adagrad", Trials: 5, Loss: "Pixel-wise softmax+Cross-Entropy Loss"}),
	scenario(1, 4, CatalogueEntry{Type: "Speech recognition", Model: "Wav2vec2_0", Dataset: "Aishell-1", Threshold: pct("WER", gbt.Less, 5.5, "WER < 5.5%"), Optimizer: "Adam", Trials: 5, Loss: "CTC Loss"}),
	scenario(1, 5, CatalogueEntry{Type: "Recommendation", Model: "Wide&-deep", Dataset: "Criteo (Kaggle Display Advertising Challenge Dataset)", Threshold: pct("AUC", gbt.Greater, 72, "AUC > 72%"), Optimizer: "Wide: FTRL; Deep: Adagrad", Trials: 5, Loss: "Logistic loss Label smoothed cross entropy loss", Note: "IN-22: Wide & Deep; logistic loss is the required loss"}),
	scenario(1, 6, CatalogueEntry{Type: "Recommendation", Model: "DLRM", Dataset: "Criteo (1TB Click Logs)", Threshold: frac("AUC", gbt.Greater, 0.8025, "AUC > 0.8025"), Optimizer: "SGD", Trials: 5, Loss: "BCELoss"}),
	scenario(1, 7, CatalogueEntry{Type: "Object detection", Model: "Yolo5s-6-0", Dataset: "Coco2017", Threshold: pct("mAP@0.5", gbt.Greater, 64.2, "mAP@0.5:64.2%"), Optimizer: "SGD", Trials: 5, Loss: "CIoU + BCEWithLogitsLoss", Note: "IN-21: no comparator printed; read as mAP@0.5 > 64.2%"}),
	scenario(1, 8, CatalogueEntry{Type: "Natural language processing", Model: "Bert-large", Dataset: "En-wiki", Threshold: frac("Mask_lm accuracy", gbt.Greater, 0.7, "Mask_lm accuracy > 0.7"), Optimizer: "Lamb", Trials: 5, Loss: "Softmax+Negative maximum likelihood loss", Note: "GB-6.4.1-T1-FNc: sequence length 512"}),
	scenario(1, 9, CatalogueEntry{Type: "Natural language processing", Model: "GLM v2 6B", Dataset: "Fine-tuning task: ADGEN; pre-training task: En-wiki", StepLimit: 2000, Optimizer: "Adam", Trials: 3, Loss: "Cross entropy", TextGeneration: true, Note: "IN-23: ends after the step limit; declare fine-tuning or pre-training"}),
	scenario(1, 10, CatalogueEntry{Type: "Natural language processing", Model: "LLaMa2-13B", Dataset: "Fine-tuning task: Moss; pre-training task: En-wiki", StepLimit: 2000, Optimizer: "Adam", Trials: 3, Loss: "Cross entropy", TextGeneration: true, Note: "IN-23: ends after the step limit; declare fine-tuning or pre-training"}),
	scenario(1, 11, CatalogueEntry{Type: "Natural language processing", Model: "LLaMa2-70B", Dataset: "Fine-tuning task: Moss; pre-training task: En-wiki", StepLimit: 200, Optimizer: "Adam", Trials: 3, Loss: "Cross entropy", TextGeneration: true, Note: "IN-23: ends after the step limit; declare fine-tuning or pre-training"}),
	scenario(1, 12, CatalogueEntry{Type: "Multimodal", Model: "Stable Diffusion v2.1", Dataset: "Fine-tuning task: Pokemon; pre-training task: LAION-5B", StepLimit: 2000, Optimizer: "AdamW", Trials: 3, Loss: "MSE", Note: "IN-23: ends after the step limit; declare fine-tuning or pre-training"}),
	// Table 2: general, open (GB-6.4.1.2); thresholds adjustable by the
	// tester (GB-6.4.1-T2-FNa).
	scenario(2, 1, CatalogueEntry{Type: "Image recognition", Dataset: "Imagenet2012", Threshold: pct("Top1 accuracy", gbt.Greater, 75, "Top1 accuracy > 75%"), Precisions: noBF}),
	scenario(2, 2, CatalogueEntry{Type: "Object detection", Dataset: "Coco2017", Threshold: pct("mAP", gbt.Greater, 35, "mAP > 35%")}),
	scenario(2, 3, CatalogueEntry{Type: "Semantic segmentation", Dataset: "Coco2017", Threshold: pct("mIOU", gbt.Greater, 85, "mIOU > 85%"), Note: "IN-25: Coco2017 here, Cityscapes in T1-3"}),
	scenario(2, 4, CatalogueEntry{Type: "Recommendation", Dataset: "Criteo (Kaggle Display Advertising Challenge Dataset)", Threshold: pct("AUC", gbt.Greater, 72, "AUC > 72%")}),
	scenario(2, 5, CatalogueEntry{Type: "Recommendation", Dataset: "Criteo (1TB Click Logs)", Threshold: frac("AUC", gbt.Greater, 0.8025, "AUC > 0.8025")}),
	scenario(2, 6, CatalogueEntry{Type: "Natural language processing", Dataset: "WMT18 English→German, English→Chinese", Threshold: pct("BLEU", gbt.Greater, 24, "BLEU > 24%")}),
	scenario(2, 7, CatalogueEntry{Type: "Natural language processing", Dataset: "Cn-wiki", Threshold: frac("Mask_lm accuracy", gbt.Greater, 0.7, "Mask_lm accuracy > 0.7")}),
	scenario(2, 8, CatalogueEntry{Type: "Speech recognition", Dataset: "Aishell-1", Threshold: pct("WER", gbt.Less, 5.5, "WER < 5.5%")}),
	// Table 3: special, closed (GB-6.4.2.1).
	scenario(3, 1, CatalogueEntry{Type: "OCR (without pre-segmentation)", Model: "DBNET", Dataset: "Icdar2015", Threshold: frac("Precision", gbt.Greater, 0.896, "Precision > 0.896"), Trials: 5, Loss: "BalanceCrossEntropyLoss+MaskL1Loss+DiceLoss", Note: "IN-26: the printed optimisation method is the loss; the optimizer is declared by the tested party"}),
	scenario(3, 2, CatalogueEntry{Type: "Face recognition", Model: "FaceNet", Dataset: "LFW", ThresholdTesterDefined: true, Optimizer: "Lars/SGD+Momentum", Trials: 5, Note: "IN-26: no threshold given; the tester sets one"}),
	scenario(3, 3, CatalogueEntry{Type: "Speech recognition", Model: "Conformer (ESPnet2)", Dataset: "Aishell-1", Threshold: pct("Overall accuracy", gbt.Greater, 95.02, "Precision overall:95.02%"), Optimizer: "SGD+Momentum", Trials: 5, Loss: "CTCloss+attentionloss(LabelSmoothingLoss)", Note: "IN-26: read as overall character accuracy > 95.02%"}),
	// Table 4: special, open (GB-6.4.2.2); no thresholds.
	scenario(4, 1, CatalogueEntry{Type: "OCR (without pre-segmentation)", Dataset: "Icdar2015", ThresholdTesterDefined: true}),
	scenario(4, 2, CatalogueEntry{Type: "Face recognition", Dataset: "LFW", ThresholdTesterDefined: true}),
}

// Scenarios returns the rows of Tables 1–4 in table and row order.
func Scenarios() []CatalogueEntry {
	out := make([]CatalogueEntry, len(scenarios))
	for i, s := range scenarios {
		out[i] = s.clone()
	}
	return out
}

// LookupScenario returns the row with catalogue ID id ("T1-1", any case,
// or the requirement ID "GB-6.4.1-T1-1"); ok is false for an unknown ID.
func LookupScenario(id string) (CatalogueEntry, bool) {
	id = strings.TrimSpace(id)
	for _, s := range scenarios {
		if strings.EqualFold(s.ID, id) || s.ReqID == id {
			return s.clone(), true
		}
	}
	return CatalogueEntry{}, false
}

func (s CatalogueEntry) clone() CatalogueEntry {
	s.Precisions = slices.Clone(s.Precisions)
	if s.Threshold != nil {
		t := *s.Threshold
		s.Threshold = &t
	}
	return s
}
