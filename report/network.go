package report

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"strings"

	"aimeter/sysdesc"
	"aimeter/sysinfo"
)

// Network is the report's section "Network and system": the LoadGen
// node's network interfaces (Report.System's NICs) with the ones the
// run's traffic left by marked, and the system description the run
// carried (MLPerf's system architecture description; for the network
// division, the SUT's NICs, the components between, the fabric and the
// protocol, and the diagram).
type Network struct {
	// Desc is the run's division and system description; nil for none.
	Desc *sysdesc.Record
	// BandwidthFile names the bundle's bandwidth check ("bandwidth.json")
	// when it has one, shown as a pointer to it; "" for none.
	BandwidthFile string
}

// maxInlineDiagram is the largest image the report embeds; a larger one,
// or a PDF, is linked (the bundle holds it beside report.html).
const maxInlineDiagram = 4 << 20

// networkView is the section as the template shows it.
type networkView struct {
	Division  string
	Problems  []string
	NICs      table
	Routes    []string
	Bandwidth string
	System    []kv
	Nodes     table
	Parts     table
	Protocol  []kv
	Diagram   *diagramView
}

type diagramView struct {
	File, Name, SHA256, Text string
	// Src is the image as a data URI; empty for a linked file.
	Src template.URL
	PDF bool
}

// buildNetwork is the view of the section; nil when there is nothing to
// show (no NIC recorded, no description).
func buildNetwork(sys sysinfo.System, n *Network) *networkView {
	var rec *sysdesc.Record
	if n != nil {
		rec = n.Desc
	}
	if len(sys.NICs) == 0 && len(sys.Routes) == 0 && rec == nil {
		return nil
	}
	v := &networkView{}
	if n != nil && n.BandwidthFile != "" {
		v.Bandwidth = n.BandwidthFile
	}
	if rec != nil {
		v.Division = rec.Division
		v.Problems = rec.Problems()
	}
	traffic := map[string][]string{}
	for _, r := range sys.Routes {
		line := "to " + r.Target
		if r.Address != "" && !strings.HasPrefix(r.Target, r.Address) {
			line += " (" + r.Address + ")"
		}
		if r.Interface != "" {
			traffic[r.Interface] = append(traffic[r.Interface], r.Target)
			line += ": by " + r.Interface
			if r.Gateway != "" {
				line += " via " + r.Gateway
			}
			line += " (" + r.Method + ")"
		} else {
			line += ": interface unknown (" + r.Note + ")"
		}
		v.Routes = append(v.Routes, line)
	}
	if len(sys.NICs) > 0 {
		v.NICs.Head = []string{"Interface", "Run's traffic", "Speed", "Duplex", "MTU", "State", "Driver", "PCI address (id)", "NUMA node", "Addresses"}
		for _, nic := range sys.NICs {
			mark := ""
			if t := traffic[nic.Name]; len(t) > 0 {
				mark = "◀ to " + strings.Join(t, ", ")
			}
			pci := nic.PCIAddress
			if nic.PCIID != "" {
				pci += " (" + nic.PCIID + ")"
			}
			numa := ""
			if nic.NUMANode != nil {
				numa = fmt.Sprint(*nic.NUMANode)
			}
			driver := nic.Driver
			switch {
			case nic.Loopback:
				driver = "loopback"
			case nic.Virtual:
				driver = "virtual"
			}
			v.NICs.Rows = append(v.NICs.Rows, []string{nic.Name, mark, nic.Speed(), orUnknown(nic.Duplex), mtu(nic.MTU),
				nic.OperState, driver, strings.TrimSpace(pci), numa, strings.Join(nic.Addresses, " ")})
		}
	}
	if rec != nil && rec.Description != nil {
		describe(v, rec)
	}
	return v
}

func mtu(n int) string {
	if n <= 0 {
		return "unknown"
	}
	return fmt.Sprint(n)
}

// describe fills the view of the system description.
func describe(v *networkView, rec *sysdesc.Record) {
	d := rec.Description
	n, mbps := d.NICCount()
	v.System = []kv{{"System", d.SystemName}, {"SUT nodes", fmt.Sprint(d.NodeCount())},
		{"SUT NICs", fmt.Sprintf("%d, %s in all", n, fmtMbps(mbps))}, {"Fabric", sysdesc.FabricName(d.Fabric)}}
	if d.LoadGen != nil {
		v.System = append(v.System, kv{"LoadGen node", nodeNICs(*d.LoadGen)})
	}
	if d.BandwidthEvidence != "" {
		v.System = append(v.System, kv{"Bandwidth, NIC to memory", d.BandwidthEvidence})
	}
	if rec.Source != nil {
		v.System = append(v.System, kv{"Description file", rec.Source.Name + " (sha256 " + rec.Source.SHA256 + ")"})
	}
	if d.Notes != "" {
		v.System = append(v.System, kv{"Notes", d.Notes})
	}
	v.Nodes.Head = []string{"SUT node", "Count", "NICs", "Accelerators", "Data path, NIC to accelerators", "Software"}
	for _, node := range d.SUTNodes {
		count := 1
		if node.Count != nil {
			count = *node.Count
		}
		v.Nodes.Rows = append(v.Nodes.Rows, []string{node.Name, fmt.Sprint(count), nodeNICs(node), node.Accelerators, node.DataPath, node.Software})
	}
	if len(d.Components) > 0 {
		v.Parts.Head = []string{"Component", "Kind", "Model", "Ports", "Speed", "Configuration"}
		for _, c := range d.Components {
			v.Parts.Rows = append(v.Parts.Rows, []string{c.Name, strings.ReplaceAll(c.Kind, "_", " "), c.Model, fmt.Sprint(c.Ports), string(c.Speed), c.Configuration})
		}
	}
	p := d.Protocol
	v.Protocol = []kv{{"Layer 1, physical", p.Physical}, {"Layer 2, data link", p.DataLink}, {"Layer 3, network", p.Network}, {"Layer 4, transport", p.Transport}}
	if p.Application != "" {
		v.Protocol = append(v.Protocol, kv{"Above layer 4", p.Application})
	}
	if g := rec.Diagram; g != nil {
		dv := &diagramView{File: g.File, Name: g.Source.Name, SHA256: g.Source.SHA256, Text: d.DiagramText, PDF: g.MediaType == "application/pdf"}
		if !dv.PDF && len(g.Data) > 0 && len(g.Data) <= maxInlineDiagram {
			dv.Src = template.URL("data:" + g.MediaType + ";base64," + base64.StdEncoding.EncodeToString(g.Data))
		}
		v.Diagram = dv
	}
}

// nodeNICs is a node's NICs in one line: "2 × NVIDIA ConnectX-7, 200 Gb/s".
func nodeNICs(n sysdesc.Node) string {
	var parts []string
	for _, g := range n.NICs {
		parts = append(parts, fmt.Sprintf("%d × %s, %s", g.Count, g.Model, g.Speed))
	}
	return strings.Join(parts, "; ")
}

// fmtMbps is a bandwidth in Mb/s as Gb/s or Tb/s.
func fmtMbps(mbps float64) string {
	switch {
	case mbps >= 1e6:
		return fmt.Sprintf("%.4g Tb/s", mbps/1e6)
	case mbps >= 1e3:
		return fmt.Sprintf("%.4g Gb/s", mbps/1e3)
	}
	return fmt.Sprintf("%.4g Mb/s", mbps)
}
