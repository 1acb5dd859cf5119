package derived

import (
	"aimeter/bundle"
	"aimeter/loadgen/loadgentest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"aimeter/loadgen"
	"aimeter/sut/null"
)

// TestNodesRoundTrip: the node names of a dispatched run go to run.json,
// come back with bundle.Read, and give report.html a per-node table that the
// bundle read back regenerates byte for byte; a run without them writes no
// "nodes" key and shows no table.
func TestNodesRoundTrip(t *testing.T) {
	nodes := []bundle.Node{{Number: 1, Name: "alpha", URL: "http://10.0.0.1:8000"}, {Number: 2, Name: "beta"}, {Number: 3, Name: "gamma"}}
	for _, tc := range []struct {
		name  string
		sut   loadgen.SUT
		nodes []bundle.Node
		table bool
	}{
		{"dispatched run with names", &loadgentest.WireSUT{}, nodes, true},
		{"records name nodes, no names stored (table by number)", &loadgentest.WireSUT{}, nil, true},
		{"plain run: no nodes anywhere", null.SUT{}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := runBundle(t, tc.sut, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
			b.Nodes = tc.nodes
			dir := t.TempDir()
			if err := Write(dir, b); err != nil {
				t.Fatal(err)
			}
			back, err := bundle.Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Nodes, tc.nodes) {
				t.Errorf("nodes %+v read back as %+v", tc.nodes, back.Nodes)
			}
			if meta := string(readAll(t, filepath.Join(dir, bundle.RunFile))); (tc.nodes != nil) != strings.Contains(meta, `"nodes"`) {
				t.Errorf("run.json:\n%s", meta)
			}
			html := string(readAll(t, filepath.Join(dir, bundle.ReportFile)))
			if tc.table != strings.Contains(html, "<h3>Per node</h3>") {
				t.Errorf("report.html has a node table: %v, want %v", !tc.table, tc.table)
			}
			if tc.nodes != nil && !strings.Contains(html, "<th>2 beta</th>") {
				t.Error("report.html does not name node 2")
			}
			regen := t.TempDir()
			if _, err := Regenerate(regen, back); err != nil {
				t.Fatal(err)
			}
			compareFiles(t, filepath.Join(dir, bundle.ReportFile), filepath.Join(regen, bundle.ReportFile))
		})
	}
}

// TestConcurrencyRegenerates: a fixed-concurrency run keeps its mode in
// settings.json, says so in its summary and report, and regenerates byte
// for byte.
func TestConcurrencyRegenerates(t *testing.T) {
	s := loadgentest.SmallSettings(loadgen.SingleStream, loadgen.PerformanceOnly)
	s.Concurrency = 4
	sut := null.NewAsync()
	defer sut.Close()
	b := runBundle(t, sut, s)
	dir := t.TempDir()
	if err := Write(dir, b); err != nil {
		t.Fatal(err)
	}
	back, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Result.Requested.Concurrency != 4 || back.Result.Effective.Concurrency != 4 {
		t.Errorf("concurrency read back as %d requested, %d effective", back.Result.Requested.Concurrency, back.Result.Effective.Concurrency)
	}
	if !strings.Contains(string(readAll(t, filepath.Join(dir, bundle.SummaryFile))), "aimeter mode : fixed concurrency 4") {
		t.Error("the summary does not name the aimeter mode")
	}
	if !strings.Contains(string(readAll(t, filepath.Join(dir, bundle.DetailFile))), `"key": "requested_aimeter_fixed_concurrency", "value": 4`) {
		t.Error("the detail log does not name the aimeter mode")
	}
	if !strings.Contains(string(readAll(t, filepath.Join(dir, bundle.ReportFile))), "fixed concurrency 4 (aimeter mode") {
		t.Error("report.html does not name the aimeter mode")
	}
	regen := t.TempDir()
	names, err := Regenerate(regen, back)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		compareFiles(t, filepath.Join(dir, name), filepath.Join(regen, name))
	}
}
