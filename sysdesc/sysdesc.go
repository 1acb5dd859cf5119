// Package sysdesc reads, checks and stores the system description of an
// MLPerf result: what a benchmark client cannot detect about the system
// under test and the network between it and the load generator.
//
// MLPerf's datacenter rules (from 4.0) ask every submission for a system
// architecture description: the bandwidth of each NIC and their number,
// the data path from the NICs to the accelerators, and specifications or
// measurements showing that the path from the NIC to the memory holding
// LoadGen's data sustains the required bandwidth. The network division
// asks more: the network interface characteristics of the LoadGen node,
// of the SUT nodes and of every component between them (switches, load
// balancers), the fabric and protocol sufficient to determine OSI layers
// 1 to 4, and a system diagram. The LoadGen node's own interfaces are
// detected (package sysinfo); the rest is a Description, read from a JSON
// or YAML file in the spirit of MLPerf's system_desc JSON (Parse, Load),
// checked before the run with errors naming the field, and stored in the
// run bundle with its diagram (Part, Record). docs/network-division.md
// documents the schema.
package sysdesc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/goccy/go-yaml"
)

// Description is a system description: the file the user gives
// (aimeter run --system-desc). Field names are its JSON and YAML keys.
type Description struct {
	// SystemName names the system, as MLPerf's system_desc's
	// system_name. Required.
	SystemName string `json:"system_name"`
	// Division is the MLPerf division the description is for: "closed",
	// "open" or "network"; "" leaves it to the run (--division). A run
	// declared for another division is refused.
	Division string `json:"division,omitempty"`
	// LoadGen describes the LoadGen node beyond what is detected (its
	// NICs' models); optional.
	LoadGen *Node `json:"loadgen,omitempty"`
	// SUTNodes are the nodes of the system under test, each kind once
	// with its count. At least one.
	SUTNodes []Node `json:"sut_nodes"`
	// Components are the network elements between the LoadGen node and
	// the SUT nodes (switches, load balancers, routers); none for a point
	// to point link. MLPerf counts them as part of the SUT.
	Components []Component `json:"components,omitempty"`
	// Fabric is the interconnect between the LoadGen node and the SUT:
	// one of Fabrics (MLPerf's permitted fabric interconnects). Bus
	// interconnects (PCIe, CXL, NVLink, …) are refused. Required.
	Fabric string `json:"fabric"`
	// Protocol is the network stack, OSI layers 1 to 4 (and what runs
	// above them). Required.
	Protocol Protocol `json:"protocol"`
	// BandwidthEvidence gives the specifications or measurements showing
	// that the path from the NIC to the memory holding LoadGen's data
	// sustains the required bandwidth (MLPerf's datacenter rule); text.
	BandwidthEvidence string `json:"bandwidth_evidence,omitempty"`
	// Diagram is the system diagram's file (any image or PDF): a path
	// relative to the description's own file. Required for the network
	// division; Load reads it and the bundle carries it, hashed.
	Diagram string `json:"diagram,omitempty"`
	// DiagramText is the text that explains the diagram to a reader
	// (MLPerf: "accompanied by any text necessary").
	DiagramText string `json:"diagram_text,omitempty"`
	// Notes are free remarks.
	Notes string `json:"notes,omitempty"`
}

// Node is one kind of node: the LoadGen node, or SUT nodes alike.
type Node struct {
	// Name names the node (or the group of identical nodes). Required
	// for a SUT node.
	Name string `json:"name"`
	// Count is the number of identical nodes; 0 means 1 (a count written
	// as 0 is an error).
	Count *int `json:"count,omitempty"`
	// NICs are the node's network interfaces on the fabric, one entry per
	// kind. At least one for a SUT node.
	NICs []NICGroup `json:"nics,omitempty"`
	// Accelerators describes the node's accelerators, e.g. "8 × NVIDIA
	// H200 141 GB"; text.
	Accelerators string `json:"accelerators,omitempty"`
	// DataPath is the path of the data from the NICs to the accelerators
	// (or to the memory the SUT reads its inputs from), e.g. "NIC → PCIe
	// Gen5 switch → GPU memory (GPUDirect RDMA)". Required for a SUT node.
	DataPath string `json:"data_path,omitempty"`
	// Software is the software stack of the node (OS, drivers, server).
	Software string `json:"software,omitempty"`
}

