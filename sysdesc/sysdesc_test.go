package sysdesc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
)

const example = "../examples/system-desc.yaml"

// The example of docs/network-division.md loads whole: every field, the
// speeds in Mb/s, the counts over nodes, and its SVG diagram hashed.
func TestLoadExample(t *testing.T) {
	rec, err := Load(example)
	if err != nil {
		t.Fatal(err)
	}
	d := rec.Description
	if d.SystemName != "Example two-node inference cluster" || rec.Division != "network" || d.Fabric != "ethernet" ||
		d.Protocol.Transport != "TCP" || len(d.Components) != 2 || d.LoadGen == nil {
		t.Errorf("description: %+v", d)
	}
	if n, mbps := d.NICCount(); n != 4 || mbps != 800000 {
		t.Errorf("NICCount = %d, %v Mb/s; want 2 nodes × 2 NICs × 200 Gb/s", n, mbps)
	}
	if d.NodeCount() != 2 {
		t.Errorf("NodeCount = %d", d.NodeCount())
	}
	svg, _ := os.ReadFile("../examples/system-diagram.svg")
	g := rec.Diagram
	if g == nil || g.File != "system_diagram.svg" || g.MediaType != "image/svg+xml" || !bytes.Equal(g.Data, svg) ||
		g.Source.Name != "system-diagram.svg" || g.Source.Bytes != int64(len(svg)) || len(g.Source.SHA256) != 64 {
		t.Errorf("diagram: %+v", g)
	}
	if rec.Source == nil || rec.Source.Name != "system-desc.yaml" {
		t.Errorf("source: %+v", rec.Source)
	}
	if p := rec.Problems(); p != nil {
		t.Errorf("problems of a whole description: %v", p)
	}
}

// Bad descriptions: one error, naming the field, for each (a reason per
// row). Each row edits the valid example.
func TestValidateNamesTheField(t *testing.T) {
	base, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		why, old, new, field, msg string
	}{
		{"a protocol stack without layer 4", "  transport: TCP\n", "", "protocol.transport", "OSI layer 4"},
		{"no layer 1", "  physical: 400GBASE-SR4 and 200GBASE-SR4, multimode fibre\n", "", "protocol.physical", "OSI layer 1"},
		{"a NIC count of 0", "    nics:\n      - count: 2\n", "    nics:\n      - count: 0\n", "sut_nodes[0].nics[0].count", "at least 1"},
		{"a node count of 0", "    count: 2\n", "    count: 0\n", "sut_nodes[0].count", "at least 1"},
		{"a speed in an unknown unit", "        speed: 200 Gb/s\n", "        speed: 200 Gbpz\n", "sut_nodes[0].nics[0].speed", `unknown unit "Gbpz"`},
		{"a speed in bytes", "        speed: 200 Gb/s\n", "        speed: 25 GB/s\n", "sut_nodes[0].nics[0].speed", "bytes"},
		{"a speed without a unit", "        speed: 200 Gb/s\n", "        speed: 200\n", "sut_nodes[0].nics[0].speed", "no unit"},
		{"a component's speed missing", "    speed: 400 Gb/s\n    configuration", "    configuration", "components[0].speed", "missing"},
		{"a NIC without a model", "        model: NVIDIA ConnectX-7 (MCX755106AS)\n", "", "sut_nodes[0].nics[0].model", "missing"},
		{"no data path", "    data_path: >-\n", "    notes_path: >-\n", "", "unknown field"},
		{"a component kind unknown", "    kind: switch\n", "    kind: hub\n", "components[0].kind", `"hub"`},
		{"a component with no ports", "    ports: 5\n", "    ports: 0\n", "components[0].ports", "at least 1"},
		{"two parts with one name", "  - name: front load balancer\n", "  - name: leaf switch\n", "components[1].name", "components[0]"},
		{"a bus interconnect as the fabric", "fabric: ethernet\n", "fabric: PCIe Gen5\n", "fabric", "bus interconnect"},
		{"NVLink as the fabric", "fabric: ethernet\n", "fabric: NVLink 4\n", "fabric", "bus interconnect"},
		{"an unlisted fabric", "fabric: ethernet\n", "fabric: omni-path\n", "fabric", "permitted"},
		{"a data link of another fabric than the fabric", "fabric: ethernet\n", "fabric: infiniband\n", "protocol.data_link", "names the ethernet link layer, but fabric is infiniband"},
		{"no SUT node", "sut_nodes:\n  - name: gpu-node\n", "sut_nodes: []\nx:\n  - name: gpu-node\n", "", "unknown field"},
		{"an unknown division", "division: network\n", "division: edge\n", "division", "closed, open, network"},
		{"no system name", "system_name: Example two-node inference cluster\n", "", "system_name", "missing"},
		{"a misspelt key", "fabric: ethernet\n", "fabrik: ethernet\n", "", "unknown field"},
	} {
		data := strings.Replace(string(base), tc.old, tc.new, 1)
		if data == string(base) {
			t.Fatalf("%s: %q is not in the example", tc.why, tc.old)
		}
		_, err := Parse([]byte(data))
		if err == nil {
			t.Errorf("%s: no error", tc.why)
			continue
		}
		var fe *FieldError
		if tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field) {
			t.Errorf("%s: %v, want an error naming %s", tc.why, err, tc.field)
		}
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want it to say %q", tc.why, err, tc.msg)
		}
	}
	// Fields the YAML does not reach.
	d, err := Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	d.SUTNodes[0].DataPath = " "
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "sut_nodes[0].data_path: missing") {
		t.Errorf("no data path: %v", err)
	}
	d.SUTNodes = nil
	if err := d.Validate(); err == nil || !strings.HasPrefix(err.Error(), "sut_nodes: missing") {
		t.Errorf("no SUT node: %v", err)
	}
}

