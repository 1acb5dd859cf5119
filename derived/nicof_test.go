package derived

import (
	"testing"

	"aimeter/bandwidth"
	"aimeter/bundle"
	"aimeter/sysinfo"
)

// The bandwidth check's NIC capacity is the traffic interfaces' link
// speed, never a guess.
func TestNICOf(t *testing.T) {
	eth0 := sysinfo.NIC{Name: "eth0", SpeedMbps: 25000}
	eth1 := sysinfo.NIC{Name: "eth1", SpeedMbps: 100000}
	virt := sysinfo.NIC{Name: "veth0", SpeedMbps: 0, SpeedNote: "kernel reports -1"}
	route := func(ifs ...string) []sysinfo.Route {
		var out []sysinfo.Route
		for _, i := range ifs {
			out = append(out, sysinfo.Route{Target: "10.0.0.9:8000", Interface: i})
		}
		return out
	}
	for _, tc := range []struct {
		why    string
		nics   []sysinfo.NIC
		routes []sysinfo.Route
		want   bandwidth.NIC
	}{
		{"no route recorded: unknown", []sysinfo.NIC{eth0}, nil, bandwidth.NIC{}},
		{"one interface: its speed in bits/s", []sysinfo.NIC{eth0, eth1}, route("eth0"), bandwidth.NIC{Name: "eth0", BitsPerSecond: 25e9}},
		{"two interfaces (a dispatcher's nodes): the sum", []sysinfo.NIC{eth0, eth1}, route("eth0", "eth1", "eth0"), bandwidth.NIC{Name: "eth0+eth1", BitsPerSecond: 125e9}},
		{"an unknown speed on the path makes the whole unknown", []sysinfo.NIC{eth0, virt}, route("eth0", "veth0"), bandwidth.NIC{Name: "eth0+veth0"}},
		{"a route's interface with no NIC record (lo): unknown", []sysinfo.NIC{eth0}, route("lo"), bandwidth.NIC{Name: "lo"}},
	} {
		b := &bundle.Bundle{System: sysinfo.System{NICs: tc.nics, Routes: tc.routes}}
		if got := nicOf(b); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.why, got, tc.want)
		}
	}
}
