package gbt

import (
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/gbt/testinfo"
)

// Table 10 timeout-control thresholds (GB-7.4.2-T10-*, IN-63).
func TestTimeoutTable10(t *testing.T) {
	tests := []struct {
		id    string
		mode  ArrivalMode
		class TimeoutClass
		want  time.Duration
		ok    bool
	}{
		{"GB-7.4.2-T10-mode0", ModeContinuous, Threshold1, 2 * time.Second, true},
		{"GB-7.4.2-T10-mode0", ModeContinuous, Threshold2, 10 * time.Second, true},
		{"GB-7.4.2-T10-mode1", ModeFixedPeriod, Threshold1, 4 * time.Second, true},
		{"GB-7.4.2-T10-mode1", ModeFixedPeriod, Threshold2, 20 * time.Second, true},
		{"GB-7.4.2-T10-mode2", ModePoisson, Threshold1, 4 * time.Second, true},
		{"GB-7.4.2-T10-mode2", ModePoisson, Threshold2, 20 * time.Second, true},
		{"GB-7.4.2-T10-mode3", ModePeak, Threshold1, 60 * time.Second, true},
		{"GB-7.4.2-T10-mode3", ModePeak, Threshold2, 240 * time.Second, true},
		{"GB-7.4.2-T10-mode4 N/A (IN-51)", ModeOffline, Threshold1, 0, false},
		{"GB-7.4.2-T10-mode4 N/A (IN-51)", ModeOffline, Threshold2, 0, false},
		{"GB-7.4.2-T10-mode5 defers to the underlying mode", ModeMixed, Threshold1, 0, false},
		{"GB-7.4.2 mode 6 does not exist", 6, Threshold1, 0, false},
		{"GB-7.4.2 mode -1 does not exist", -1, Threshold1, 0, false},
		{"column 3 does not exist", ModePoisson, 3, 0, false},
	}
	for _, tc := range tests {
		got, ok := Timeout(tc.mode, tc.class)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: Timeout(%d, %d) = %v, %v; want %v, %v", tc.id, tc.mode, tc.class, got, ok, tc.want, tc.ok)
		}
	}
	// GB-7.4.2-T10-mode5: the threshold of the corresponding mode.
	for mode := ModeContinuous; mode <= ModeMixed; mode++ {
		for _, class := range []TimeoutClass{Threshold1, Threshold2} {
			m, mok := MixedTimeout(mode, class)
			u, uok := Timeout(mode, class)
			if m != u || mok != uok {
				t.Errorf("MixedTimeout(%d, %d) = %v %v, want %v %v", mode, class, m, mok, u, uok)
			}
		}
	}
}

func TestArrivalModesTable10(t *testing.T) {
	modes := ArrivalModes()
	if len(modes) != 6 {
		t.Fatalf("%d modes", len(modes))
	}
	for i, m := range modes {
		i := ArrivalMode(i)
		if m.Mode != i || m.Runs != 1 || m.ReqID != "GB-7.4.2-T10-mode"+string(rune('0'+i)) {
			t.Errorf("row %d = %+v", i, m)
		}
		// Only mode 0 may not queue jobs (IN-40).
		if m.Cacheable != (i != ModeContinuous) {
			t.Errorf("mode %d cacheable = %v", i, m.Cacheable)
		}
		if ModeName(i) != m.Name {
			t.Errorf("ModeName(%d) = %q", i, ModeName(i))
		}
		if p, err := ParseArrivalMode(m.Name); err != nil || p != i {
			t.Errorf("ParseArrivalMode(%q) = %d, %v", m.Name, p, err)
		}
	}
	modes[0].Name = "changed"
	if ModeName(0) != "continuous" {
		t.Error("ArrivalModes returned the table itself")
	}
	for s, want := range map[string]ArrivalMode{"FixedPeriod": 1, "fixed_period": 1, " Poisson ": 2, "3": 3, "continuous single": 0} {
		if got, err := ParseArrivalMode(s); err != nil || got != want {
			t.Errorf("ParseArrivalMode(%q) = %d, %v", s, got, err)
		}
	}
	for _, s := range []string{"6", "burst", ""} {
		if _, err := ParseArrivalMode(s); err == nil {
			t.Errorf("ParseArrivalMode(%q) accepted", s)
		}
	}
	if ModeName(9) != "mode(9)" {
		t.Errorf("ModeName(9) = %q", ModeName(9))
	}
}

