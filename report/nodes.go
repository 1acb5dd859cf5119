package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"

	"aimeter/loadgen"
)

// Node is one node of a run dispatched over several servers (sut/dispatch):
// its number, as in loadgen.Record.Node, its name and its URL.
type Node struct {
	// Number is the node's number, from 1.
	Number int `json:"number"`
	// Name is the node's name (the server's own, or its endpoint's).
	Name string `json:"name"`
	// URL is where the node was reached; empty when unknown.
	URL string `json:"url,omitempty"`
}

// NodeRow is one node's share of the reported pass.
type NodeRow struct {
	Node
	// Samples is the number of samples issued to the node; OK, Failed and
	// Lost split them by status.
	Samples, OK, Failed, Lost uint64
	// P50, P90 and P99 are latency percentiles of the node's completed
	// samples (completion − scheduled time, ns; LoadGen's index
	// trunc(n × p) of the sorted latencies), -1 when none completed.
	P50, P90, P99 int64
	// SamplesPerSecond is the node's completed samples over the pass
	// duration.
	SamplesPerSecond float64
}

// NodeTable breaks the reported pass of res down by node, from its records:
// one row per node in nodes (even one that served nothing) and per other
// node number found in the records, in number order; samples that no node
// reported (lost before any answer) make a row of number 0. It returns nil
// when nodes is empty and no record names a node, as for every run that
// was not dispatched, so that such runs show no node table.
func NodeTable(res *loadgen.Result, nodes []Node) []NodeRow {
	if res == nil {
		return nil
	}
	pass := res.ReportedPass()
	if pass < 0 {
		return nil
	}
	if len(nodes) == 0 && !res.PassHasNodes(pass) {
		return nil
	}
	byNum := map[int]*nodeAcc{}
	get := func(n int) *nodeAcc {
		a := byNum[n]
		if a == nil {
			a = &nodeAcc{row: NodeRow{Node: Node{Number: n}}}
			byNum[n] = a
		}
		return a
	}
	for _, n := range nodes {
		get(n.Number).row.Node = n
	}
	for rec := range res.PassRecords(pass) {
		get(int(rec.Node)).add(rec)
	}
	seconds := float64(res.Passes[pass].EndNs) / 1e9
	rows := make([]NodeRow, 0, len(byNum))
	for _, a := range byNum {
		r := a.row
		r.P50, r.P90, r.P99 = -1, -1, -1
		if n := len(a.lats); n > 0 {
			slices.Sort(a.lats)
			at := func(p float64) int64 { return a.lats[min(int(float64(n)*p), n-1)] }
			r.P50, r.P90, r.P99 = at(.50), at(.90), at(.99)
		}
		if seconds > 0 {
			r.SamplesPerSecond = float64(r.OK) / seconds
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(x, y NodeRow) int { return x.Number - y.Number })
	return rows
}

// nodeAcc gathers one node's row and the latencies of its completed
// samples.
type nodeAcc struct {
	row  NodeRow
	lats []int64
}

// add counts rec in the row.
func (a *nodeAcc) add(rec loadgen.Record) {
	a.row.Samples++
	switch rec.Status {
	case loadgen.StatusOK:
		a.row.OK++
		a.lats = append(a.lats, rec.CompletedNs-rec.ScheduledNs)
	case loadgen.StatusError:
		a.row.Failed++
	case loadgen.StatusLost:
		a.row.Lost++
	}
}

// nodeLabel is how a row names its node.
func (r NodeRow) nodeLabel() string {
	switch {
	case r.Number == 0:
		return "(none)"
	case r.Name == "":
		return strconv.Itoa(r.Number)
	}
	return strconv.Itoa(r.Number) + " " + r.Name
}

// fmtLatency formats a latency for people, four significant digits
// ("215.1 ms"); "-" for none.
func fmtLatency(ns int64) string {
	if ns < 0 {
		return "-"
	}
	return fmtDur(ns)
}

// nodeHead is the head of the node table, on the console and in the page.
var nodeHead = []string{"Node", "Samples", "OK", "Failed", "Lost", "p50", "p90", "p99", "Samples/s"}

func (r NodeRow) cells() []string {
	return []string{r.nodeLabel(), fmtCount(r.Samples), fmtCount(r.OK), fmtCount(r.Failed), fmtCount(r.Lost),
		fmtLatency(r.P50), fmtLatency(r.P90), fmtLatency(r.P99), fmtSig(r.SamplesPerSecond, 4)}
}

// nodeTable is the page's table of rows (empty for none).
func nodeTable(rows []NodeRow) table {
	if len(rows) == 0 {
		return table{}
	}
	t := table{Head: nodeHead}
	for _, r := range rows {
		t.Rows = append(t.Rows, r.cells())
	}
	return t
}

// WriteNodeTable writes rows as an aligned text table, for the console
// summary of a run; nothing for no rows.
func WriteNodeTable(w io.Writer, rows []NodeRow) error {
	if len(rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, c)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintln(tw, "Per node (reported pass):")
	line(nodeHead)
	for _, r := range rows {
		line(r.cells())
	}
	return tw.Flush()
}
