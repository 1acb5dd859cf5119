package compliance

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/sysdesc"
	"aimeter/sysinfo"
)

// aimeter check on results declared for MLPerf's network division: a
// missing description or diagram is an error, so is traffic that never
// left the host; gaps in the NIC records are warnings; a result of no
// division has none of these findings. One row per case, with its reason.
func TestCheckNetworkDivision(t *testing.T) {
	s := loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)
	res, err := loadgen.Run(context.Background(), &loadgentest.StagedSUT{}, &loadgentest.QSL{Total: 16}, s, &loadgen.Options{SpinWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	full, err := sysdesc.Load("../examples/system-desc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	noDiagram := *full
	noDiagram.Diagram = nil
	nic := sysinfo.NIC{Name: "ens1f0np0", SpeedMbps: 100000, MTU: 9000}
	slow := sysinfo.NIC{Name: "eth0", SpeedNote: "the kernel reports -1", MTU: 1500}
	remote := sysinfo.Route{Target: "10.0.0.5:8000", Address: "10.0.0.5", Interface: "ens1f0np0", Method: sysinfo.RouteByTable}
	for _, tc := range []struct {
		why    string
		rec    *sysdesc.Record
		sys    sysinfo.System
		errors []string // substrings of the network-division errors, in order
		warns  []string // and warnings
		name   string   // the SUT's name; "" is a QDL's "Network SUT …"
	}{
		{"a whole network-division result on a separate host: nothing to say", full,
			sysinfo.System{NICs: []sysinfo.NIC{nic}, Routes: []sysinfo.Route{remote}}, nil, nil, ""},
		{"declared network without a description", &sysdesc.Record{Division: "network"},
			sysinfo.System{NICs: []sysinfo.NIC{nic}, Routes: []sysinfo.Route{remote}},
			[]string{"without a system description", "without a system diagram"}, nil, ""},
		{"a description without its diagram", &noDiagram,
			sysinfo.System{NICs: []sysinfo.NIC{nic}, Routes: []sysinfo.Route{remote}}, []string{"without a system diagram"}, nil, ""},
		{"the SUT on the LoadGen host: the traffic went over loopback", full,
			sysinfo.System{NICs: []sysinfo.NIC{nic}, Routes: []sysinfo.Route{{Target: "127.0.0.1:8000", Interface: "lo", Method: sysinfo.RouteByLoopback}}},
			[]string{"never left the LoadGen host"}, nil, ""},
		{"no NIC records and no route: gaps, warned", full, sysinfo.System{},
			nil, []string{"no network interfaces", "not recorded"}, ""},
		{"the traffic's interface of unknown speed, and a route not found", full,
			sysinfo.System{NICs: []sysinfo.NIC{slow}, Routes: []sysinfo.Route{
				{Target: "10.0.0.6:80", Interface: "eth0", Method: sysinfo.RouteByTable},
				{Target: "sut.invalid:80", Note: "sut.invalid does not resolve"}}},
			nil, []string{"the speed of eth0", "does not resolve"}, ""},
		{"a SUT named without \"Network SUT\", which MLPerf's checker refuses", full,
			sysinfo.System{NICs: []sysinfo.NIC{nic}, Routes: []sysinfo.Route{remote}}, nil, []string{`"StagedSUT" lacks "Network SUT"`}, "StagedSUT"},
		{"a result of no division: not judged", nil, sysinfo.System{}, nil, nil, "StagedSUT"},
	} {
		res.SUTName = tc.name
		if tc.name == "" {
			res.SUTName = "Network SUT over 1 node"
		}
		dir := filepath.Join(t.TempDir(), "run")
		b := &bundle.Bundle{Result: res, Version: "test", NoReport: true, System: tc.sys}
		if tc.rec != nil {
			sysdesc.Set(b, tc.rec)
		}
		if err := derived.Write(dir, b); err != nil {
			t.Fatal(err)
		}
		rep, err := Check(dir, CheckOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var errs, warns []string
		for _, f := range rep.Findings {
			if f.Code != "network-division" {
				continue
			}
			if f.Severity == SeverityError {
				errs = append(errs, f.Message)
			} else {
				warns = append(warns, f.Message)
			}
		}
		match := func(got, want []string) bool {
			return len(got) == len(want) && !slices.ContainsFunc(want, func(w string) bool {
				return !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) })
			})
		}
		if !match(errs, tc.errors) || !match(warns, tc.warns) {
			t.Errorf("%s:\nerrors %q\nwarnings %q\nwant errors %q, warnings %q", tc.why, errs, warns, tc.errors, tc.warns)
		}
	}
}