// NICGroup is a number of identical network interfaces of a node.
type NICGroup struct {
	// Count is how many; at least 1.
	Count int `json:"count"`
	// Model is the NIC's model, e.g. "NVIDIA ConnectX-7". Required.
	Model string `json:"model"`
	// Speed is each interface's link speed with its unit, e.g. "200
	// Gb/s" (see ParseSpeed). Required.
	Speed Speed `json:"speed"`
	// Firmware, Driver: versions, for reproducibility; optional.
	Firmware string `json:"firmware,omitempty"`
	Driver   string `json:"driver,omitempty"`
}

// Component is a network element between the LoadGen node and the SUT
// nodes.
type Component struct {
	// Name names it. Required, unique among the components and nodes.
	Name string `json:"name"`
	// Kind is one of ComponentKinds. Required.
	Kind string `json:"kind"`
	// Model is the product, e.g. "NVIDIA Spectrum-4 SN5600".
	Model string `json:"model,omitempty"`
	// Ports is the number of ports in use on the path (or the device's);
	// at least 1. Required.
	Ports int `json:"ports"`
	// Speed is each port's speed with its unit. Required.
	Speed Speed `json:"speed"`
	// Configuration is what a reader needs to reproduce it (firmware,
	// settings, load-balancing policy).
	Configuration string `json:"configuration,omitempty"`
}

// Protocol is the network stack between the LoadGen node and the SUT:
// enough to determine OSI layers 1 to 4, as the network division asks.
type Protocol struct {
	// Physical is layer 1, e.g. "400GBASE-SR4", "HDR InfiniBand 4x".
	Physical string `json:"physical"`
	// DataLink is layer 2, e.g. "Ethernet (IEEE 802.3)", "InfiniBand
	// link layer".
	DataLink string `json:"data_link"`
	// Network is layer 3, e.g. "IPv4", "IPv6", "InfiniBand network
	// layer (GRH)".
	Network string `json:"network"`
	// Transport is layer 4, e.g. "TCP", "UDP", "RoCEv2 (IB transport over
	// UDP)".
	Transport string `json:"transport"`
	// Application is what runs above layer 4, e.g. "HTTP/1.1, KServe v2
	// REST" or "gRPC over HTTP/2"; optional (the run records its own
	// protocol).
	Application string `json:"application,omitempty"`
}

// Fabrics are MLPerf's permitted fabric interconnects for the network
// division: Ethernet, IEEE 802.11, InfiniBand and 3GPP.
var Fabrics = []string{"ethernet", "infiniband", "ieee802.11", "3gpp"}

// busInterconnects are MLPerf's examples of forbidden bus interconnects.
var busInterconnects = []string{"pcie", "pci express", "cxl", "ccix", "hypertransport", "nvlink", "qpi", "upi", "ici"}

// ComponentKinds are the kinds of network components.
var ComponentKinds = []string{"switch", "load_balancer", "router", "firewall", "nic_offload", "other"}

// Divisions are MLPerf Inference's divisions.
var Divisions = []string{"closed", "open", "network"}

// fabricWords are the words of a data-link layer that name each fabric,
// to find a protocol that contradicts the fabric.
var fabricWords = map[string][]string{
	"ethernet":   {"ethernet", "802.3", "roce"},
	"infiniband": {"infiniband"},
	"ieee802.11": {"802.11", "wi-fi", "wifi", "wlan"},
	"3gpp":       {"3gpp", "5g nr", "lte", "pdcp"},
}

// Speed is a link speed as written, with its unit: "100 Gb/s", "25GbE",
// "400 Gbit/s", "10000 Mb/s". ParseSpeed reads it.
type Speed string

// UnmarshalJSON takes a string, or a bare number (which Validate refuses
// for its missing unit, naming the field).
func (s *Speed) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err == nil {
		*s = Speed(str)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("speed: want a string such as \"100 Gb/s\", got %s", b)
	}
	*s = Speed(n.String())
	return nil
}

// speedUnits are the units ParseSpeed knows, in Mb/s, lower-case.
var speedUnits = map[string]float64{
	"mb/s": 1, "mbit/s": 1, "mbps": 1, "mbe": 1,
	"gb/s": 1e3, "gbit/s": 1e3, "gbps": 1e3, "gbe": 1e3,
	"tb/s": 1e6, "tbit/s": 1e6, "tbps": 1e6,
}

