package metrics

import (
	"fmt"
	"strings"
	"time"

	"aimeter/bundle"
	"aimeter/loadgen"
)

// SLO is a per-request service-level objective: bounds on the time to first
// token, the time per output token and the end-to-end latency, any subset
// (a zero bound is no bound). A request meets it when it succeeded and is
// within every bound it has; a failed or lost request never does.
type SLO struct {
	TTFT time.Duration `json:"ttft_ns,omitempty"`
	TPOT time.Duration `json:"tpot_ns,omitempty"`
	E2E  time.Duration `json:"e2e_ns,omitempty"`
}

// IsZero reports whether the SLO has no bound.
func (s SLO) IsZero() bool { return s == SLO{} }

// String is the SLO as ParseSLO reads it ("ttft=200ms,tpot=50ms").
func (s SLO) String() string {
	var parts []string
	for _, b := range []struct {
		name string
		d    time.Duration
	}{{"ttft", s.TTFT}, {"tpot", s.TPOT}, {"e2e", s.E2E}} {
		if b.d > 0 {
			parts = append(parts, b.name+"="+b.d.String())
		}
	}
	return strings.Join(parts, ",")
}

// ParseSLO reads "ttft=200ms,tpot=50ms,e2e=5s": comma-separated NAME=DURATION
// pairs, NAME one of ttft, tpot and e2e, each at most once, DURATION a Go
// duration > 0. The error names the pair that is wrong.
func ParseSLO(text string) (SLO, error) {
	var s SLO
	if strings.TrimSpace(text) == "" {
		return s, fmt.Errorf("SLO %q: empty; give NAME=DURATION pairs, e.g. ttft=200ms,tpot=50ms,e2e=5s", text)
	}
	seen := map[string]bool{}
	for i, pair := range strings.Split(text, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok {
			return SLO{}, fmt.Errorf("SLO item %d %q: want NAME=DURATION (ttft, tpot or e2e)", i+1, pair)
		}
		d, err := time.ParseDuration(strings.TrimSpace(value))
		if err != nil {
			return SLO{}, fmt.Errorf("SLO item %d %q: %v", i+1, pair, err)
		}
		if d <= 0 {
			return SLO{}, fmt.Errorf("SLO item %d %q: the bound must be > 0", i+1, pair)
		}
		if seen[name] {
			return SLO{}, fmt.Errorf("SLO item %d %q: %s given twice", i+1, pair, name)
		}
		seen[name] = true
		switch name {
		case "ttft":
			s.TTFT = d
		case "tpot":
			s.TPOT = d
		case "e2e":
			s.E2E = d
		default:
			return SLO{}, fmt.Errorf("SLO item %d %q: unknown bound %q; want ttft, tpot or e2e", i+1, pair, name)
		}
	}
	return s, nil
}

// Set reads text into s as ParseSLO does, so that *SLO is a command-line
// flag's value (pflag.Value); an empty text is no SLO.
func (s *SLO) Set(text string) error {
	if strings.TrimSpace(text) == "" {
		*s = SLO{}
		return nil
	}
	v, err := ParseSLO(text)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Type names the value in a flag's usage.
func (s *SLO) Type() string { return "slo" }

// Bundle is the SLO as a run records it (invocation.json's "slo"); nil
// when it has no bound.
func (s SLO) Bundle() *bundle.SLO {
	if s.IsZero() {
		return nil
	}
	return &bundle.SLO{TTFTNs: int64(s.TTFT), TPOTNs: int64(s.TPOT), E2ENs: int64(s.E2E)}
}

// Sample is one request's figures, from its record, with aimeter's
// definitions (those of loadgen's token summary): latencies are from the
// scheduled time, never from the send.
type Sample struct {
	// OK is a successful completion; failed and lost requests are not.
	OK bool
	// E2ENs is completed − scheduled.
	E2ENs int64
	// TTFTNs is first token − scheduled; the whole latency for a response
	// without a first-token time (non-streaming).
	TTFTNs int64
	// TPOTNs is (E2E − TTFT) / (tokens − 1); HasTPOT is false for a
	// response of fewer than 2 tokens, which has no gap between tokens.
	TPOTNs  int64
	HasTPOT bool
	// Tokens is the response's output tokens.
	Tokens int64
}

// SampleOf is the figures of one record.
func SampleOf(r loadgen.Record) Sample {
	s := Sample{OK: r.Status == loadgen.StatusOK, Tokens: r.Tokens}
	if !s.OK {
		return s
	}
	s.E2ENs = r.CompletedNs - r.ScheduledNs
	s.TTFTNs = s.E2ENs
	if r.FirstTokenNs != loadgen.NoTime {
		s.TTFTNs = r.FirstTokenNs - r.ScheduledNs
	}
	if r.Tokens > 1 {
		s.TPOTNs = (s.E2ENs - s.TTFTNs) / (r.Tokens - 1)
		s.HasTPOT = true
	}
	return s
}

// Met reports whether x met every bound of s: a failed or lost request
// never does, and a response without a TPOT (one token) meets a TPOT bound.
func (s SLO) Met(x Sample) bool {
	if !x.OK {
		return false
	}
	if s.TTFT > 0 && x.TTFTNs > int64(s.TTFT) {
		return false
	}
	if s.TPOT > 0 && x.HasTPOT && x.TPOTNs > int64(s.TPOT) {
		return false
	}
	if s.E2E > 0 && x.E2ENs > int64(s.E2E) {
		return false
	}
	return true
}
