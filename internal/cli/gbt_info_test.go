package cli

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/sut/reference/mlp"
)

func TestSUTInfo(t *testing.T) {
	ref := sutInfo("reference", "synthetic-test")
	if !slices.Equal(ref.Precision, gbt.PrecisionList{gbt.FP32}) {
		t.Errorf("reference precision %v, want FP32: the MLP computes in float32 (GB-7.3-c)", ref.Precision)
	}
	if ref.BatchSize != mlp.MaxBatch || ref.BatchVariable != gbt.Used {
		t.Errorf("reference batch %d variable %v, want %d and used: it batches dynamically (GB-7.2-e)", ref.BatchSize, ref.BatchVariable, mlp.MaxBatch)
	}
	if ref.Framework.Name != mlp.Framework || ref.Framework.Version != Version || ref.ModelName == "" || ref.DatasetType != gbt.DatasetFixed || ref.Extra["dataset"] != "synthetic-test" {
		t.Errorf("reference framework/model/data set %+v", ref)
	}
	tests := []struct {
		sut, reason string
		info        gbt.TestInfo
		want        []string // in the note
		notWant     []string
	}{
		{"reference", "every knowable field comes from the reference SUT", ref,
			[]string{"come from the reference SUT"}, []string{"Not provided", "null"}},
		{"null-async", "a null SUT without --info provides none of them", gbt.TestInfo{},
			[]string{"null-async SUT computes nothing", "Not provided: framework, model, precision, batch size."}, nil},
		{"null", "--info declares precision and batch size only", gbt.TestInfo{Precision: gbt.PrecisionList{gbt.INT8}, BatchSize: 8},
			[]string{"Not provided: framework, model."}, []string{"precision,"}},
	}
	for _, tc := range tests {
		note := sutInfoNote(tc.sut, tc.info)
		for _, w := range tc.want {
			if !strings.Contains(note, w) {
				t.Errorf("%s: note %q lacks %q", tc.reason, note, w)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(note, w) {
				t.Errorf("%s: note %q has %q", tc.reason, note, w)
			}
		}
	}
	if info := gbt.Merge(ref, gbt.TestInfo{Precision: gbt.PrecisionList{gbt.FP16}}); !slices.Equal(info.Precision, gbt.PrecisionList{gbt.FP16}) || info.BatchSize != mlp.MaxBatch {
		t.Errorf("--info overrides field by field: %+v", info)
	}
}

// TestPrintGBTElasticity checks that "Elasticity" is the standard's Table 19
// value (EL × 100, in %) and IN-76's %/MB variant is labelled as such.
func TestPrintGBTElasticity(t *testing.T) {
	res := &loadgen.Result{}
	test := &gbt.Test{Arrival: gbt.Arrival{Mode: gbt.ModePeak, Timeout: 2 * time.Second}}
	m := &gbt.Metrics{Elasticity: &gbt.Elasticity{Available: true, Value: 0.0123, Percent: 1.23, PercentPerMB: 45.6}, PressureTolerance: &gbt.PressureTolerance{}}
	var b bytes.Buffer
	printGBT(&b, res, test, m, "out", nil)
	out := b.String()
	for _, want := range []string{"Elasticity (EL, Table 19): 1.2300 %\n", "Elasticity variant (IN-76, non-standard): 45.6000 %/MB\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Elasticity: 45.6") {
		t.Errorf("the %%/MB variant is printed as the elasticity:\n%s", out)
	}
}

// TestGBTRecordsEveryLifecycleEvent runs a GB/T test and checks that the
// result file holds every event of 7.7.1 j) 1) (GB-7.7.1-j-1), in the
// clause's order, the upload marked when the bundle was written, and the
// precision of a null SUT, which computes nothing, left to --info.
func TestGBTRecordsEveryLifecycleEvent(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, "", "run", "--sut", "null-async", "-q", "--output-dir", dir, "--arrival-mode", "1", "--period", "50ms", "--jobs-per-period", "2", "--duration", "200ms")
	if r.code != ExitOK {
		t.Fatal(r)
	}
	res, err := readGBTResult(filepath.Join(dir, "gbt_result.json"))
	if err != nil {
		t.Fatal(err)
	}
	ev := res.Lifecycle
	clause := []gbt.LifecycleEvent{gbt.EventTestStart, gbt.EventDatasetLoadStart, gbt.EventDatasetLoadEnd, gbt.EventTestEnd, gbt.EventResultUploadComplete}
	var prev time.Time
	for _, e := range clause {
		at := ev.Time(e)
		if at.IsZero() {
			t.Errorf("lifecycle event %s missing: %+v", e, ev)
			continue
		}
		if at.Before(prev) {
			t.Errorf("lifecycle event %s at %v before the previous one at %v", e, at, prev)
		}
		prev = at
	}
	if err := ev.Validate(); err != nil {
		t.Error(err)
	}
	if len(res.Precision) != 0 {
		t.Errorf("null SUT precision %v without --info", res.Precision)
	}
}

func TestOnlineScorer(t *testing.T) {
	var s onlineScorer
	if got := s.score(3, func(uint64) uint8 { return 0 }); got != "" {
		t.Errorf("no classification: score %q, want \"\" (no scorer applies)", got)
	}
	labels := []uint8{7, 2, 9, 4, 1}
	// Hand-worked: 0 right, 1 wrong, 2 never classified, 3 right after a
	// later answer replaced a wrong one, 4 wrong; total 6 leaves index 5
	// unscored.
	s.classified(3, 0)
	s.classified(0, 7)
	s.classified(1, 3)
	s.classified(3, 4)
	s.classified(4, 9)
	label := func(i uint64) uint8 {
		if i < uint64(len(labels)) {
			return labels[i]
		}
		return 0
	}
	if got, want := s.score(6, label), "10-10-"; got != want {
		t.Errorf("score = %q, want %q", got, want)
	}
}
