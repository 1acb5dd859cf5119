package bandwidth

import (
	"iter"
	"slices"

	"aimeter/loadgen"
)

// Window is the length of the windows of the peak rate: 1 s.
const Window int64 = 1e9

// Direction is what the wire carried one way over a run.
type Direction struct {
	// TotalBytes is the sum of the samples' wire sizes that way.
	TotalBytes int64 `json:"total_bytes"`
	// Samples counts the samples that reported a size that way.
	Samples int64 `json:"samples"`
	// Mean is TotalBytes over the run's span (Carried.SpanNs), bytes/s.
	Mean float64 `json:"mean_bytes_per_second"`
	// Peak is the most bytes of any window of Window (1 s) that starts at
	// an event (a request's issue, a response's completion), per second;
	// for a run shorter than a window, its bytes over its span (Mean).
	Peak float64 `json:"peak_bytes_per_second"`
	// PeakStartNs is where the peak window starts, ns on the run's clock.
	PeakStartNs int64 `json:"peak_start_ns"`
	// UncompressedBytes is TotalBytes before the QSL's compression: the
	// samples' payloads as the QSL holds them (ingress of a run that
	// compressed); 0 when not recorded.
	UncompressedBytes int64 `json:"uncompressed_bytes,omitempty"`
}

// UncompressedPerSample is UncompressedBytes / Samples (0 without
// samples).
func (d Direction) UncompressedPerSample() float64 {
	if d.Samples == 0 {
		return 0
	}
	return float64(d.UncompressedBytes) / float64(d.Samples)
}

// BytesPerSample is TotalBytes / Samples (0 without samples).
func (d Direction) BytesPerSample() float64 {
	if d.Samples == 0 {
		return 0
	}
	return float64(d.TotalBytes) / float64(d.Samples)
}

// Carried is what the wire carried over a run, each way.
type Carried struct {
	// Ingress is the requests (towards the SUT), placed at each sample's
	// issue (or completion, RequestsAtCompletion); Egress the responses,
	// placed at each completion.
	Ingress Direction `json:"ingress"`
	Egress  Direction `json:"egress"`
	// SpanNs is from the first issue to the last completion, ns.
	SpanNs int64 `json:"span_ns"`
	// Measured: some sample reported a wire size (a network SUT). A run
	// of an in-process SUT measured nothing.
	Measured bool `json:"measured"`
}

// CarriedOptions say how CarriedOf reads the records. The zero value
// places requests at their issue and knows no payload sizes.
type CarriedOptions struct {
	// RequestsAtCompletion places a request's bytes at its sample's
	// completion (by then they had all crossed the wire) instead of its
	// issue: for the Offline scenario, whose samples are all issued at
	// once, so that the issue time says nothing of when a request went
	// out. A lost sample's request stays at its issue.
	RequestsAtCompletion bool
	// Uncompressed, if not nil, gives the payload size of a QSL index
	// before compression (0 unknown), which Ingress.UncompressedBytes sums.
	Uncompressed func(index uint64) int64
}

// CarriedOf sums the wire sizes of recs (loadgen.Record.RequestBytes and
// ResponseBytes): the mean rate over the span from the first issue to the
// last completion and the peak of 1 s windows, each way. Lost samples
// count the request they sent.
func CarriedOf(recs iter.Seq[loadgen.Record], o CarriedOptions) Carried {
	uncompressed := o.Uncompressed
	var c Carried
	type ev struct{ t, n int64 }
	var in, out []ev
	first, last := int64(0), int64(0)
	seen := false
	for r := range recs {
		if r.IssuedNs == loadgen.NoTime {
			continue
		}
		if !seen || r.IssuedNs < first {
			first = r.IssuedNs
		}
		end := r.CompletedNs
		if end == loadgen.NoTime {
			end = r.IssuedNs
		}
		if !seen || end > last {
			last = end
		}
		seen = true
		if r.RequestBytes > 0 {
			at := r.IssuedNs
			if o.RequestsAtCompletion && r.CompletedNs != loadgen.NoTime {
				at = r.CompletedNs
			}
			in = append(in, ev{at, r.RequestBytes})
			c.Ingress.TotalBytes += r.RequestBytes
			c.Ingress.Samples++
			if uncompressed != nil {
				c.Ingress.UncompressedBytes += uncompressed(r.SampleIndex)
			}
		}
		if r.ResponseBytes > 0 && r.CompletedNs != loadgen.NoTime {
			out = append(out, ev{r.CompletedNs, r.ResponseBytes})
			c.Egress.TotalBytes += r.ResponseBytes
			c.Egress.Samples++
		}
	}
	c.Measured = len(in)+len(out) > 0
	c.SpanNs = last - first
	for _, d := range []struct {
		evs []ev
		dir *Direction
	}{{in, &c.Ingress}, {out, &c.Egress}} {
		if c.SpanNs > 0 {
			d.dir.Mean = float64(d.dir.TotalBytes) / (float64(c.SpanNs) / 1e9)
		}
		slices.SortFunc(d.evs, func(a, b ev) int {
			switch {
			case a.t < b.t:
				return -1
			case a.t > b.t:
				return 1
			}
			return 0
		})
		// The busiest window [t, t+Window) that starts at an event.
		var sum, best int64
		j := 0
		for i := range d.evs {
			for j < len(d.evs) && d.evs[j].t < d.evs[i].t+Window {
				sum += d.evs[j].n
				j++
			}
			if sum > best {
				best, d.dir.PeakStartNs = sum, d.evs[i].t
			}
			sum -= d.evs[i].n
		}
		// A run shorter than a window is one window as long as the run.
		w := Window
		if c.SpanNs > 0 && c.SpanNs < w {
			w = c.SpanNs
		}
		d.dir.Peak = float64(best) * 1e9 / float64(w)
	}
	return c
}
