package gbt

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"aimeter/gbt/testinfo"
)

// TimeoutClass selects the timeout-control threshold column of Table 10:
// 1 for most models, 2 for the models of footnote a (GB-7.4.2-T10-FNa).
type TimeoutClass int

// The two threshold columns of Table 10.
const (
	// Threshold1 is the column used by every model not named in footnote a.
	Threshold1 TimeoutClass = 1
	// Threshold2 is the column of chatGLM V2 6B, Llama2 13B, GLM 130B and
	// Stable Diffusion v2.1 (GB-7.4.2-T10-FNa).
	Threshold2 TimeoutClass = 2
)

// ArrivalModeSpec is one row of Table 10 (GB-7.4.2).
type ArrivalModeSpec struct {
	// Mode is the arrival-mode number, ModeContinuous (0) … ModeMixed (5).
	Mode ArrivalMode
	// ReqID is the requirement ID of the row, e.g. "GB-7.4.2-T10-mode2".
	ReqID string
	// Name is the short name used in aimeter, e.g. "poisson".
	Name string
	// Title is the English rendering of the standard's name, e.g.
	// "Poisson-distributed arrival".
	Title string
	// Chinese is the standard's own name, e.g. "泊松分布到达".
	Chinese string
	// Cacheable is the "jobs cacheable" column: the SUT may queue jobs that
	// have arrived but not been processed; it may not memoise (IN-40).
	Cacheable bool
	// Runs is the "runs" column: one run per formal test (IN-46).
	Runs int
	// Timeout1 and Timeout2 are the timeout-control thresholds of columns 1
	// and 2; both zero where the standard says N/A (offline) or defers to the
	// underlying mode (mixed).
	Timeout1, Timeout2 time.Duration
}

var arrivalModes = [...]ArrivalModeSpec{
	{ModeContinuous, "GB-7.4.2-T10-mode0", "continuous", "Continuous (single) arrival", "连续(单一)到达", false, 1, 2 * time.Second, 10 * time.Second},
	{ModeFixedPeriod, "GB-7.4.2-T10-mode1", "fixed-period", "Fixed-period arrival", "固定周期到达", true, 1, 4 * time.Second, 20 * time.Second},
	{ModePoisson, "GB-7.4.2-T10-mode2", "poisson", "Poisson-distributed arrival", "泊松分布到达", true, 1, 4 * time.Second, 20 * time.Second},
	{ModePeak, "GB-7.4.2-T10-mode3", "peak", "Peak arrival", "高峰到达", true, 1, 60 * time.Second, 240 * time.Second},
	{ModeOffline, "GB-7.4.2-T10-mode4", "offline", "Offline", "离线", true, 1, 0, 0},
	{ModeMixed, "GB-7.4.2-T10-mode5", "mixed", "Mixed-job arrival", "混合作业到达", true, 1, 0, 0},
}

// ArrivalModes returns the six rows of Table 10 in mode-number order.
func ArrivalModes() []ArrivalModeSpec {
	out := make([]ArrivalModeSpec, len(arrivalModes))
	copy(out, arrivalModes[:])
	return out
}

// ArrivalModeOf returns the Table 10 row of a mode number; ok is false
// outside 0–5 (GB-7.4.2).
func ArrivalModeOf(mode ArrivalMode) (spec ArrivalModeSpec, ok bool) {
	if mode < ModeContinuous || mode > ModeMixed {
		return ArrivalModeSpec{}, false
	}
	return arrivalModes[mode], true
}

// ModeName returns the short name of an arrival mode ("continuous",
// "fixed-period", "poisson", "peak", "offline", "mixed"), or "mode(N)" for a
// number outside Table 10.
func ModeName(mode ArrivalMode) string {
	if s, ok := ArrivalModeOf(mode); ok {
		return s.Name
	}
	return fmt.Sprintf("mode(%d)", mode)
}

// ParseArrivalMode accepts a mode number ("0"–"5") or a name, in any case,
// with or without dashes, underscores or spaces ("fixed-period",
// "FixedPeriod", "poisson", "single", "continuous", …).
func ParseArrivalMode(s string) (ArrivalMode, error) {
	norm := strings.NewReplacer(" ", "", "-", "", "_", "").Replace(strings.ToLower(strings.TrimSpace(s)))
	switch norm {
	case "0", "continuous", "continuoussingle", "single":
		return ModeContinuous, nil
	case "1", "fixedperiod", "fixed", "periodic":
		return ModeFixedPeriod, nil
	case "2", "poisson":
		return ModePoisson, nil
	case "3", "peak":
		return ModePeak, nil
	case "4", "offline":
		return ModeOffline, nil
	case "5", "mixed":
		return ModeMixed, nil
	}
	return 0, fmt.Errorf("unknown arrival mode %q (want 0–5 or continuous, fixed-period, poisson, peak, offline, mixed; GB-7.4.2)", s)
}

