package report

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
)

// nodeSUT answers like a dispatcher over two nodes: odd indices on node 1
// after 1 ms, even ones on node 2 after 3 ms; index 4 fails on node 2 and
// index 7 is never answered (lost, no node).
type nodeSUT struct{}

func (nodeSUT) Name() string { return "Network SUT (2 nodes: a, b)" }
func (nodeSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, q := range samples {
		node, d := uint32(2), 3*time.Millisecond
		if q.Index%2 == 1 {
			node, d = 1, time.Millisecond
		}
		switch q.Index {
		case 7:
			continue
		case 4:
			time.AfterFunc(d, func() {
				r.Respond(loadgen.Response{ID: q.ID, Node: node, Err: loadgen.WithCategory("http", errors.New("503"))})
			})
			continue
		}
		time.AfterFunc(d, func() { r.Respond(loadgen.Response{ID: q.ID, Node: node}) })
	}
}
func (nodeSUT) FlushQueries() {}

func nodeRun(t *testing.T) *loadgen.Result {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.MinDurationMs = 0
	s.MinQueryCount = 8
	s.OfflineExpectedQPS = 1
	s.PerformanceIssueUnique = true
	return runFakeOpts(t, nodeSUT{}, &loadgentest.QSL{Total: 8}, s, &loadgen.Options{SampleTimeout: 10 * time.Millisecond})
}

func TestNodeTable(t *testing.T) {
	res := nodeRun(t)
	rows := NodeTable(res, []Node{{Number: 1, Name: "a", URL: "http://a"}, {Number: 2, Name: "b"}, {Number: 3, Name: "idle"}})
	want := []NodeRow{
		{Node: Node{0, "", ""}, Samples: 1, Lost: 1, P50: -1, P90: -1, P99: -1},
		{Node: Node{1, "a", "http://a"}, Samples: 3, OK: 3, P50: 1e6, P90: 1e6, P99: 1e6, SamplesPerSecond: 3 / 0.01},
		{Node: Node{2, "b", ""}, Samples: 4, OK: 3, Failed: 1, P50: 3e6, P90: 3e6, P99: 3e6, SamplesPerSecond: 3 / 0.01},
		{Node: Node{3, "idle", ""}, P50: -1, P90: -1, P99: -1},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows %+v, want %d", len(rows), rows, len(want))
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, rows[i], want[i])
		}
	}
	var buf bytes.Buffer
	if err := WriteNodeTable(&buf, rows); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Per node (reported pass):", "1 a ", "3.000 ms", "(none)"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("console table lacks %q:\n%s", s, buf.String())
		}
	}
	// The page shows the same table.
	buf.Reset()
	if err := Write(&buf, &Report{Runs: []RunSection{{Result: res, Nodes: []Node{{Number: 1, Name: "a"}}}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "<h3>Per node</h3>") || !strings.Contains(buf.String(), "<th>1 a</th>") {
		t.Error("report.html has no node table")
	}
}

// A run whose records name no node has no node table, with or without
// the names (the second case cannot happen in aimeter but must not crash).
func TestNodeTableAbsent(t *testing.T) {
	res := runFake(t, loadgentest.SyncSUT{}, &loadgentest.QSL{Total: 8}, func() loadgen.Settings {
		s := loadgen.DefaultSettings()
		s.Scenario, s.MinDurationMs, s.MinQueryCount = loadgen.Offline, 0, 8
		return s
	}())
	if rows := NodeTable(res, nil); rows != nil {
		t.Errorf("rows %+v for a run without nodes", rows)
	}
	if rows := NodeTable(nil, nil); rows != nil {
		t.Errorf("rows %+v for no result", rows)
	}
	var buf bytes.Buffer
	if err := WriteNodeTable(&buf, nil); err != nil || buf.Len() != 0 {
		t.Errorf("WriteNodeTable(nil) wrote %q, %v", buf.String(), err)
	}
}

// runFakeOpts is runFake with options.
func runFakeOpts(t *testing.T, sut loadgen.SUT, qsl loadgen.QSL, s loadgen.Settings, opts *loadgen.Options) *loadgen.Result {
	t.Helper()
	var res *loadgen.Result
	synctest.Test(t, func(t *testing.T) {
		var err error
		res, err = loadgen.Run(context.Background(), sut, qsl, s, opts)
		if err != nil && !errors.Is(err, loadgen.ErrInterrupted) {
			t.Logf("loadgen.Run: %v", err)
		}
	})
	return res
}
