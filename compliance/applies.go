package compliance

import (
	"fmt"
	"slices"
	"strings"
)

// optionTests are the tests each test-specific field of Options applies
// to, by the field's name; any other test refuses it (CheckGiven).
var optionTests = []struct {
	field string
	tests []Test
}{
	{"DType", []Test{TEST01, TEST06}},
	{"EOSTokenID", []Test{TEST06}},
	{"SamplingTarget", []Test{TEST01, TEST06}},
	{"AccuracyThreshold", []Test{TEST07}},
	{"MinOutputTokens", []Test{TEST09}},
	{"MaxOutputTokens", []Test{TEST09}},
	{"AccuracyDelta", []Test{TEST01}},
}

// CheckGiven refuses a field of Options that was given (given reports it,
// by the field's name) to a test it does not apply to: the error names the
// field by its path, "Options.DType applies to TEST01 and TEST06, not
// TEST04", for a command line to name its flag instead.
func CheckGiven(test Test, given func(field string) bool) error {
	for _, o := range optionTests {
		if !given(o.field) || slices.Contains(o.tests, test) {
			continue
		}
		return &OptionError{Field: "Options." + o.field, AppliesTo: o.tests, Test: test}
	}
	return nil
}

// OptionError is an Options field given to a test it does not apply to.
// Its message starts with the field's path ("Options.DType applies to TEST01
// and TEST06, not TEST04"), which a command line replaces with its flag.
type OptionError struct {
	Field     string // the field's path, e.g. "Options.DType"
	AppliesTo []Test // the tests the field applies to
	Test      Test   // the test it was given to
}

func (e *OptionError) Error() string {
	names := make([]string, len(e.AppliesTo))
	for i, t := range e.AppliesTo {
		names[i] = string(t)
	}
	return fmt.Sprintf("%s applies to %s, not %s", e.Field, strings.Join(names, " and "), e.Test)
}

// Counts returns how many findings are errors and how many warnings.
func (r *Report) Counts() (errors, warnings int) {
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			errors++
		} else {
			warnings++
		}
	}
	return errors, warnings
}