// Speeds in every unit, and what is refused.
func TestParseSpeed(t *testing.T) {
	for _, tc := range []struct {
		in   string
		mbps float64
		ok   bool
	}{
		{"100 Gb/s", 100000, true},
		{"25GbE", 25000, true},
		{"2.5 Gbps", 2500, true},
		{"400 gbit/s", 400000, true},
		{"10000 Mb/s", 10000, true},
		{"1.6 Tb/s", 1.6e6, true},
		{"100", 0, false},
		{"Gb/s", 0, false},
		{"100 GB/s", 0, false},
		{"-5 Gb/s", 0, false},
		{"100 furlongs", 0, false},
		{"", 0, false},
	} {
		got, err := ParseSpeed(tc.in)
		if (err == nil) != tc.ok || got != tc.mbps {
			t.Errorf("ParseSpeed(%q) = %v, %v", tc.in, got, err)
		}
	}
}

// Load: the diagram must exist and be an image or PDF; a network-division
// description needs one; a declared division must agree with the file's.
func TestLoadDiagramAndDivision(t *testing.T) {
	base, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("notes.txt", []byte("just some words"))
	write("d.pdf", []byte("%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n"))
	write("d.png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	for _, tc := range []struct{ diagram, want, errText string }{
		{"d.pdf", "system_diagram.pdf", ""},
		{"d.png", "system_diagram.png", ""},
		{"notes.txt", "", "diagram: notes.txt: its content is text/plain"},
		{"missing.png", "", "diagram: open"},
	} {
		p := write("desc.yaml", bytes.Replace(base, []byte("diagram: system-diagram.svg"), []byte("diagram: "+tc.diagram), 1))
		rec, err := Load(p)
		switch {
		case tc.errText == "" && (err != nil || rec.Diagram.File != tc.want):
			t.Errorf("%s: %+v, %v", tc.diagram, rec, err)
		case tc.errText != "" && (err == nil || !strings.Contains(err.Error(), tc.errText)):
			t.Errorf("%s: %v, want %q", tc.diagram, err, tc.errText)
		}
	}
	p := write("desc.yaml", bytes.Replace(base, []byte("diagram: system-diagram.svg\n"), nil, 1))
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "diagram: missing: the network division") {
		t.Errorf("a network description without a diagram: %v", err)
	}
	p = write("desc.yaml", bytes.Replace(bytes.Replace(base, []byte("diagram: system-diagram.svg\n"), nil, 1), []byte("division: network\n"), nil, 1))
	rec, err := Load(p)
	if err != nil {
		t.Fatalf("a description for no division without a diagram: %v", err)
	}
	if err := rec.Declare("network"); err == nil || !strings.Contains(err.Error(), "diagram: missing") {
		t.Errorf("declared network without a diagram: %v", err)
	}
	rec, err = Load(example)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Declare("closed"); err == nil || !strings.Contains(err.Error(), "division: the description is for the network division, the run is declared for the closed division") {
		t.Errorf("contradicting divisions: %v", err)
	}
	if err := rec.Declare("network"); err != nil || rec.Division != "network" {
		t.Errorf("agreeing divisions: %v", err)
	}
	if p := (&Record{Division: "network"}).Problems(); len(p) != 2 {
		t.Errorf("a bare network record's problems: %v", p)
	}
	if p := (&Record{Division: "closed"}).Problems(); p != nil {
		t.Errorf("a closed record's problems: %v", p)
	}
}

