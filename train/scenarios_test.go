package train

import (
	"slices"
	"testing"

	"aimeter/gbt"
	"aimeter/gbt/testinfo"
)

// TestScenarioCatalogue checks every row of Tables 1–4 against the
// standard: ID, model, data set, threshold (as a fraction, IN-24) or step
// limit, trials.
func TestScenarioCatalogue(t *testing.T) {
	type row struct {
		id, model, dataset string
		fraction           float64 // 0: no threshold
		cmp                gbt.Comparator
		steps, trials      int
	}
	want := []row{
		{"T1-1", "Resnet50_v1.5", "Imagenet2012", 0.74, ">", 0, 5},
		{"T1-2", "Inception v3", "Imagenet2012", 0.7806, ">", 0, 5},
		{"T1-3", "Deeplab_v3", "Cityscapes", 0.7798, ">", 0, 5},
		{"T1-4", "Wav2vec2_0", "Aishell-1", 0.055, "<", 0, 5},
		{"T1-5", "Wide&-deep", "Criteo (Kaggle Display Advertising Challenge Dataset)", 0.72, ">", 0, 5},
		{"T1-6", "DLRM", "Criteo (1TB Click Logs)", 0.8025, ">", 0, 5},
		{"T1-7", "Yolo5s-6-0", "Coco2017", 0.642, ">", 0, 5},
		{"T1-8", "Bert-large", "En-wiki", 0.7, ">", 0, 5},
		{"T1-9", "GLM v2 6B", "Fine-tuning task: ADGEN; pre-training task: En-wiki", 0, "", 2000, 3},
		{"T1-10", "LLaMa2-13B", "Fine-tuning task: Moss; pre-training task: En-wiki", 0, "", 2000, 3},
		{"T1-11", "LLaMa2-70B", "Fine-tuning task: Moss; pre-training task: En-wiki", 0, "", 200, 3},
		{"T1-12", "Stable Diffusion v2.1", "Fine-tuning task: Pokemon; pre-training task: LAION-5B", 0, "", 2000, 3},
		{"T2-1", "", "Imagenet2012", 0.75, ">", 0, 0},
		{"T2-2", "", "Coco2017", 0.35, ">", 0, 0},
		{"T2-3", "", "Coco2017", 0.85, ">", 0, 0},
		{"T2-4", "", "Criteo (Kaggle Display Advertising Challenge Dataset)", 0.72, ">", 0, 0},
		{"T2-5", "", "Criteo (1TB Click Logs)", 0.8025, ">", 0, 0},
		{"T2-6", "", "WMT18 English→German, English→Chinese", 0.24, ">", 0, 0},
		{"T2-7", "", "Cn-wiki", 0.7, ">", 0, 0},
		{"T2-8", "", "Aishell-1", 0.055, "<", 0, 0},
		{"T3-1", "DBNET", "Icdar2015", 0.896, ">", 0, 5},
		{"T3-2", "FaceNet", "LFW", 0, "", 0, 5},
		{"T3-3", "Conformer (ESPnet2)", "Aishell-1", 0.9502, ">", 0, 5},
		{"T4-1", "", "Icdar2015", 0, "", 0, 0},
		{"T4-2", "", "LFW", 0, "", 0, 0},
	}
	got := Scenarios()
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i, w := range want {
		s := got[i]
		if s.ID != w.id || s.Model != w.model || s.Dataset != w.dataset || s.StepLimit != w.steps || s.Trials != w.trials {
			t.Errorf("row %d: %+v, want %+v", i, s, w)
		}
		switch {
		case w.fraction == 0 && s.Threshold != nil:
			t.Errorf("%s: threshold %+v, want none", s.ID, *s.Threshold)
		case w.fraction != 0 && (s.Threshold == nil || s.Threshold.Fraction != w.fraction || s.Threshold.Comparator != w.cmp):
			t.Errorf("%s: threshold %+v, want %s %v", s.ID, s.Threshold, w.cmp, w.fraction)
		}
		// A row without a threshold ends at a step limit or leaves the
		// threshold to the tester.
		if s.Threshold == nil && s.StepLimit == 0 && !s.ThresholdTesterDefined {
			t.Errorf("%s: neither threshold, step limit nor tester threshold", s.ID)
		}
		if (s.Mode == testinfo.TestOpen) != (s.Table == 2 || s.Table == 4) || (s.Class == testinfo.ScenarioSpecial) != (s.Table >= 3) {
			t.Errorf("%s: mode %v class %v", s.ID, s.Mode, s.Class)
		}
		wantPrec := []testinfo.Precision{testinfo.FP16, testinfo.FP32, testinfo.BF16}
		if s.ID == "T2-1" {
			wantPrec = []testinfo.Precision{testinfo.FP16, testinfo.FP32} // "FP16/FP32" only
		}
		if !slices.Equal(s.Precisions, wantPrec) {
			t.Errorf("%s: precisions %v", s.ID, s.Precisions)
		}
		if l, ok := LookupScenario(s.ReqID); !ok || l.ID != s.ID {
			t.Errorf("lookup of %s by %s failed", s.ID, s.ReqID)
		}
	}
}