// IN-52 normalisation, so that Table 10 footnote a applies by model
// (GB-7.4.2-T10-FNa).
func TestNormalizeModelAndTimeoutClass(t *testing.T) {
	tests := []struct {
		name, id string
		class    TimeoutClass
	}{
		{"chatGLM V2 6B", "chatglm2-6b", Threshold2},
		{"GLM v2 6B", "chatglm2-6b", Threshold2},
		{"ChatGLM2-6B", "chatglm2-6b", Threshold2},
		{"Llama2 13B", "llama2-13b", Threshold2},
		{"LLaMa2-13B", "llama2-13b", Threshold2},
		{"GLM 130B", "glm-130b", Threshold2},
		{"Stabdiffusion V2.1", "stable-diffusion-v2.1", Threshold2},
		{"Stable Diffusion v2.1", "stable-diffusion-v2.1", Threshold2},
		{"LLaMa2-70B", "llama2-70b", Threshold1}, // training only, not in fn a
		{"Resnet50_v1.5", "resnet50-v1.5", Threshold1},
		{"ResNet-50 v1.5", "resnet50-v1.5", Threshold1},
		{"Wav2vec2_0", "wav2vec2.0", Threshold1},
		{"wav2vec 2.0", "wav2vec2.0", Threshold1},
		{"Yolo5s-6-0", "yolov5s-6.0", Threshold1},
		{"yolo_v5s-6-0", "yolov5s-6.0", Threshold1},
		{"Wide&-deep", "wide-and-deep", Threshold1},
		{"Wide & Deep", "wide-and-deep", Threshold1},
		{"Conformer (ESPnet2)", "conformer-espnet2", Threshold1},
	}
	for _, tc := range tests {
		id, known := NormalizeModel(tc.name)
		if id != tc.id || !known {
			t.Errorf("NormalizeModel(%q) = %q, %v; want %q", tc.name, id, known, tc.id)
		}
		if c := TimeoutClassFor(tc.name); c != tc.class {
			t.Errorf("TimeoutClassFor(%q) = %d, want %d", tc.name, c, tc.class)
		}
	}
	if id, known := NormalizeModel(" My-Model "); known || id != "my-model" {
		t.Errorf("unknown model: %q %v", id, known)
	}
	if TimeoutClassFor("Qwen2-72B") != Threshold1 {
		t.Error("unknown model should use threshold 1")
	}
}