// The record round-trips through a bundle written and read: system_desc.json
// and the diagram's file, covered by the manifest; a diagram that changed
// after the run is an error naming it.
func TestPartInBundle(t *testing.T) {
	rec, err := Load(example)
	if err != nil {
		t.Fatal(err)
	}
	s := loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)
	res, err := loadgen.Run(context.Background(), &loadgentest.StagedSUT{}, &loadgentest.QSL{Total: 16}, s, &loadgen.Options{SpinWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := &bundle.Bundle{Result: res, Version: "test", NoReport: true}
	Set(b, rec)
	if err := bundle.Write(dir, b, nil); err != nil {
		t.Fatal(err)
	}
	back, err := bundle.ReadWith(dir, bundle.ReadOptions{Parts: []bundle.Part{Part}})
	if err != nil {
		t.Fatal(err)
	}
	got := Of(back)
	if got == nil || got.Division != "network" || got.Description.SystemName != rec.Description.SystemName ||
		!bytes.Equal(got.Diagram.Data, rec.Diagram.Data) {
		t.Fatalf("read back: %+v", got)
	}
	m := back.Manifest
	if m == nil {
		t.Fatal("no manifest")
	}
	found := false
	for _, f := range m.Files {
		found = found || f.Name == "system_diagram.svg" && f.SHA256 == rec.Diagram.Source.SHA256
	}
	if !found {
		t.Errorf("the manifest does not hash the diagram: %+v", m.Files)
	}
	// A diagram edited after the run, with the manifest mended too: the
	// record's own digest still catches it.
	if err := os.WriteFile(filepath.Join(dir, "system_diagram.svg"), []byte("<svg/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	b2, err := bundle.ReadWith(dir, bundle.ReadOptions{SkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Part.Get(b2); err == nil || !strings.Contains(err.Error(), "system_diagram.svg") {
		t.Errorf("an edited diagram: %v", err)
	}
	// Set(nil) removes it.
	Set(b, nil)
	if Part.Has(b) {
		t.Error("Set(nil) left the part")
	}
}

// FuzzParse: the parser never panics, and what it accepts is valid and
// survives the bundle's JSON round trip.
func FuzzParse(f *testing.F) {
	base, err := os.ReadFile(example)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(base)
	f.Add([]byte(`{"system_name": "x", "sut_nodes": [{"name": "n", "nics": [{"count": 1, "model": "m", "speed": "1 Gb/s"}], "data_path": "p"}], "fabric": "ethernet", "protocol": {"physical": "a", "data_link": "b", "network": "c", "transport": "d"}}`))
	f.Add([]byte("speed: 100\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(data)
		if err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("Parse accepted what Validate refuses: %v", err)
		}
		var buf bytes.Buffer
		if err := bundle.WriteJSON(&buf, &Record{Description: d}); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadRecord(&buf); err != nil {
			t.Fatalf("the record of an accepted description does not read back: %v", err)
		}
	})
}

// FuzzReadRecord: system_desc.json's reader never panics, and a record it
// accepts has a valid description and a known division.
func FuzzReadRecord(f *testing.F) {
	rec, err := Load(example)
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := bundle.WriteJSON(&buf, rec); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"division": "network"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ReadRecord(bytes.NewReader(data))
		if err != nil {
			return
		}
		if r.Description != nil {
			if err := r.Description.Validate(); err != nil {
				t.Fatalf("accepted an invalid description: %v", err)
			}
		}
		if r.Division != "" && r.Division != "closed" && r.Division != "open" && r.Division != "network" {
			t.Fatalf("accepted division %q", r.Division)
		}
	})
}
