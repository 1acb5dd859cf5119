package console

import (
	"fmt"
	"io"

	"aimeter/gbt"
)

// WriteStreamProbes writes the probes of a video-stream search (GB/T 45087
// Table 21), a header and one line each (StreamProbeLine).
func WriteStreamProbes(w io.Writer, ps []gbt.StreamProbe) {
	fmt.Fprintf(w, "%-8s %7s %10s %10s %-4s %8s  %s\n", "phase", "streams", "frames", "lost", "ok", "seconds", "idle SUT by")
	for _, p := range ps {
		fmt.Fprintln(w, StreamProbeLine(p))
	}
}

// StreamProbeLine is the line of one probe: its phase, stream count,
// frames, frames lost or failed, pass or FAIL, seconds and how the SUT was
// made idle before it.
func StreamProbeLine(p gbt.StreamProbe) string {
	verdict := "pass"
	if !p.OK {
		verdict = "FAIL"
	}
	return fmt.Sprintf("%-8s %7d %10d %10d %-4s %8.1f  %s", p.Phase, p.N, p.Frames, p.Lost+p.Failed, verdict, p.Seconds, p.Idle)
}