// ParseSpeed reads a link speed, "<number> <unit>" with or without a
// space: units Mb/s, Mbit/s, Mbps, Gb/s, Gbit/s, Gbps, GbE, Tb/s, Tbit/s,
// Tbps (any case; bits, never bytes). It returns megabits per second.
func ParseSpeed(s string) (float64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if t == "" {
		return 0, errors.New("missing")
	}
	if i == 0 {
		return 0, fmt.Errorf("%q: no number (write \"100 Gb/s\")", s)
	}
	if i < 0 {
		return 0, fmt.Errorf("%q: no unit (write \"%s Gb/s\" or \"%s Mb/s\")", s, t, t)
	}
	v, err := strconv.ParseFloat(t[:i], 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: %q is not a positive number", s, t[:i])
	}
	unit := strings.TrimSpace(t[i:])
	mult, ok := speedUnits[strings.ToLower(unit)]
	if strings.HasSuffix(unit, "B/s") || strings.HasSuffix(unit, "Bps") {
		return 0, fmt.Errorf("%q: unit %q is bytes; a link speed is in bits (Gb/s)", s, unit)
	}
	if !ok {
		return 0, fmt.Errorf("%q: unknown unit %q (want Mb/s, Gb/s, Tb/s, Mbps, Gbps, GbE, …)", s, unit)
	}
	return v * mult, nil
}

// Mbps is the speed in megabits per second; 0 when it does not parse.
func (s Speed) Mbps() float64 { v, _ := ParseSpeed(string(s)); return v }

// Parse decodes a description from JSON or YAML (JSON is YAML), refusing
// unknown fields, and validates it (Validate). Errors name the field by
// its path ("sut_nodes[0].nics[1].speed").
func Parse(data []byte) (*Description, error) {
	var d Description
	dec := yaml.NewDecoder(bytes.NewReader(data), yaml.DisallowUnknownField(), yaml.UseJSONUnmarshaler())
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%s", strings.TrimSpace(yaml.FormatError(err, false, true)))
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return &d, nil
}