func TestCatalogueRows(t *testing.T) {
	cat := Catalogue()
	counts := map[int]int{}
	seen := map[string]bool{}
	for _, s := range cat {
		counts[s.Table]++
		if seen[s.ID] {
			t.Errorf("duplicate %s", s.ID)
		}
		seen[s.ID] = true
		if !strings.HasSuffix(s.ReqID, "-"+s.ID) || !strings.HasPrefix(s.ReqID, "GB-7.4.") {
			t.Errorf("%s: ReqID %q", s.ID, s.ReqID)
		}
		// Footnote defaults λ = 5, T = 500 ms, n = 1 (GB-7.4.5-T11-FNa, -T12-FNa,
		// GB-7.4.6-T13-FNb, -T14-FNc; IN-59 for T12-5).
		if s.Defaults.Lambda != 5 || s.Defaults.Period != 500*time.Millisecond || s.Defaults.N != 1 {
			t.Errorf("%s: defaults %+v", s.ID, s.Defaults)
		}
		// Every row allows modes 0–4; mode 5 is listed nowhere.
		if !slices.Equal(s.ArrivalModes, []ArrivalMode{0, 1, 2, 3, 4}) || s.AllowsMode(ModeMixed) {
			t.Errorf("%s: modes %v", s.ID, s.ArrivalModes)
		}
		if (s.Model == "") != (s.Mode == testinfo.TestOpen) {
			t.Errorf("%s: model %q in %s mode", s.ID, s.Model, s.Mode)
		}
		if (len(s.AccuracyThresholds) == 0) != s.ThresholdTesterDefined {
			t.Errorf("%s: thresholds %v, tester-defined %v", s.ID, s.AccuracyThresholds, s.ThresholdTesterDefined)
		}
		for _, th := range s.AccuracyThresholds {
			if th.Literal == "" || th.Fraction <= 0 || th.Fraction >= 1 {
				t.Errorf("%s: threshold %+v", s.ID, th)
			}
		}
	}
	if counts[11] != 12 || counts[12] != 8 || counts[13] != 3 || counts[14] != 2 {
		t.Errorf("rows per table: %v", counts)
	}

	rows := []struct {
		id     string
		check  func(CatalogueEntry) bool
		reason string
	}{
		{"T11-1", func(s CatalogueEntry) bool {
			th := s.AccuracyThresholds[0]
			return s.Model == "inception_v3" && s.Dataset == "imagenet2012" && th.Comparator == Greater && th.Value == 77.3 &&
				th.Fraction == 0.773 && s.TimeoutClass == Threshold1 && s.Mode == testinfo.TestClosed && s.Class == testinfo.ScenarioGeneral
		}, "GB-7.4.5-T11-1: Top1 > 77.3 %, column 1"},
		{"T11-7", func(s CatalogueEntry) bool {
			return len(s.AccuracyThresholds) == 2 && s.AccuracyThresholds[0].Metric == "exact_match" &&
				s.AccuracyThresholds[1].Fraction == 0.9075 && s.AccuracyThresholds[1].Unit == "score"
		}, "GB-7.4.5-T11-7: exact_match and F1, both (IN-87: F1 90.75 → 0.9075)"},
		{"T11-8", func(s CatalogueEntry) bool {
			return s.TimeoutClass == Threshold2 && s.Dataset == "BoolQ" && s.PerformanceDataset == "constructed dataset" &&
				slices.Equal(s.ConstructedLengths, [][2]int{{256, 256}, {512, 512}, {1024, 1024}, {2048, 2048}}) &&
				s.ThroughputUnit == "tokens/s"
		}, "GB-7.4.5-T11-8, -FNc, IN-58"},
		{"T11-9", func(s CatalogueEntry) bool {
			th := s.AccuracyThresholds[0]
			return th.Literal == "AvgScore < 77.4" && th.Comparator == Greater && th.Corrected && th.Fraction == 0.774 &&
				s.TimeoutClass == Threshold2
		}, "GB-7.4.5-T11-9, IN-57: literal kept, comparator corrected"},
		{"T11-10", func(s CatalogueEntry) bool {
			th := s.AccuracyThresholds[0]
			return th.Literal == "AvgScore < 39" && th.Comparator == Greater && th.Corrected && s.Dataset == "C-Eval" &&
				s.ModelID == "glm-130b"
		}, "GB-7.4.5-T11-10, IN-57"},
		{"T11-11", func(s CatalogueEntry) bool {
			return s.TimeoutClass == Threshold2 && s.AccuracyThresholds[0].Fraction == 0.369 && s.ThroughputUnit == "images/s" &&
				s.ModelID == "stable-diffusion-v2.1"
		}, "GB-7.4.5-T11-11: CLIP score on a 0–1 scale, images/s (IN-58)"},
		{"T11-12", func(s CatalogueEntry) bool {
			return s.Defaults.Bursts == 2 && s.AccuracyThresholds[0].Comparator == Less && s.TimeoutClass == Threshold1
		}, "GB-7.4.5-T11-12: peak mode j = 2, WER < 2.96 %"},
		{"T12-7", func(s CatalogueEntry) bool {
			return len(s.AccuracyThresholds) == 2 && s.AccuracyThresholds[0].Note == "English→German" &&
				s.AccuracyThresholds[1].Note == "English→Chinese" && s.Mode == testinfo.TestOpen
		}, "GB-7.4.5-T12-7, IN-59: BLEU per direction"},
		{"T13-2", func(s CatalogueEntry) bool {
			return s.ThresholdTesterDefined && s.Model == "FaceNet" && s.Class == testinfo.ScenarioSpecial && s.Mode == testinfo.TestClosed
		}, "GB-7.4.6-T13-2, IN-60: no threshold"},
		{"T13-3", func(s CatalogueEntry) bool {
			return s.AccuracyThresholds[0].Comparator == Less && s.AccuracyThresholds[0].Fraction == 0.054
		}, "GB-7.4.6-T13-3: err < 5.4 %"},
		{"T14-1", func(s CatalogueEntry) bool {
			return s.DatasetTesterDefined && s.ThresholdTesterDefined && s.Mode == testinfo.TestOpen && s.Class == testinfo.ScenarioSpecial
		}, "GB-7.4.6-T14-1, -FNb, IN-60"},
	}
	for _, r := range rows {
		s, ok := Lookup(r.id)
		if !ok {
			t.Errorf("%s missing", r.id)
			continue
		}
		if !r.check(s) {
			t.Errorf("%s (%s): %+v", r.id, r.reason, s)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, id := range []string{"T11-2", "t11-2", " T11-2 ", "GB-7.4.5-T11-2"} {
		s, ok := Lookup(id)
		if !ok || s.ID != "T11-2" || s.Model != "resnet50_v1.5" {
			t.Errorf("Lookup(%q) = %v, %v", id, s.ID, ok)
		}
	}
	for _, id := range []string{"ocr-dbnet", "OCR-DBNet", "T13-1"} {
		if s, ok := Lookup(id); !ok || s.ID != "T13-1" {
			t.Errorf("Lookup(%q) = %v, %v, want T13-1 (the alias of the OCR scenario)", id, s.ID, ok)
		}
	}
	for _, id := range []string{"T11-13", "T1-1", "", "11-2", "ocr"} {
		if _, ok := Lookup(id); ok {
			t.Errorf("Lookup(%q) found a row", id)
		}
	}
	// Rows are copies.
	s, _ := Lookup("T11-7")
	s.AccuracyThresholds[0].Value = 0
	s.ArrivalModes[0] = 9
	c := Catalogue()
	c[0].Notes = append(c[0].Notes, "x")
	s2, _ := Lookup("T11-7")
	if s2.AccuracyThresholds[0].Value != 83.57 || s2.ArrivalModes[0] != 0 {
		t.Error("Lookup returned shared slices")
	}
	if s1, _ := Lookup("T11-1"); len(s1.Notes) != 0 {
		t.Error("Catalogue returned shared slices")
	}
}

// Thresholds are strict (IN-14), compared as fractions (IN-24, IN-87).
func TestThresholdPass(t *testing.T) {
	top1, _ := Lookup("T11-2")
	wer, _ := Lookup("T11-12")
	tests := []struct {
		th   Threshold
		v    float64
		pass bool
	}{
		{top1.AccuracyThresholds[0], 0.7401, true},
		{top1.AccuracyThresholds[0], 0.74, false},
		{top1.AccuracyThresholds[0], 0.70, false},
		{wer.AccuracyThresholds[0], 0.0295, true},
		{wer.AccuracyThresholds[0], 0.0296, false},
		{Threshold{Comparator: "≥", Fraction: 0.5}, 0.9, false},
	}
	for _, tc := range tests {
		if got := tc.th.Pass(tc.v); got != tc.pass {
			t.Errorf("%q Pass(%v) = %v, want %v", tc.th.Literal, tc.v, got, tc.pass)
		}
		r := tc.th.Evaluate(tc.v)
		if *r.Pass != tc.pass || *r.Value != tc.v || r.Threshold.Literal != tc.th.Literal || r.Metric != tc.th.Metric {
			t.Errorf("Evaluate = %+v", r)
		}
	}
	if d, ok := wer.Timeout(ModePeak); !ok || d != 60*time.Second {
		t.Errorf("T11-12 peak timeout = %v %v", d, ok)
	}
	llm, _ := Lookup("T11-9")
	if d, _ := llm.Timeout(ModeContinuous); d != 10*time.Second {
		t.Errorf("T11-9 continuous timeout = %v", d)
	}
}
