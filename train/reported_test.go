package train

import "testing"

// A figure aimeter could not compute from the events is shown with what
// the workload reported of it, named as the workload's, never as
// aimeter's; the workload's own value wins over one computed from its
// files.
func TestWorkloadReportInstead(t *testing.T) {
	v1, v2 := 5441.56, 5396.69
	r := &WorkloadReport{Figures: []ReportedFigure{
		{Name: "Th", Value: &v2, Unit: "samples/s", Source: SourceWorkloadFiles},
		{Name: "Th", Value: &v1, Unit: "samples/s", Source: SourceWorkload},
		{Name: "accuracy", Text: "loss: 1.2", Source: SourceWorkload},
	}}
	for _, tc := range []struct {
		why  string
		r    *WorkloadReport
		name string
		want string
	}{
		{"the workload's own value first", r, "Th", "-- (not computed from the events; 5441.56 samples/s set by the workload)"},
		{"a figure that is no number is not shown as one", r, "accuracy", "--"},
		{"a figure not reported", r, "T_L", "--"},
		{"no report at all (not an ais-bench run)", nil, "Th", "--"},
	} {
		if got := tc.r.Instead(tc.name); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.why, got, tc.want)
		}
	}
}
