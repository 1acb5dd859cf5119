package sysdesc

import (
	"fmt"
	"slices"
	"strings"

	"aimeter/sysinfo"
)

// MLPerfFile is the derived file of a network-division bundle that holds
// MLPerf's network-mode fields of a system description.
const MLPerfFile = "system_desc_network.json"

// MLPerfNetworkFields are the fields MLPerf's submission checker requires
// of a network-division system description
// (SYSTEM_DESC_REQUIRED_FIELDS_NETWORK_MODE), in its order.
var MLPerfNetworkFields = []string{"is_network", "network_type", "network_media", "network_rate", "nic_loadgen",
	"number_nic_loadgen", "net_software_stack_loadgen", "network_protocol", "number_connections", "nic_sut",
	"number_nic_sut", "net_software_stack_sut", "network_topology"}

// fabricNames are the fabrics as MLPerf's system descriptions write them.
var fabricNames = map[string]string{"ethernet": "Ethernet", "infiniband": "InfiniBand", "ieee802.11": "IEEE 802.11", "3gpp": "3GPP"}

// FabricName is a fabric as MLPerf's system descriptions write it
// ("Ethernet", "InfiniBand", "IEEE 802.11", "3GPP"); f itself when it is
// none of Fabrics.
func FabricName(f string) string {
	if n, ok := fabricNames[f]; ok {
		return n
	}
	return f
}

// MLPerfInput is what MLPerfFields takes beside the description: what the
// run detected and how it was configured.
type MLPerfInput struct {
	// NICs and Routes are the LoadGen host's interfaces and the routes of
	// the run's traffic (sysinfo.System's).
	NICs   []sysinfo.NIC
	Routes []sysinfo.Route
	// Version is aimeter's version; "" leaves it out.
	Version string
	// Connections is the most connections the client opened to one
	// server; 0 when unknown.
	Connections int
}

// MLPerfFields fills MLPerf's network-mode fields (MLPerfNetworkFields)
// from the description, the detected NICs and the run: the LoadGen
// node's NIC from the description's loadgen entry, else from the
// interfaces the traffic left by (name, driver, PCI id, speed). A field
// that nothing gives is "" (number_connections when unknown), for the
// submitter to fill; nil for a record without a description.
func (r *Record) MLPerfFields(in MLPerfInput) map[string]any {
	if r == nil || r.Description == nil {
		return nil
	}
	d := r.Description
	f := map[string]any{"is_network": r.Division == "network", "network_type": FabricName(d.Fabric), "network_media": d.Protocol.Physical}
	var rates []string
	for _, n := range d.SUTNodes {
		for _, g := range n.NICs {
			if s := string(g.Speed); !slices.Contains(rates, s) {
				rates = append(rates, s)
			}
		}
	}
	f["network_rate"] = strings.Join(rates, ", ")
	if lg := d.LoadGen; lg != nil && len(lg.NICs) > 0 {
		f["nic_loadgen"], f["number_nic_loadgen"] = groups(lg.NICs)
	} else {
		var names []string
		for _, rt := range in.Routes {
			for _, n := range in.NICs {
				if n.Name == rt.Interface && !slices.Contains(names, detected(n)) {
					names = append(names, detected(n))
				}
			}
		}
		f["nic_loadgen"], f["number_nic_loadgen"] = strings.Join(names, "; "), len(names)
	}
	stack := []string{}
	if in.Version != "" {
		stack = append(stack, "aimeter "+in.Version+" (the QDL)")
	}
	if d.Protocol.Application != "" {
		stack = append(stack, d.Protocol.Application)
	}
	if d.LoadGen != nil && d.LoadGen.Software != "" {
		stack = append(stack, d.LoadGen.Software)
	}
	f["net_software_stack_loadgen"] = strings.Join(stack, "; ")
	proto := d.Protocol.Transport + " over " + d.Protocol.Network + " over " + d.Protocol.DataLink
	if d.Protocol.Application != "" {
		proto = d.Protocol.Application + " over " + proto
	}
	f["network_protocol"] = proto
	f["number_connections"] = ""
	if in.Connections > 0 {
		f["number_connections"] = in.Connections
	}
	var sutNICs []NICGroup
	var software []string
	for _, n := range d.SUTNodes {
		for _, g := range n.NICs {
			g.Count *= n.count()
			sutNICs = append(sutNICs, g)
		}
		if n.Software != "" && !slices.Contains(software, n.Software) {
			software = append(software, n.Software)
		}
	}
	f["nic_sut"], f["number_nic_sut"] = groups(sutNICs)
	f["net_software_stack_sut"] = strings.Join(software, "; ")
	f["network_topology"] = topology(r)
	return f
}

// groups are NIC groups in one line, and their count.
func groups(gs []NICGroup) (string, int) {
	var parts []string
	n := 0
	for _, g := range gs {
		parts = append(parts, fmt.Sprintf("%d × %s, %s", g.Count, g.Model, g.Speed))
		n += g.Count
	}
	return strings.Join(parts, "; "), n
}

// detected names a detected NIC: "ens1f0np0 (mlx5_core, PCI 15B3:101D, 100 Gb/s)".
func detected(n sysinfo.NIC) string {
	var what []string
	for _, s := range []string{n.Driver, n.PCIID} {
		if s != "" {
			what = append(what, s)
		}
	}
	what = append(what, n.Speed())
	return n.Name + " (" + strings.Join(what, ", ") + ")"
}

// topology is the path from the LoadGen node to the SUT nodes in one
// line, with the diagram's file.
func topology(r *Record) string {
	d := r.Description
	hops := []string{"LoadGen node"}
	if d.LoadGen != nil && d.LoadGen.Name != "" {
		hops[0] = d.LoadGen.Name
	}
	for _, c := range d.Components {
		hops = append(hops, fmt.Sprintf("%s (%s, %d × %s)", c.Name, strings.ReplaceAll(c.Kind, "_", " "), c.Ports, c.Speed))
	}
	var nodes []string
	for _, n := range d.SUTNodes {
		nodes = append(nodes, fmt.Sprintf("%d × %s", n.count(), n.Name))
	}
	hops = append(hops, strings.Join(nodes, " and "))
	s := strings.Join(hops, " → ")
	if r.Diagram != nil {
		s += "; diagram " + r.Diagram.File
	}
	return s
}
