package collect

import (
	"math"
	"testing"
)

// FuzzDecodeEvents feeds arbitrary bodies to the event decoder: it must
// not panic, and whatever it accepts must pass its own checks.
func FuzzDecodeEvents(f *testing.F) {
	f.Add([]byte(`[{"kind":"epoch_start","node":"n0","rank":1,"mono_ns":5}]`))
	f.Add([]byte(`{"kind":"power","node":"n0","rank":0,"wall":"2026-01-02T03:04:05Z","value":300.5}` + "\n" + `{"kind":"power","node":"n0","rank":0,"mono_ns":1}`))
	f.Add([]byte(`[{"kind":"nap"}]`))
	f.Add([]byte(`[{"kind":"send","node":"n","rank":0,"mono_ns":1,"id":"\ud800","value":1e309}]`))
	f.Add([]byte(`  [] [`))
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := DecodeEvents(b)
		if err != nil {
			return
		}
		for i, e := range evs {
			if !kinds[e.Kind] || e.Node == "" || e.Rank < 0 || e.Rank != evs[0].Rank || e.Time != 0 || (e.Mono == 0 && e.Wall.IsZero()) {
				t.Fatalf("event %d accepted: %+v", i, e)
			}
			if e.Value != nil && (math.IsNaN(*e.Value) || math.IsInf(*e.Value, 0)) {
				t.Fatalf("event %d: value %v", i, *e.Value)
			}
		}
	})
}
