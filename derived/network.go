package derived

import (
	"aimeter/bundle"
	"aimeter/sysdesc"
)

// NetworkFigures are result.json's "network": the interface each server's
// traffic left by, with its link speed, and the MLPerf division and
// system description the run declared (docs/network-division.md).
type NetworkFigures struct {
	// Division is the MLPerf division declared ("network"); "" for none.
	Division string `json:"division,omitempty"`
	// Routes are the servers' routes, one per server.
	Routes []NetworkRoute `json:"routes,omitempty"`
	// SystemName is the system description's system_name; "" for none.
	SystemName string `json:"system_name,omitempty"`
	// Diagram is the diagram's file in the bundle; "" for none.
	Diagram string `json:"diagram,omitempty"`
	// Problems are what a network-division result lacks
	// (sysdesc.Record.Problems), which aimeter check reports as errors.
	Problems []string `json:"problems,omitempty"`
}

// NetworkRoute is the way the traffic to one server left the LoadGen
// host.
type NetworkRoute struct {
	// Target is the server's host and port.
	Target string `json:"target"`
	// Interface is the interface the traffic left by; "" when unknown.
	Interface string `json:"interface,omitempty"`
	// SpeedMbps is its link speed in Mb/s; 0 when unknown (loopback, a
	// virtual interface, no link).
	SpeedMbps int64 `json:"speed_mbps,omitempty"`
	// Method is how the interface was found (sysinfo.RouteBy…), or why
	// it was not.
	Method string `json:"method,omitempty"`
}

// NetworkOf is result.json's "network" of b; nil for a run that reached
// no server and declared no division or description.
func NetworkOf(b *bundle.Bundle) *NetworkFigures {
	rec := sysdesc.Of(b)
	if len(b.System.Routes) == 0 && rec == nil {
		return nil
	}
	n := &NetworkFigures{}
	for _, r := range b.System.Routes {
		nr := NetworkRoute{Target: r.Target, Interface: r.Interface, Method: r.Method}
		if r.Interface == "" {
			nr.Method = r.Note
		}
		for _, nic := range b.System.NICs {
			if nic.Name == r.Interface {
				nr.SpeedMbps = nic.SpeedMbps
			}
		}
		n.Routes = append(n.Routes, nr)
	}
	if rec != nil {
		n.Division, n.Problems = rec.Division, rec.Problems()
		if rec.Description != nil {
			n.SystemName = rec.Description.SystemName
		}
		if rec.Diagram != nil {
			n.Diagram = rec.Diagram.File
		}
	}
	return n
}
