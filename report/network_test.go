package report

import (
	"bytes"
	"strings"
	"testing"

	"aimeter/sysdesc"
	"aimeter/sysinfo"
)

// The section "Network and system": the LoadGen node's interfaces with
// the one the traffic left by marked, an unknown speed shown as unknown
// with its reason, the route, the system description (nodes, components,
// layers 1 to 4) and the diagram embedded and hashed; a bare network
// declaration's problems; no section for a report with neither NICs nor a
// description.
func TestNetworkSection(t *testing.T) {
	rec, err := sysdesc.Load("../examples/system-desc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	one := 1
	sys := fixedSystem
	sys.NICs = []sysinfo.NIC{
		{Name: "ens1f0np0", SpeedMbps: 100000, Duplex: "full", MTU: 9000, OperState: "up", Driver: "mlx5_core",
			PCIAddress: "0000:3b:00.0", PCIID: "15B3:101D", NUMANode: &one, Addresses: []string{"10.10.0.7/16"}},
		{Name: "eth0", SpeedNote: "the kernel reports -1: no link, or a device that does not know its speed", MTU: 1400, OperState: "up", Driver: "virtio_net"},
		{Name: "lo", MTU: 65536, OperState: "unknown", Loopback: true, Virtual: true},
	}
	sys.Routes = []sysinfo.Route{{Target: "10.10.9.9:8000", Address: "10.10.9.9", Interface: "ens1f0np0", Method: sysinfo.RouteByTable}}
	render := func(r *Report) string {
		t.Helper()
		var buf bytes.Buffer
		if err := Write(&buf, r); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	r := testReport(t)
	r.Runs = r.Runs[:1]
	r.System = sys
	r.Network = &Network{Desc: rec, BandwidthFile: "bandwidth.json"}
	page := render(r)
	for _, want := range []string{
		`<h2>Network and system <span class="badge neutral">MLPerf network division</span></h2>`,
		"<tr><th>ens1f0np0</th><td>◀ to 10.10.9.9:8000</td><td>100 Gb/s</td><td>full</td><td>9000</td><td>up</td><td>mlx5_core</td><td>0000:3b:00.0 (15B3:101D)</td><td>1</td><td>10.10.0.7/16</td></tr>",
		"<tr><th>eth0</th><td></td><td>unknown (the kernel reports -1: no link, or a device that does not know its speed)</td><td>unknown</td>",
		"<th>lo</th><td></td><td>unknown</td><td>unknown</td><td>65536</td><td>unknown</td><td>loopback</td>",
		"to 10.10.9.9:8000: by ens1f0np0 (routing table)",
		"The bandwidth check is in bandwidth.json",
		"<tr><th>SUT NICs</th><td>4, 800 Gb/s in all</td></tr>",
		"<tr><th>Fabric</th><td>Ethernet</td></tr>",
		"<h4>SUT nodes</h4>",
		"<tr><th>gpu-node</th><td>2</td><td>2 × NVIDIA ConnectX-7 (MCX755106AS), 200 Gb/s</td>",
		"<tr><th>leaf switch</th><td>switch</td><td>NVIDIA Spectrum-4 SN5600</td><td>5</td><td>400 Gb/s</td>",
		"<tr><th>front load balancer</th><td>load balancer</td>",
		"<tr><th>Layer 4, transport</th><td>TCP</td></tr>",
		`<img src="data:image/svg&#43;xml;base64,`,
		"system-diagram.svg, sha256 " + rec.Diagram.Source.SHA256,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// A network declaration without a description: its problems, no
	// description tables.
	r.Network = &Network{Desc: &sysdesc.Record{Division: "network"}}
	page = render(r)
	if !strings.Contains(page, "a network-division result without a system description") || strings.Contains(page, "<h3>System description</h3>") {
		t.Error("a bare network declaration: problems missing or a description shown")
	}
	// A PDF diagram is linked, not embedded.
	pdf, err := sysdesc.NewDiagram("topology.pdf", []byte("%PDF-1.7\n%%EOF\n"))
	if err != nil {
		t.Fatal(err)
	}
	withPDF := *rec
	withPDF.Diagram = pdf
	r.Network = &Network{Desc: &withPDF}
	if page = render(r); !strings.Contains(page, `<a href="system_diagram.pdf">system_diagram.pdf</a> (PDF)`) {
		t.Error("a PDF diagram is not linked")
	}
	// Neither NICs nor a description: no section.
	r.System, r.Network = fixedSystem, nil
	if page = render(r); strings.Contains(page, `id="network"`) {
		t.Error("a section with nothing to show")
	}
}
