package console

import (
	"fmt"
	"io"

	"aimeter/bandwidth"
	"aimeter/benchmark"
)

// WriteBandwidth writes the run's MLPerf datacenter bandwidth check
// (derived.Set.Bandwidth, bandwidth.json): per direction the required
// bandwidth, the NIC's capacity and what the wire carried (mean and 1 s
// peak), with pass or fail, and what compression did. Nothing for a run
// that declared no benchmark of the table and compressed nothing.
func WriteBandwidth(w io.Writer, out *benchmark.Outcome) {
	if out.Derived == nil {
		return
	}
	r := out.Derived.Bandwidth()
	if r == nil {
		return
	}
	_, inTable := bandwidth.Lookup(r.Benchmark)
	if r.Check == nil && r.Compression == bandwidth.None && inTable != nil {
		return
	}
	if c := r.Check; c != nil {
		q := c.Requirement
		nic := "NIC speed unknown"
		if c.NIC.Known() {
			nic = fmt.Sprintf("NIC %s %s", c.NIC.Name, bandwidth.Rate(c.NIC.BytesPerSecond()))
		}
		fmt.Fprintf(w, "Bandwidth (%s at %.6g samples/s, %s; %s): %s\n", q.Benchmark, q.Throughput, dtypeText(q.DTypes), nic, passFail(c.Pass))
		for _, d := range []struct {
			name string
			c    bandwidth.DirectionCheck
		}{{"Ingress", c.Ingress}, {"Egress ", c.Egress}} {
			req := bandwidth.Rate(d.c.Required)
			if d.c.AboveZero {
				req = "> 0"
			}
			nicCap := "unknown"
			if d.c.NICBytesPerSecond > 0 {
				nicCap = bandwidth.Rate(d.c.NICBytesPerSecond)
			}
			fmt.Fprintf(w, "  %s : required %s, NIC %s, carried %s mean, %s peak (1 s) : %s\n", d.name, req, nicCap,
				bandwidth.Rate(d.c.Carried.Mean), bandwidth.Rate(d.c.Carried.Peak), passFail(d.c.Pass))
			if d.c.Note != "" {
				fmt.Fprintf(w, "    %s\n", d.c.Note)
			}
		}
	} else {
		fmt.Fprintf(w, "Bandwidth: no requirement (%s); carried ingress %s mean, %s peak; egress %s mean, %s peak\n", r.Gap,
			bandwidth.Rate(r.Carried.Ingress.Mean), bandwidth.Rate(r.Carried.Ingress.Peak), bandwidth.Rate(r.Carried.Egress.Mean), bandwidth.Rate(r.Carried.Egress.Peak))
	}
	if in := r.Carried.Ingress; r.Compression != bandwidth.None && in.UncompressedBytes > 0 {
		fmt.Fprintf(w, "  Compression %s (%s): %d bytes on the wire for %d bytes of payload (%.1f %%), compressed when loaded (untimed)\n",
			r.Compression, r.Codec, in.TotalBytes, in.UncompressedBytes, 100*float64(in.TotalBytes)/float64(in.UncompressedBytes))
	}
}

func dtypeText(d bandwidth.DTypes) string {
	if d.Names != "" {
		return d.Names
	}
	return fmt.Sprintf("%d-byte inputs", d.Input)
}
