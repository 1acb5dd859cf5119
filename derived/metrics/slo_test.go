package metrics

import (
	"strings"
	"testing"
	"time"

	"aimeter/bundle"
)

func TestSLOFlagValue(t *testing.T) {
	var s SLO
	if err := s.Set("ttft=200ms, e2e=5s"); err != nil {
		t.Fatal(err)
	}
	if want := (SLO{TTFT: 200 * time.Millisecond, E2E: 5 * time.Second}); s != want {
		t.Fatalf("Set = %+v, want %+v", s, want)
	}
	if got := s.Bundle(); got == nil || *got != (bundle.SLO{TTFTNs: 200e6, E2ENs: 5e9}) {
		t.Errorf("Bundle = %+v", got)
	}
	if err := s.Set("tpot=fast"); err == nil || !strings.Contains(err.Error(), `SLO item 1 "tpot=fast"`) {
		t.Errorf("Set(tpot=fast) = %v, want the item named", err)
	}
	if err := s.Set(" "); err != nil || !s.IsZero() || s.Bundle() != nil {
		t.Errorf("Set(blank) = %v, leaving %+v (Bundle %v); want no SLO", err, s, s.Bundle())
	}
	if s.Type() != "slo" {
		t.Errorf("Type = %q", s.Type())
	}
}
