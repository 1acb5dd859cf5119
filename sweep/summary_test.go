package sweep

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodePlan(t *testing.T) {
	r, _ := ComputeRegions(1, 64)
	good := Journal{Schema: PlanSchema, Kind: KindSweep, Regions: &r, Runs: []Step{{Concurrency: 1, Dir: "c00001"}}}
	enc := func(p Journal) string { b, _ := json.Marshal(p); return string(b) }
	bad := r
	bad.Low.End++
	for _, c := range []struct {
		in     string
		want   string
		reason string
	}{
		{enc(good), "", "a plan as the runner writes it"},
		{`{"schema":"aimeter-sweep-plan/1","kind":"sweep","runs":[],"extra":1}`, "unknown field", "an unknown field"},
		{`{"schema":"aimeter-sweep-plan/9","kind":"sweep","runs":[]}`, `schema "aimeter-sweep-plan/9"`, "another schema"},
		{`{"schema":"aimeter-sweep-plan/1","kind":"sweeps","runs":[]}`, `kind "sweeps"`, "another kind"},
		{`{"schema":"aimeter-sweep-plan/1","kind":"sweep","runs":[{"concurrency":1,"dir":"../x"}]}`, `runs[0].dir "../x"`, "a run outside the sweep"},
		{`{"schema":"aimeter-sweep-plan/1","kind":"sweep","runs":[{"concurrency":1,"dir":"/abs"}]}`, `runs[0].dir "/abs"`, "an absolute run directory"},
		{`{"schema":"aimeter-sweep-plan/1","kind":"sweep","runs":[{"concurrency":0,"dir":"c0"}]}`, "runs[0].concurrency", "a zero concurrency"},
		{`{"schema":"aimeter-sweep-plan/1","kind":"goodput-search","runs":[]}`, "search: a goodput search needs its options", "a search without options"},
		{`{"schema":"aimeter-sweep-plan/1","kind":"goodput-search","search":{"start":1,"max":8,"target":0.9},"runs":[]}`, "slo:", "a search without an SLO"},
		{`{"schema":"aimeter-sweep-plan/1","kind":"goodput-search","slo":{"ttft_ns":1},"search":{"start":1,"max":8,"target":2},"runs":[]}`, "search: goodput target 2", "a target above 1"},
		{enc(Journal{Schema: PlanSchema, Kind: KindSweep, Regions: &bad}), "regions: not Endpoints' regions", "regions that disagree with their Cmin and Cmax"},
		{enc(good) + "{}", "data after", "two objects"},
	} {
		_, err := DecodeJournal([]byte(c.in))
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.reason, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.reason, err, c.want)
		}
	}
}

func FuzzDecodePlan(f *testing.F) {
	r, _ := ComputeRegions(1, 64)
	seed, _ := json.Marshal(Journal{Schema: PlanSchema, Kind: KindSweep, Regions: &r, SLO: SLO{TTFT: 5}, Runs: []Step{{Concurrency: 2, Dir: "c00002"}}})
	f.Add(seed)
	f.Add([]byte(`{"schema":"aimeter-sweep-plan/1","kind":"goodput-search","slo":{"tpot_ns":9},"search":{"start":1,"max":8,"target":0.5},"runs":[{"concurrency":1,"dir":"p"}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodeJournal(data)
		if err != nil {
			return
		}
		// What it accepts is a plan the summary can use as it is.
		if p.Kind == KindSearch && (p.Search == nil || p.SLO.IsZero()) {
			t.Fatalf("accepted a search without options or SLO: %+v", p)
		}
		for _, r := range p.Runs {
			if r.Concurrency == 0 || r.Dir == "" || strings.HasPrefix(r.Dir, "/") || strings.HasPrefix(r.Dir, "..") {
				t.Fatalf("accepted run %+v", r)
			}
		}
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeJournal(again); err != nil {
			t.Fatalf("a plan it accepted does not read back: %v\n%s", err, again)
		}
	})
}