// Timeout returns the timeout-control threshold t*_OUT of Table 10 for an
// arrival mode and threshold column (IN-63: a sample is lost when its result
// has not arrived t*_OUT after it was sent). ok is false where the standard
// gives no threshold: offline mode (N/A, IN-51), mixed mode (whose threshold
// is that of the underlying mode: use MixedTimeout), a mode outside 0–5 or
// a column other than 1 and 2.
func Timeout(mode ArrivalMode, class TimeoutClass) (d time.Duration, ok bool) {
	spec, ok := ArrivalModeOf(mode)
	if !ok || mode == ModeOffline || mode == ModeMixed {
		return 0, false
	}
	switch class {
	case Threshold1:
		return spec.Timeout1, true
	case Threshold2:
		return spec.Timeout2, true
	}
	return 0, false
}

// MixedTimeout returns the threshold of a mixed-mode (5) run whose jobs
// arrive by the underlying mode: "the timeout threshold of the corresponding
// mode" (GB-7.4.2-T10-mode5). ok is false when underlying is mixed, offline
// or outside 0–5.
func MixedTimeout(underlying ArrivalMode, class TimeoutClass) (time.Duration, bool) {
	return Timeout(underlying, class)
}

// modelAliases maps normalisation keys (see modelKey) of every spelling the
// standard uses to one model ID (IN-52).
var modelAliases = map[string]string{
	"inceptionv3":        "inception-v3",
	"resnet50v15":        "resnet50-v1.5",
	"yolov5s60":          "yolov5s-6.0",
	"yolo5s60":           "yolov5s-6.0",
	"deeplabv3":          "deeplab-v3",
	"widedeep":           "wide-and-deep",
	"wideanddeep":        "wide-and-deep",
	"dlrm":               "dlrm",
	"bertlarge":          "bert-large",
	"chatglmv26b":        "chatglm2-6b",
	"chatglm26b":         "chatglm2-6b",
	"glmv26b":            "chatglm2-6b",
	"llama213b":          "llama2-13b",
	"llama270b":          "llama2-70b",
	"glm130b":            "glm-130b",
	"stablediffusionv21": "stable-diffusion-v2.1",
	"stabdiffusionv21":   "stable-diffusion-v2.1",
	"stablediffusion21":  "stable-diffusion-v2.1",
	"wav2vec20":          "wav2vec2.0",
	"wav2vec2":           "wav2vec2.0",
	"dbnet":              "dbnet",
	"facenet":            "facenet",
	"conformerespnet2":   "conformer-espnet2",
	"conformer":          "conformer-espnet2",
}

// threshold2Models are the model IDs of Table 10 footnote a
// (GB-7.4.2-T10-FNa). LLaMa2-70B appears only in training (IN-52).
var threshold2Models = map[string]bool{
	"chatglm2-6b":           true,
	"llama2-13b":            true,
	"glm-130b":              true,
	"stable-diffusion-v2.1": true,
}

