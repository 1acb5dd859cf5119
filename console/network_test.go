package console

import (
	"bytes"
	"testing"

	"aimeter/benchmark"
	"aimeter/bundle"
	"aimeter/sysdesc"
	"aimeter/sysinfo"
)

// The console names the interface of each route with its speed (or
// loopback, or why it is unknown), the division and the description, and
// what a network-division result lacks; nothing for a run with neither.
func TestWriteNetwork(t *testing.T) {
	rec, err := sysdesc.Load("../examples/system-desc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle.Bundle{System: sysinfo.System{
		NICs: []sysinfo.NIC{{Name: "lo", Loopback: true}, {Name: "ens1", SpeedMbps: 200000}},
		Routes: []sysinfo.Route{
			{Target: "127.0.0.1:8000", Interface: "lo", Method: sysinfo.RouteByLoopback},
			{Target: "10.0.0.5:8000", Interface: "ens1", Gateway: "10.0.0.1", Method: sysinfo.RouteByTable},
			{Target: "sut.invalid:80", Note: "sut.invalid does not resolve"},
		}}}
	sysdesc.Set(b, rec)
	var buf bytes.Buffer
	WriteNetwork(&buf, &benchmark.Outcome{Bundle: b})
	want := "Network: traffic to 127.0.0.1:8000 by lo (loopback; loopback address)\n" +
		"Network: traffic to 10.0.0.5:8000 by ens1 via 10.0.0.1 (200 Gb/s; routing table)\n" +
		"Network: traffic to sut.invalid:80 by an unknown interface: sut.invalid does not resolve\n" +
		`MLPerf network division: "Example two-node inference cluster", 2 SUT nodes with 4 NICs (800 Gb/s in all), 2 components between, ethernet, TCP over IPv4; diagram system_diagram.svg (sha256 ` +
		rec.Diagram.Source.SHA256[:12] + "…)\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	buf.Reset()
	sysdesc.Set(b, &sysdesc.Record{Division: "network"})
	b.System = sysinfo.System{}
	WriteNetwork(&buf, &benchmark.Outcome{Bundle: b})
	if got := buf.String(); !bytes.HasPrefix([]byte(got), []byte("MLPerf network division\n  * a network-division result without a system description")) {
		t.Errorf("a bare declaration: %q", got)
	}
	buf.Reset()
	WriteNetwork(&buf, &benchmark.Outcome{Bundle: &bundle.Bundle{}})
	if buf.Len() != 0 {
		t.Errorf("a run with nothing to say wrote %q", buf.String())
	}
}
