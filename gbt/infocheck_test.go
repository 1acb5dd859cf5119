package gbt

import (
	"errors"
	"slices"
	"testing"

	"aimeter/gbt/testinfo"
)

// loadExample loads testinfo's example test information, which validates.
func loadExample(t *testing.T) testinfo.Info {
	t.Helper()
	info, err := testinfo.Load("testinfo/testdata/info/example.yaml")
	if err != nil {
		t.Fatalf("testinfo.Load: %v", err)
	}
	return info
}

// IN-07, GB-6.1-a-8: a closed-mode model number in catalogue form must be a
// row of Tables 11–14 of the declared mode and class; free text is accepted.
// The problems keep their place in field order and their text.
func TestValidateInfoCatalogue(t *testing.T) {
	tests := []struct {
		name    string
		modelNo string
		want    []string // nil: valid
	}{
		{"example is valid", "T11-2", nil},
		{"model_no free text accepted", "lab-model-7", nil},
		{"IN-07 unknown catalogue row", "T11-13", []string{`model_no (GB-6.1-a-8): "T11-13" is not a scenario of Tables 11–14`}},
		{"IN-07 open-mode row in closed mode", "t12-1", []string{"model_no (GB-6.1-a-8): T12-1 is a open-mode scenario (Table 12) but test_mode is closed"}},
		{"IN-07 special row in a general test", "T13-1", []string{"model_no (GB-6.1-a-8): T13-1 is a special scenario (Table 13) but scenario_class is general"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info := loadExample(t)
			info.ModelNo = tc.modelNo
			err := ValidateInfo(info)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("unexpected: %v", err)
				}
				return
			}
			var ve testinfo.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a testinfo.ValidationError", err)
			}
			var got []string
			for _, fe := range ve {
				got = append(got, fe.Error())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("problems = %q\nwant %q", got, tc.want)
			}
		})
	}

	// In field order: after the data set, before the submission time.
	info := loadExample(t)
	info.ModelNo, info.OrgName, info.SubmitTime = "T11-13", "", testinfo.Timestamp{}
	var ve testinfo.ValidationError
	if err := ValidateInfo(info); !errors.As(err, &ve) {
		t.Fatalf("err = %v", err)
	}
	if want := []string{"org_name", "model_no", "submit_time"}; !slices.Equal(ve.Fields(), want) {
		t.Errorf("fields = %q, want %q", ve.Fields(), want)
	}
}