func TestLookupScenario(t *testing.T) {
	cases := []struct {
		reason, id string
		ok         bool
		trials     int
	}{
		{"catalogue ID", "T1-1", true, 5},
		{"any case, spaces", " t1-11 ", true, 3},
		{"open-mode row: 5 trials by default", "T2-8", true, 5},
		{"an inference row is not a training scenario", "T11-1", false, 0},
		{"empty", "", false, 0},
	}
	for _, c := range cases {
		s, ok := LookupScenario(c.id)
		if ok != c.ok || (ok && s.TrialCount() != c.trials) {
			t.Errorf("%s: %q → %v %d", c.reason, c.id, ok, s.TrialCount())
		}
	}
	// The catalogue is not aliased by what Lookup returns.
	s, _ := LookupScenario("T1-4")
	s.Threshold.Fraction = 9
	s.Precisions[0] = "X"
	again, _ := LookupScenario("T1-4")
	if again.Threshold.Fraction != 0.055 || again.Precisions[0] != testinfo.FP16 {
		t.Error("LookupScenario returned shared state")
	}
	if tg := again.Target(); tg == nil || !tg.LowerIsBetter || tg.Value != 0.055 || !tg.Reached(0.05) || tg.Reached(0.055) {
		t.Errorf("T1-4 target %+v", tg)
	}
	if s, _ := LookupScenario("T1-9"); s.Target() != nil || !s.TextGeneration {
		t.Errorf("T1-9: target %v, text generation %v", s.Target(), s.TextGeneration)
	}
}

func TestTrialDone(t *testing.T) {
	a := func(v float64) *float64 { return &v }
	cases := []struct {
		reason   string
		id       string
		accuracy *float64
		steps    int
		want     bool
	}{
		{"top-1 above 74 %", "T1-1", a(0.7401), 10, true},
		{"exactly the threshold is not above it (IN-14)", "T1-1", a(0.74), 10, false},
		{"no accuracy yet", "T1-1", nil, 10, false},
		{"WER below 5.5 %", "T1-4", a(0.05), 0, true},
		{"WER above", "T1-4", a(0.06), 0, false},
		{"step limit reached", "T1-11", nil, 200, true},
		{"step limit not reached, accuracy irrelevant", "T1-11", a(1), 199, false},
		{"tester-defined threshold never done by itself", "T3-2", a(1), 1e6, false},
	}
	for _, c := range cases {
		s, _ := LookupScenario(c.id)
		if got := s.TrialDone(c.accuracy, c.steps); got != c.want {
			t.Errorf("%s: %v, want %v", c.reason, got, c.want)
		}
	}
}