// modelKey lowercases a model name and drops the characters its spellings
// differ in (spaces, '_', '-', '.', '&', parentheses).
func modelKey(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch r {
		case ' ', '\t', '_', '-', '.', '&', '(', ')', '/':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// NormalizeModel maps any spelling of a model named in the standard
// ("Resnet50_v1.5", "chatGLM V2 6B", "GLM v2 6B", "Stabdiffusion V2.1", …) to
// one model ID ("resnet50-v1.5", "chatglm2-6b", "stable-diffusion-v2.1")
// per IN-52. known is false for a model the standard does not name; the ID
// is then the trimmed, lowercased name.
func NormalizeModel(name string) (id string, known bool) {
	if id, ok := modelAliases[modelKey(name)]; ok {
		return id, true
	}
	return strings.ToLower(strings.TrimSpace(name)), false
}

// TimeoutClassFor returns the threshold column for a model: Threshold2 for
// the models of Table 10 footnote a, compared by normalised model ID
// (GB-7.4.2-T10-FNa, IN-52), Threshold1 for every other model.
func TimeoutClassFor(model string) TimeoutClass {
	if id, _ := NormalizeModel(model); threshold2Models[id] {
		return Threshold2
	}
	return Threshold1
}

// Comparator is the comparison of an accuracy threshold: ">" for
// higher-is-better metrics, "<" for lower-is-better ones (IN-14).
type Comparator string

// The two comparators the standard uses; both are strict.
const (
	Greater Comparator = ">"
	Less    Comparator = "<"
)

// Threshold is one accuracy threshold of a scenario row (GB-7.2-d). The
// values are reference values the tester may adjust, the same for every
// system of a comparison (GB-7.4.5-T11-FNb, IN-14).
type Threshold struct {
	// Metric is the metric's name as the table writes it ("Top1 accuracy",
	// "mAP@0.5", "WER", "AvgScore", …).
	Metric string `json:"metric"`
	// Comparator is the comparison to apply, after any correction (IN-57).
	Comparator Comparator `json:"comparator"`
	// Value is the threshold in the table's own scale (77.3 for "77.3 %",
	// 90.75 for an F1 score, 0.88 for "mAP > 0.88").
	Value float64 `json:"value"`
	// Unit is "%" for percentages, "score" for a 0–100 score, "" for a
	// fraction.
	Unit string `json:"unit,omitempty"`
	// Fraction is Value on a 0–1 scale (IN-24, IN-87): percentages and
	// 0–100 scores divided by 100.
	Fraction float64 `json:"fraction"`
	// Literal is the threshold as the standard prints it, kept even where
	// the comparator was corrected (IN-57).
	Literal string `json:"literal"`
	// Corrected marks a comparator that differs from the literal text
	// (IN-57: "AvgScore < 77.4" and "AvgScore < 39" are read as ">"); reports
	// should warn about it.
	Corrected bool `json:"corrected,omitempty"`
	// Note qualifies the threshold (e.g. which translation direction).
	Note string `json:"note,omitempty"`
}

// Pass reports whether a measured value, given as a fraction on the 0–1
// scale of Fraction (IN-87), meets the threshold. The comparison is strict:
// a value equal to the threshold fails (IN-14).
func (t Threshold) Pass(fraction float64) bool {
	switch t.Comparator {
	case Greater:
		return fraction > t.Fraction
	case Less:
		return fraction < t.Fraction
	}
	return false
}

// CatalogueEntry is one inference scenario row of Tables 11–14 (GB-7.4.5,
// GB-7.4.6).
type CatalogueEntry struct {
	// ID is the catalogue ID "T<table>-<row>", e.g. "T11-2"; it is also the
	// closed-mode model number of field 8 (GB-6.1-a-8, IN-07).
	ID string
	// ReqID is the requirement ID of the row, e.g. "GB-7.4.5-T11-2".
	ReqID string
	// Table and Row locate the row in the standard.
	Table, Row int
	// Mode is closed (Tables 11, 13) or open (Tables 12, 14) (5.1.2, 5.2.2).
	Mode testinfo.TestMode
	// Class is general (Tables 11, 12) or special (Tables 13, 14) (7.5).
	Class testinfo.ScenarioClass
	// Type is the scenario type ("Image recognition", …; Annex D).
	Type string
	// Model is the model as the table writes it; empty in open mode, where
	// the tested party chooses the model.
	Model string
	// ModelID is Model normalised per IN-52; empty in open mode.
	ModelID string
	// Dataset is the test-set source; for Table 11 rows 8–11 the accuracy
	// test task (BoolQ, C-Eval, Parti).
	Dataset string
	// DatasetTesterDefined marks a data set the tester fixes before the test
	// (GB-7.4.6-T14-FNb, IN-60).
	DatasetTesterDefined bool
	// PerformanceDataset is the data set of the performance test where it
	// differs from Dataset (Table 11 rows 8–11: the constructed dataset).
	PerformanceDataset string
	// ConstructedLengths are the default [input, output] sequence lengths, in
	// tokens, of the constructed dataset (GB-7.4.5-T11-FNc, IN-58): one
	// sub-result per pair.
	ConstructedLengths [][2]int
	// AccuracyMetric names the quality metric(s) ("Top1 accuracy",
	// "exact_match, f1 score", …).
	AccuracyMetric string
	// AccuracyThresholds are the thresholds, all of which must be met; empty
	// where the standard gives none and the tester must set one before a
	// formal run (ThresholdTesterDefined).
	AccuracyThresholds []Threshold
	// ThresholdTesterDefined marks a row without a threshold in the standard
	// (IN-60).
	ThresholdTesterDefined bool
	// ArrivalModes are the arrival-mode numbers the row allows, in number
	// order. Mode 5 (mixed) is listed for no row: it wraps one of these
	// (IN-50).
	ArrivalModes []ArrivalMode
	// Defaults are the reference arrival parameters of the row's footnote:
	// λ = 5 jobs/s, T = 500 ms, n = 1 (GB-7.4.5-T11-FNa), and j = 2 bursts
	// for T11-12; Mode, Duration, Timeout and Seed are left for the test.
	Defaults Arrival
	// TimeoutClass is the Table 10 threshold column for the row's model
	// (GB-7.4.2-T10-FNa); 1 in open mode, where it follows the declared
	// model (TimeoutClassFor).
	TimeoutClass TimeoutClass
	// ThroughputUnit is the unit of actual throughput (GB-7.6.4-units):
	// images/s, sentences/s or tokens/s; "samples/s" where 7.6.4 names no
	// unit (recommendation, speech).
	ThroughputUnit string
	// Notes are implementer's remarks on the row.
	Notes []string
}

// AllowsMode reports whether the row lists the arrival mode. Mixed mode (5)
// is never listed: check its underlying mode instead.
func (s CatalogueEntry) AllowsMode(m ArrivalMode) bool {
	for _, a := range s.ArrivalModes {
		if a == m {
			return true
		}
	}
	return false
}

// Timeout returns the row's timeout-control threshold for an arrival mode
// (Timeout with the row's column).
func (s CatalogueEntry) Timeout(m ArrivalMode) (time.Duration, bool) {
	return Timeout(m, s.TimeoutClass)
}

// thr builds a Threshold. unit is "%", "score" or "" (fraction).
func thr(metric string, c Comparator, v float64, unit, literal string) Threshold {
	f := v
	if unit == "%" || unit == "score" {
		// Round to 12 significant digits so that 77.3 % is exactly the
		// float64 0.773, not 77.3/100 = 0.7729999999999999.
		f, _ = strconv.ParseFloat(strconv.FormatFloat(v/100, 'g', 12, 64), 64)
	}
	return Threshold{Metric: metric, Comparator: c, Value: v, Unit: unit, Fraction: f, Literal: literal}
}

// corrected marks a threshold whose comparator was corrected (IN-57).
func corrected(t Threshold) Threshold {
	t.Corrected = true
	return t
}

func noted(t Threshold, note string) Threshold {
	t.Note = note
	return t
}

var allModes = []ArrivalMode{ModeContinuous, ModeFixedPeriod, ModePoisson, ModePeak, ModeOffline}

var llmLengths = [][2]int{{256, 256}, {512, 512}, {1024, 1024}, {2048, 2048}}

func row(table, r int, typ, model, dataset, metric, unit string, ts ...Threshold) CatalogueEntry {
	s := CatalogueEntry{
		ID:                 fmt.Sprintf("T%d-%d", table, r),
		Table:              table,
		Row:                r,
		Type:               typ,
		Model:              model,
		Dataset:            dataset,
		AccuracyMetric:     metric,
		AccuracyThresholds: ts,
		ArrivalModes:       allModes,
		Defaults:           Arrival{Lambda: DefaultLambda, Period: DefaultPeriod, N: DefaultN},
		TimeoutClass:       Threshold1,
		ThroughputUnit:     unit,
	}
	switch table {
	case 11:
		s.ReqID = fmt.Sprintf("GB-7.4.5-T11-%d", r)
		s.Mode, s.Class = testinfo.TestClosed, testinfo.ScenarioGeneral
	case 12:
		s.ReqID = fmt.Sprintf("GB-7.4.5-T12-%d", r)
		s.Mode, s.Class = testinfo.TestOpen, testinfo.ScenarioGeneral
	case 13:
		s.ReqID = fmt.Sprintf("GB-7.4.6-T13-%d", r)
		s.Mode, s.Class = testinfo.TestClosed, testinfo.ScenarioSpecial
	case 14:
		s.ReqID = fmt.Sprintf("GB-7.4.6-T14-%d", r)
		s.Mode, s.Class = testinfo.TestOpen, testinfo.ScenarioSpecial
	}
	if model != "" {
		s.ModelID, _ = NormalizeModel(model)
		s.TimeoutClass = TimeoutClassFor(model)
	}
	if len(ts) == 0 {
		s.ThresholdTesterDefined = true
		s.Notes = append(s.Notes, "IN-60: the standard gives no accuracy threshold; the tester sets one before a formal run")
	}
	return s
}

func llmRow(r int, typ, model, task, metric, unit string, t Threshold) CatalogueEntry {
	s := row(11, r, typ, model, task, metric, unit, t)
	s.PerformanceDataset = "constructed dataset"
	s.ConstructedLengths = llmLengths
	s.Notes = append(s.Notes, "IN-58: accuracy test on "+task+"; performance test on the constructed dataset, one sub-result per [input, output] length pair")
	return s
}

func buildCatalogue() []CatalogueEntry {
	top1 := "Top1 accuracy"
	cat := []CatalogueEntry{
		// Table 11 — general, closed mode (GB-7.4.5.1).
		row(11, 1, "Image recognition", "inception_v3", "imagenet2012", top1, "images/s",
			thr(top1, Greater, 77.3, "%", "Top1 accuracy > 77.3 %")),
		row(11, 2, "Image recognition", "resnet50_v1.5", "imagenet2012", top1, "images/s",
			thr(top1, Greater, 74, "%", "Top1 accuracy > 74 %")),
		row(11, 3, "Object detection", "yolo_v5s-6-0", "coco2017", "mAP@0.5", "images/s",
			thr("mAP@0.5", Greater, 55.9, "%", "mAP@0.5 > 55.9 %")),
		row(11, 4, "Semantic segmentation", "deeplab_v3", "coco2017", "mIOU", "images/s",
			thr("mIOU", Greater, 85, "%", "mIOU > 85 %")),
		row(11, 5, "Recommendation", "wide&-deep", "Criteo (Kaggle Display Advertising Challenge Dataset)", "AUC", "samples/s",
			thr("AUC", Greater, 72, "%", "AUC > 72 %")),
		row(11, 6, "Recommendation", "DLRM", "Criteo (1TB Click Logs)", "AUC", "samples/s",
			thr("AUC", Greater, 80.25, "%", "AUC > 80.25 %")),
		row(11, 7, "Natural language processing", "Bert-large", "SQuAD1.1", "exact_match, f1 score", "sentences/s",
			thr("exact_match", Greater, 83.57, "%", "exact_match > 83.57 %"),
			thr("f1 score", Greater, 90.75, "score", "f1 score > 90.75")),
		llmRow(8, "Natural language processing", "chatGLM V2 6B", "BoolQ", "AvgScore", "tokens/s",
			thr("AvgScore", Greater, 74, "score", "AvgScore > 74")),
		llmRow(9, "Natural language processing", "LLaMa2-13B", "BoolQ", "AvgScore", "tokens/s",
			corrected(thr("AvgScore", Greater, 77.4, "score", "AvgScore < 77.4"))),
		llmRow(10, "Natural language processing", "GLM 130B", "C-Eval", "AvgScore", "tokens/s",
			corrected(thr("AvgScore", Greater, 39, "score", "AvgScore < 39"))),
		llmRow(11, "Multimodal", "Stable Diffusion V2.1", "Parti", "CLIP score", "images/s",
			thr("CLIP score", Greater, 0.369, "", "CLIP score > 0.369")),
		row(11, 12, "Speech recognition", "wav2vec2_0", "Aishell-1", "WER", "samples/s",
			thr("WER", Less, 2.96, "%", "WER < 2.96 %")),

		// Table 12 — general, open mode (GB-7.4.5.2).
		row(12, 1, "Image recognition", "", "Imagenet2012", top1, "images/s",
			thr(top1, Greater, 75, "%", "Top1 accuracy > 75 %")),
		row(12, 2, "Object detection", "", "coco2017", "mAP", "images/s",
			thr("mAP", Greater, 57, "%", "mAP > 57 %")),
		row(12, 3, "Semantic segmentation", "", "coco2017", "mIOU", "images/s",
			thr("mIOU", Greater, 85, "%", "mIOU > 85 %")),
		row(12, 4, "Recommendation", "", "Criteo (Kaggle Display Advertising Challenge Dataset)", "AUC", "samples/s",
			thr("AUC", Greater, 72, "%", "AUC > 72 %")),
		row(12, 5, "Recommendation", "", "Criteo (1TB Click Logs)", "AUC", "samples/s",
			thr("AUC", Greater, 80.25, "%", "AUC > 80.25 %")),
		row(12, 6, "Natural language processing", "", "cn-wiki", "mask_lm accuracy", "sentences/s",
			thr("mask_lm accuracy", Greater, 0.7, "", "mask_lm accuracy > 0.7")),
		row(12, 7, "Natural language processing", "", "WMT18 English→German, English→Chinese", "BLEU", "sentences/s",
			noted(thr("BLEU", Greater, 24, "%", "BLEU > 24 %"), "English→German"),
			noted(thr("BLEU", Greater, 24, "%", "BLEU > 24 %"), "English→Chinese")),
		row(12, 8, "Speech recognition", "", "Aishell-1", "WER", "samples/s",
			thr("WER", Less, 7, "%", "WER < 7 %")),

		// Table 13 — special, closed mode (GB-7.4.6.1).
		row(13, 1, "OCR (without pre-segmentation)", "DBNET", "icdar2015", "mAP", "images/s",
			thr("mAP", Greater, 0.88, "", "mAP > 0.88")),
		row(13, 2, "Face recognition", "FaceNet", "LFW", "", "images/s"),
		row(13, 3, "Speech recognition", "Conformer (ESPnet2)", "Aishell-1", "err", "samples/s",
			thr("err", Less, 5.4, "%", "err < 5.4 %")),

		// Table 14 — special, open mode (GB-7.4.6.2).
		row(14, 1, "OCR (without pre-segmentation)", "", "financial-industry test set", "", "images/s"),
		row(14, 2, "Face recognition", "", "LFW", "", "images/s"),
	}
	for i := range cat {
		s := &cat[i]
		switch s.ID {
		case "T11-9", "T11-10":
			s.Notes = append(s.Notes, "IN-57: the standard prints \""+s.AccuracyThresholds[0].Literal+"\"; the comparator is corrected to >")
		case "T11-12":
			s.Defaults.Bursts = 2 // GB-7.4.5-T11-12: peak mode with j = 2
		case "T12-5":
			s.Notes = append(s.Notes, "IN-59: no parameters printed; the defaults of fn a apply")
		case "T12-7":
			s.Notes = append(s.Notes, "IN-59: BLEU > 24 % applies to each translation direction separately")
		case "T13-3":
			s.Notes = append(s.Notes, "IN-60: err is the character error rate on Aishell-1")
		case "T14-1":
			s.DatasetTesterDefined = true
			s.Notes = append(s.Notes, "GB-7.4.6-T14-FNb: the tester determines the data set before the test")
		}
	}
	return cat
}

var catalogue = buildCatalogue()

// Catalogue returns the inference scenarios of Tables 11–14 (GB-7.4.5.1,
// GB-7.4.5.2, GB-7.4.6.1, GB-7.4.6.2) in table and row order. The slice and
// its rows are copies: changing them does not change the catalogue.
func Catalogue() []CatalogueEntry {
	out := make([]CatalogueEntry, len(catalogue))
	for i, s := range catalogue {
		out[i] = s.clone()
	}
	return out
}

// scenarioAliases are the names of the scenarios whose workload aimeter
// runs, by upper-case alias.
var scenarioAliases = map[string]string{"OCR-DBNET": "T13-1"}

// Lookup returns the scenario with the given catalogue ID ("T11-2"; case and
// surrounding space are ignored, and a "GB-7.4.5-" style requirement-ID
// prefix is accepted) or alias ("ocr-dbnet" for T13-1).
func Lookup(id string) (CatalogueEntry, bool) {
	id = strings.ToUpper(strings.TrimSpace(id))
	if a, ok := scenarioAliases[id]; ok {
		id = a
	}
	if i := strings.LastIndex(id, "-T"); i >= 0 && strings.HasPrefix(id, "GB-") {
		id = id[i+1:]
	}
	for _, s := range catalogue {
		if s.ID == id {
			return s.clone(), true
		}
	}
	return CatalogueEntry{}, false
}

func (s CatalogueEntry) clone() CatalogueEntry {
	s.ConstructedLengths = append([][2]int(nil), s.ConstructedLengths...)
	s.AccuracyThresholds = append([]Threshold(nil), s.AccuracyThresholds...)
	s.ArrivalModes = append([]ArrivalMode(nil), s.ArrivalModes...)
	s.Defaults.BurstStarts = append([]time.Duration(nil), s.Defaults.BurstStarts...)
	s.Notes = append([]string(nil), s.Notes...)
	return s
}
