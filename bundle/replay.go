package bundle

import "time"

// ReplayInput is a trace replay as it was asked for (invocation.json's
// "replay"): the trace file, with its digest, and how its schedule was
// scaled and cut. Request k of the schedule is sample k of the run, so the
// records (their sample index, scheduled and issued times) and this input
// give each request's trace line, lengths and send lateness.
type ReplayInput struct {
	// Path is the trace file (Mooncake JSONL or CSV, see package
	// workload/trace).
	Path string `json:"path"`
	// SHA256 is the hex digest of the trace file read; a run repeated from
	// its bundle refuses a file that changed.
	SHA256 string `json:"sha256,omitempty"`
	// Format is "mooncake" or "csv".
	Format string `json:"format,omitempty"`
	// Speedup divides the trace's gaps (0 or 1: as recorded).
	Speedup float64 `json:"speedup,omitempty"`
	// MaxRequests and MaxDuration cut the schedule (0: no cut).
	MaxRequests int           `json:"max_requests,omitempty"`
	MaxDuration time.Duration `json:"max_duration_ns,omitempty"`
	// Seed chooses the words of the prompts.
	Seed uint64 `json:"seed,omitempty"`
	// Requests is the number of requests replayed, and Truncated says why
	// they are fewer than the trace's ("" when not).
	Requests  int    `json:"requests,omitempty"`
	Truncated string `json:"truncated,omitempty"`
}
