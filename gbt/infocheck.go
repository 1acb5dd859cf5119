package gbt

import (
	"fmt"

	"aimeter/gbt/testinfo"
)

// ValidateInfo checks test information as [testinfo.Info.Validate] does and
// checks a closed-mode model number in catalogue form ("T11-2") against
// Tables 11–14: the row must exist, and its mode and class must match
// test_mode and scenario_class (IN-07, GB-6.1-a-8). It returns a
// testinfo.ValidationError naming every problem in field order, or nil.
func ValidateInfo(in testinfo.Info) error { return in.Validate(checkModelNo) }

// checkModelNo is the testinfo.ModelCheck of the catalogue.
func checkModelNo(in testinfo.Info) []testinfo.FieldError {
	const field, id = "model_no", "GB-6.1-a-8"
	s, ok := Lookup(in.ModelNo)
	if !ok {
		return []testinfo.FieldError{{Field: field, ReqID: id, Msg: fmt.Sprintf("%q is not a scenario of Tables 11–14", in.ModelNo)}}
	}
	var errs []testinfo.FieldError
	if s.Mode != in.TestMode {
		errs = append(errs, testinfo.FieldError{Field: field, ReqID: id,
			Msg: fmt.Sprintf("%s is a %s-mode scenario (Table %d) but test_mode is %s", s.ID, s.Mode, s.Table, in.TestMode)})
	}
	if in.ScenarioClass != 0 && s.Class != in.ScenarioClass {
		errs = append(errs, testinfo.FieldError{Field: field, ReqID: id,
			Msg: fmt.Sprintf("%s is a %s scenario (Table %d) but scenario_class is %s", s.ID, s.Class, s.Table, in.ScenarioClass)})
	}
	return errs
}
