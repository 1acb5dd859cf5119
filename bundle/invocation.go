package bundle

import "time"

// InvocationFile is the raw file that says how a run was asked for: the
// command line, the system under test and the inputs of the plan, enough
// to run it again (`aimeter run --from DIR`). It is a part of package
// benchmark/invocation (invocation.Of); its plain parts are these types.
const InvocationFile = "invocation.json"

// Warmup is a warm-up before the measured run: what it asked for is in
// Control (by the plan), what it did here.
type Warmup struct {
	// Requests and Failed count the warm-up's requests and failures.
	Requests uint64 `json:"requests"`
	Failed   uint64 `json:"failed"`
	// DurationNs is how long it took, in ns.
	DurationNs int64 `json:"duration_ns"`
	// StartUnixNs is when it started, Unix ns, so that the energy of the
	// warm-up can be cut from the run's telemetry; 0 in bundles written
	// before it was kept.
	StartUnixNs int64 `json:"start_unix_ns,omitempty"`
}

// SettingsInput names the inputs of the settings cascade.
type SettingsInput struct {
	// Model is the config files' model key ("" for none).
	Model string `json:"model,omitempty"`
	// Scenario and Mode are as asked for ("" when a GB/T plan chose).
	Scenario string `json:"scenario,omitempty"`
	Mode     string `json:"mode,omitempty"`
	// Files are the config files read, each with its digest.
	Files []InputFile `json:"files,omitempty"`
	// Set are the NAME=VALUE overrides, in order.
	Set []string `json:"set,omitempty"`
}

// InputFile is a file a run read, with its SHA-256 (hex) when it was read.
type InputFile struct {
	// Role says what the file was: "mlperf.conf", "user.conf",
	// "audit.config", "prompts", "info".
	Role string `json:"role"`
	Path string `json:"path"`
	// SHA256 is the hex digest of the bytes read; "" when the file was
	// not there (an optional audit.config).
	SHA256 string `json:"sha256,omitempty"`
}

// Control is what bounds a run beyond its LoadGen settings.
type Control struct {
	Timeout      time.Duration `json:"timeout_ns,omitempty"`
	StallTimeout time.Duration `json:"stall_timeout_ns,omitempty"`
	SpinWindow   time.Duration `json:"spin_window_ns,omitempty"`
	MaxMemory    int64         `json:"max_memory_bytes,omitempty"`
	// MaxMemorySource says where MaxMemory came from: "--max-memory", or
	// for auto the limit that bound it ("auto: half of rlimit-as 4.1 GB
	// (RLIMIT_AS)").
	MaxMemorySource    string  `json:"max_memory_source,omitempty"`
	FindPeakResolution float64 `json:"find_peak_resolution,omitempty"`
	KeepProbeRecords   bool    `json:"keep_probe_records,omitempty"`
	// WarmupRequests and WarmupDuration are the warm-up asked for (a
	// fixed-concurrency run); 0 for none.
	WarmupRequests uint64        `json:"warmup_requests,omitempty"`
	WarmupDuration time.Duration `json:"warmup_duration_ns,omitempty"`
}

// ClientStats are a network client's own counters over a run.
type ClientStats struct {
	// Requests and Errors count the requests sent and those that failed.
	Requests uint64 `json:"requests"`
	Errors   uint64 `json:"errors"`
	// TokenMismatches counts streamed responses whose usage disagreed
	// with the chunks; MissingUsage those without usage; TokenTimesDropped
	// the token times not kept (OpenAI-compatible servers only).
	TokenMismatches   uint64 `json:"token_mismatches,omitempty"`
	MissingUsage      uint64 `json:"missing_usage,omitempty"`
	TokenTimesDropped uint64 `json:"token_times_dropped,omitempty"`
	// SendLateness summarises the time from a request's start to the
	// moment it was written: the client's own delay.
	SendLatenessCount uint64        `json:"send_lateness_count,omitempty"`
	SendLatenessP50   time.Duration `json:"send_lateness_p50_ns,omitempty"`
	SendLatenessP99   time.Duration `json:"send_lateness_p99_ns,omitempty"`
	SendLatenessMax   time.Duration `json:"send_lateness_max_ns,omitempty"`
}
