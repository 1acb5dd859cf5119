package console

import (
	"fmt"
	"io"
	"strings"

	"aimeter/benchmark"
	"aimeter/sysdesc"
	"aimeter/sysinfo"
)

// WriteNetwork writes the interfaces a network run's traffic left by,
// each with its link speed (or why it is unknown), and the run's MLPerf
// division and system description, with what a network-division result
// still lacks. It writes nothing for a run of an in-process SUT with no
// description.
func WriteNetwork(w io.Writer, out *benchmark.Outcome) {
	if out.Bundle == nil {
		return
	}
	sys := out.Bundle.System
	for _, r := range sys.Routes {
		fmt.Fprintf(w, "Network: traffic to %s %s\n", r.Target, routeText(r, sys.NICs))
	}
	rec := sysdesc.Of(out.Bundle)
	if rec == nil {
		return
	}
	if rec.Division != "" {
		fmt.Fprintf(w, "MLPerf %s division", rec.Division)
	} else {
		fmt.Fprint(w, "System description")
	}
	if d := rec.Description; d != nil {
		n, mbps := d.NICCount()
		fmt.Fprintf(w, ": %q, %d SUT nodes with %d NICs (%.4g Gb/s in all), %d components between, %s, %s over %s",
			d.SystemName, d.NodeCount(), n, mbps/1000, len(d.Components), d.Fabric, d.Protocol.Transport, d.Protocol.Network)
		if g := rec.Diagram; g != nil {
			fmt.Fprintf(w, "; diagram %s (sha256 %s…)", g.File, g.Source.SHA256[:12])
		}
	}
	fmt.Fprintln(w)
	for _, p := range rec.Problems() {
		fmt.Fprintf(w, "  * %s\n", p)
	}
}

// routeText is how a route left: "by eth0 (100 Gb/s, routing table)".
func routeText(r sysinfo.Route, nics []sysinfo.NIC) string {
	if r.Interface == "" {
		return "by an unknown interface: " + r.Note
	}
	var b strings.Builder
	fmt.Fprintf(&b, "by %s", r.Interface)
	if r.Gateway != "" {
		fmt.Fprintf(&b, " via %s", r.Gateway)
	}
	speed := "link speed unknown"
	for _, n := range nics {
		if n.Name == r.Interface {
			if n.Loopback {
				speed = "loopback"
			} else {
				speed = n.Speed()
			}
		}
	}
	fmt.Fprintf(&b, " (%s; %s)", speed, r.Method)
	return b.String()
}
