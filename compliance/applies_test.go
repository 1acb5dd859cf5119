package compliance

import (
	"testing"
)

func TestCheckGiven(t *testing.T) {
	only := func(name string) func(string) bool { return func(f string) bool { return f == name } }
	if err := CheckGiven(TEST06, only("DType")); err != nil {
		t.Errorf("DType for TEST06: %v", err)
	}
	if err := CheckGiven(TEST04, func(string) bool { return false }); err != nil {
		t.Errorf("nothing given: %v", err)
	}
	err := CheckGiven(TEST04, only("DType"))
	if err == nil || err.Error() != "Options.DType applies to TEST01 and TEST06, not TEST04" {
		t.Errorf("DType for TEST04: %v", err)
	}
	if err := CheckGiven(TEST01, only("MinOutputTokens")); err == nil || err.Error() != "Options.MinOutputTokens applies to TEST09, not TEST01" {
		t.Errorf("MinOutputTokens for TEST01: %v", err)
	}
}

func TestReportCounts(t *testing.T) {
	r := &Report{Findings: []Finding{{Severity: SeverityError}, {Severity: SeverityWarning}, {Severity: SeverityError}}}
	if e, w := r.Counts(); e != 2 || w != 1 {
		t.Errorf("counts %d errors, %d warnings; want 2, 1", e, w)
	}
}