// FieldError is a field of a description that is missing, malformed or
// contradicts another.
type FieldError struct {
	// Field is the field's path, e.g. "protocol.transport".
	Field string
	// Msg says what is wrong.
	Msg string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Validate checks that every required field is there, that the values
// are well formed (counts at least 1, speeds with a unit, a permitted
// fabric, a known kind) and that none contradicts another (a data-link
// layer of another fabric than Fabric, two parts with one name). It
// returns the first problem as a *FieldError naming the field.
func (d *Description) Validate() error {
	if strings.TrimSpace(d.SystemName) == "" {
		return fieldErr("system_name", "missing")
	}
	if d.Division != "" && !slices.Contains(Divisions, d.Division) {
		return fieldErr("division", "%q: want one of %s", d.Division, strings.Join(Divisions, ", "))
	}
	names := map[string]string{} // name → the field that gave it
	if d.LoadGen != nil {
		if err := d.LoadGen.validate("loadgen", false); err != nil {
			return err
		}
	}
	if len(d.SUTNodes) == 0 {
		return fieldErr("sut_nodes", "missing: describe at least one SUT node (its NICs and the data path to its accelerators)")
	}
	for i := range d.SUTNodes {
		n := &d.SUTNodes[i]
		path := fmt.Sprintf("sut_nodes[%d]", i)
		if err := n.validate(path, true); err != nil {
			return err
		}
		if prev, dup := names[n.Name]; dup {
			return fieldErr(path+".name", "%q is also %s's name: each part of the system needs its own", n.Name, prev)
		}
		names[n.Name] = path
	}
	for i := range d.Components {
		c := &d.Components[i]
		path := fmt.Sprintf("components[%d]", i)
		if err := c.validate(path); err != nil {
			return err
		}
		if prev, dup := names[c.Name]; dup {
			return fieldErr(path+".name", "%q is also %s's name: each part of the system needs its own", c.Name, prev)
		}
		names[c.Name] = path
	}
	if err := d.validateFabric(); err != nil {
		return err
	}
	return d.Protocol.validate(d.Fabric)
}

func (n *Node) validate(path string, sut bool) error {
	if sut && strings.TrimSpace(n.Name) == "" {
		return fieldErr(path+".name", "missing")
	}
	if n.Count != nil && *n.Count < 1 {
		return fieldErr(path+".count", "%d: a node count is at least 1 (leave it out for one node)", *n.Count)
	}
	if sut && len(n.NICs) == 0 {
		return fieldErr(path+".nics", "missing: list the node's NICs on the fabric (count, model, speed)")
	}
	for j := range n.NICs {
		g := &n.NICs[j]
		np := fmt.Sprintf("%s.nics[%d]", path, j)
		if g.Count < 1 {
			return fieldErr(np+".count", "%d: a NIC count is at least 1", g.Count)
		}
		if strings.TrimSpace(g.Model) == "" {
			return fieldErr(np+".model", "missing")
		}
		if _, err := ParseSpeed(string(g.Speed)); err != nil {
			return fieldErr(np+".speed", "%v", err)
		}
	}
	if sut && strings.TrimSpace(n.DataPath) == "" {
		return fieldErr(path+".data_path", "missing: describe the path from the NICs to the accelerators (MLPerf's system architecture description)")
	}
	return nil
}

func (c *Component) validate(path string) error {
	if strings.TrimSpace(c.Name) == "" {
		return fieldErr(path+".name", "missing")
	}
	if !slices.Contains(ComponentKinds, c.Kind) {
		return fieldErr(path+".kind", "%q: want one of %s", c.Kind, strings.Join(ComponentKinds, ", "))
	}
	if c.Ports < 1 {
		return fieldErr(path+".ports", "%d: a component on the path has at least 1 port", c.Ports)
	}
	if _, err := ParseSpeed(string(c.Speed)); err != nil {
		return fieldErr(path+".speed", "%v", err)
	}
	return nil
}

func (d *Description) validateFabric() error {
	f := strings.ToLower(strings.TrimSpace(d.Fabric))
	switch {
	case f == "":
		return fieldErr("fabric", "missing: one of %s", strings.Join(Fabrics, ", "))
	case slices.Contains(Fabrics, f):
		d.Fabric = f
		return nil
	}
	tokens := strings.FieldsFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, b := range busInterconnects {
		if strings.Contains(f, b) && strings.Contains(b, " ") || slices.ContainsFunc(tokens, func(t string) bool { return strings.HasPrefix(t, b) }) {
			return fieldErr("fabric", "%q is a bus interconnect, which MLPerf's network division forbids; the permitted fabrics are %s", d.Fabric, strings.Join(Fabrics, ", "))
		}
	}
	return fieldErr("fabric", "%q: want one of %s (MLPerf's permitted fabric interconnects; any other needs the Inference WG's clearance)", d.Fabric, strings.Join(Fabrics, ", "))
}

func (p *Protocol) validate(fabric string) error {
	for _, l := range []struct{ field, value, layer string }{
		{"physical", p.Physical, "OSI layer 1"},
		{"data_link", p.DataLink, "OSI layer 2"},
		{"network", p.Network, "OSI layer 3"},
		{"transport", p.Transport, "OSI layer 4"},
	} {
		if strings.TrimSpace(l.value) == "" {
			return fieldErr("protocol."+l.field, "missing: %s (MLPerf's network division asks for enough to determine OSI layers 1 to 4)", l.layer)
		}
	}
	dl := strings.ToLower(p.DataLink)
	own := slices.ContainsFunc(fabricWords[fabric], func(w string) bool { return strings.Contains(dl, w) })
	for _, other := range Fabrics {
		if other == fabric || own {
			continue
		}
		for _, w := range fabricWords[other] {
			if strings.Contains(dl, w) {
				return fieldErr("protocol.data_link", "%q names the %s link layer, but fabric is %s", p.DataLink, other, fabric)
			}
		}
	}
	return nil
}

// NodeCount is the number of SUT nodes, counting each group's Count.
func (d *Description) NodeCount() int {
	n := 0
	for _, s := range d.SUTNodes {
		n += s.count()
	}
	return n
}

func (n Node) count() int {
	if n.Count == nil {
		return 1
	}
	return *n.Count
}

// NICCount is the number of the SUT's NICs over every node, and their
// total bandwidth in Mb/s.
func (d *Description) NICCount() (count int, totalMbps float64) {
	for _, s := range d.SUTNodes {
		for _, g := range s.NICs {
			count += s.count() * g.Count
			totalMbps += float64(s.count()*g.Count) * g.Speed.Mbps()
		}
	}
	return count, totalMbps
}
