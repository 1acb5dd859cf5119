package accuracy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// A metric is one row of the `aimeter accuracy score` table: a name, a
// one-line description, and a function from the JSON input object to the
// output value (a struct with snake_case JSON tags).
type metric struct {
	name  string
	doc   string
	score func(input []byte) (any, error)
}

// metrics is the table of scorers, in the order they are listed. Each
// entry's input and output fields are documented on its input and output
// types.
var metrics = []metric{
	{"topk", "classification top-1 and top-5 (ties: lower class first, as np.argsort(-s, kind='stable'))", scoreTopK},
	{"auc", "ROC AUC of binary labels (scikit-learn roc_auc_score; null when one class)", scoreAUC},
	{"miou", "semantic segmentation mean IoU and pixel accuracy (confusion matrix, optional ignore index)", scoreMIoU},
	{"dice", "3D DICE per volume and pooled (both empty = 1; \"smoothed\": true for the KiTS19 reference's smoothing)", scoreDice},
	{"squad", "SQuAD v1.1 exact match and F1 (the official script's normalisation), 0-100", scoreSQuAD},
	{"wer", "corpus word and character error rates (Levenshtein)", scoreWER},
	{"bleu", "corpus BLEU as sacreBLEU 2.5.1's defaults (13a tokenizer, exp smoothing), 0-100", scoreBLEU},
	{"coco-map", "COCO bbox mAP, AP50, AP75, AR100 as pycocotools COCOeval", scoreCOCO},
	{"ocr-det", "text detection precision, recall and H-mean as the ICDAR 2015 script (IoU 0.5, don't-care regions)", scoreOCR},
	{"rouge", "mean ROUGE-1/2/L F-measure as Google's rouge-score 0.1.2 (Porter stemmer unless use_stemmer is false)", scoreROUGE},
}

func scoreROUGE(data []byte) (any, error) {
	var in struct {
		References  []string `json:"references"`
		Predictions []string `json:"predictions"`
		UseStemmer  *bool    `json:"use_stemmer"`
	}
	if err := decodeInput(data, &in); err != nil {
		return nil, err
	}
	stem := in.UseStemmer == nil || *in.UseStemmer
	return ROUGE(in.References, in.Predictions, stem)
}

func scoreBLEU(data []byte) (any, error) {
	var in struct {
		Hypotheses []string   `json:"hypotheses"`
		References [][]string `json:"references"`
	}
	if err := decodeInput(data, &in); err != nil {
		return nil, err
	}
	return BLEU(in.Hypotheses, in.References)
}

func scoreTopK(data []byte) (any, error) {
	var in struct {
		NumClasses int         `json:"num_classes"`
		Scores     [][]float64 `json:"scores"`
		Labels     []int       `json:"labels"`
	}
	if err := decodeInput(data, &in); err != nil {
		return nil, err
	}
	return TopK(in.Scores, in.Labels, in.NumClasses)
}

func scoreAUC(data []byte) (any, error) {
	var in struct {
		Scores []float64 `json:"scores"`
		Labels []int     `json:"labels"`
	}
	if err := decodeInput(data, &in); err != nil {
		return nil, err
	}
	auc, ok, err := AUC(in.Scores, in.Labels)
	if err != nil {
		return nil, err
	}
	if !ok {
		return AUCResult{}, nil
	}
	return AUCResult{AUC: &auc, Defined: true}, nil
}

func scoreMIoU(data []byte) (any, error) {
	var in struct {
		NumClasses  int        `json:"num_classes"`
		IgnoreIndex *int       `json:"ignore_index"`
		Images      []SegImage `json:"images"`
	}
	if err := decodeInput(data, &in); err != nil {
		return nil, err
	}
	return MeanIoU(in.Images, in.NumClasses, in.IgnoreIndex)
}

func scoreDice(data []byte) (any, error) {
	var in struct {
		Volumes  []Volume `json:"volumes"`
		Smoothed bool     `json:"smoothed"`
	}
	if err := decodeInput(data, &in); err != nil {
		return nil, err
	}
	var smooth *DiceSmooth
	if in.Smoothed {
		smooth = &KiTS19Smooth
	}
	return Dice(in.Volumes, smooth)
}

// squadAnswers reads a question's answers as strings or as objects with a
// "text" (the SQuAD data set's own form).
type squadAnswers []string

func (a *squadAnswers) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*a = (*a)[:0]
	for i, r := range raw {
		var s string
		if err := json.Unmarshal(r, &s); err == nil {
			*a = append(*a, s)
			continue
		}
		var o struct {
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(r, &o); err != nil || o.Text == nil {
			return fmt.Errorf("answers[%d]: want a string or an object with a text", i)
		}
		*a = append(*a, *o.Text)
	}
	return nil
}

func scoreSQuAD(data []byte) (any, error) {
	var in struct {
		Questions []struct {
			ID      string       `json:"id"`
			Answers squadAnswers `json:"answers"`
		} `json:"questions"`
		Predictions map[string]string `json:"predictions"`
	}
	if err := decodeInput(data, &in); err != nil {
		return nil, err
	}
	qs := make([]SQuADQuestion, len(in.Questions))
	for i, q := range in.Questions {
		qs[i] = SQuADQuestion{ID: q.ID, Answers: q.Answers}
	}
	return SQuAD(qs, in.Predictions)
}

func scoreWER(data []byte) (any, error) {
	var in struct {
		References []string `json:"references"`
		Hypotheses []string `json:"hypotheses"`
	}
	if err := decodeInput(data, &in); err != nil {
		return nil, err
	}
	return ErrorRates(in.References, in.Hypotheses)
}

// Metrics returns the names of the scorers that ScoreJSON knows, sorted,
// each with its one-line description.
func Metrics() [][2]string {
	out := make([][2]string, 0, len(metrics))
	for _, m := range metrics {
		out = append(out, [2]string{m.name, m.doc})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// ScoreJSON scores one JSON input object with the named metric (a name of
// Metrics) and returns the output object, ready for json.Marshal. Fields
// the metric does not know are ignored; missing, mismatched or non-finite
// inputs are an error that names the field and the entry.
func ScoreJSON(name string, input []byte) (any, error) {
	for _, m := range metrics {
		if m.name == name {
			return m.score(input)
		}
	}
	names := make([]string, 0, len(metrics))
	for _, m := range Metrics() {
		names = append(names, m[0])
	}
	return nil, fmt.Errorf("unknown metric %q (known: %s)", name, strings.Join(names, ", "))
}

// decodeInput decodes one JSON object into v. Unknown fields are allowed;
// trailing data after the object is an error.
func decodeInput(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("input: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("input: more than one JSON value")
	}
	return nil
}

// checkFinite returns an error naming field[i] when x is NaN or infinite.
func checkFinite(field string, i int, x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("%s[%d] is %v, want a finite number", field, i, x)
	}
	return nil
}

func scoreCOCO(data []byte) (any, error) {
	var in cocoInput
	if err := decodeInput(data, &in); err != nil {
		return nil, err
	}
	gts, err := cocoBoxes("ground_truths", in.GroundTruths, false)
	if err != nil {
		return nil, err
	}
	dets, err := cocoBoxes("detections", in.Detections, true)
	if err != nil {
		return nil, err
	}
	return COCOMap(in.Images, in.Categories, gts, dets, in.Params)
}

func scoreOCR(data []byte) (any, error) {
	var in ocrInput
	if err := decodeInput(data, &in); err != nil {
		return nil, err
	}
	images, err := in.ocrImages()
	if err != nil {
		return nil, err
	}
	return OCRDetection(images, in.IoUThreshold, in.AreaPrecisionThreshold)
}
