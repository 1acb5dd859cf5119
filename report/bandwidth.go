package report

import (
	"fmt"

	"aimeter/bandwidth"
)

// bandwidthView is the "Bandwidth" section: the MLPerf datacenter
// bandwidth requirement against the NIC and the wire (bandwidth.json).
type bandwidthView struct {
	Anchor string
	Lead   string // the benchmark, throughput and data types, or the gap
	Table  table
	Notes  []string
}

// buildBandwidth lays out r; nil for nil.
func buildBandwidth(r *bandwidth.Report) *bandwidthView {
	if r == nil {
		return nil
	}
	v := &bandwidthView{}
	rate := func(x float64) string { return bandwidth.Rate(x) }
	if c := r.Check; c != nil {
		q := c.Requirement
		v.Lead = fmt.Sprintf("%s at %.4g samples/s, data types %s: ingress %s, egress %s.", q.Benchmark, q.Throughput, dtypeWords(q.DTypes), q.IngressFormula, q.EgressFormula)
		v.Table.Head = []string{"Direction", "Required", "NIC capacity", "Carried (mean)", "Carried (peak 1 s)", "Bytes a sample (wire / formula)", "NIC", "Wire", "Verdict"}
		for _, d := range []struct {
			name string
			c    bandwidth.DirectionCheck
		}{{"Ingress (to the SUT)", c.Ingress}, {"Egress (from the SUT)", c.Egress}} {
			req := rate(d.c.Required)
			per := fmt.Sprintf("%.0f / %d", d.c.Carried.BytesPerSample(), d.c.RequiredPerSample)
			if d.c.AboveZero {
				req, per = "> 0", fmt.Sprintf("%.0f / > 0", d.c.Carried.BytesPerSample())
			}
			nic := "unknown"
			if d.c.NICBytesPerSecond > 0 {
				nic = rate(d.c.NICBytesPerSecond)
			}
			verdict := "FAIL"
			if d.c.Pass {
				verdict = "pass"
			}
			v.Table.Rows = append(v.Table.Rows, []string{d.name, req, nic, rate(d.c.Carried.Mean), rate(d.c.Carried.Peak), per,
				string(d.c.NIC), string(d.c.Wire), verdict})
			if d.c.Note != "" {
				v.Notes = append(v.Notes, d.name+": "+d.c.Note+".")
			}
		}
	} else {
		v.Lead = "No requirement: " + r.Gap + "."
		v.Table.Head = []string{"Direction", "Carried (mean)", "Carried (peak 1 s)", "Bytes a sample"}
		for _, d := range []struct {
			name string
			c    bandwidth.Direction
		}{{"Ingress (to the SUT)", r.Carried.Ingress}, {"Egress (from the SUT)", r.Carried.Egress}} {
			v.Table.Rows = append(v.Table.Rows, []string{d.name, rate(d.c.Mean), rate(d.c.Peak), fmt.Sprintf("%.0f", d.c.BytesPerSample())})
		}
	}
	if in := r.Carried.Ingress; r.Compression != bandwidth.None && in.UncompressedBytes > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("Compression %s (%s): the requests put %d bytes on the wire for %d bytes of payload (%.1f%%); the QSL compressed each sample when it loaded it, untimed.",
			r.Compression, r.Codec, in.TotalBytes, in.UncompressedBytes, 100*float64(in.TotalBytes)/float64(in.UncompressedBytes)))
	}
	if !r.Carried.Measured {
		v.Notes = append(v.Notes, "The SUT reported no wire sizes: nothing carried was measured.")
	}
	return v
}

func dtypeWords(d bandwidth.DTypes) string {
	if d.Names != "" {
		return d.Names
	}
	return fmt.Sprintf("%d-byte", d.Input)
}
