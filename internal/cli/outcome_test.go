package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/loadgen"
)

func TestScenarioIDRefused(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"without an arrival mode the ID is not ignored", []string{"--scenario-id", "T11-2"}, "resnet50_v1.5 on imagenet2012"},
		{"with an arrival mode the null SUT is not labelled T11-2", []string{"--arrival-mode", "2", "--scenario-id", "T11-2"}, "--sut null is not that workload"},
		{"an ID not in the catalogue", []string{"--scenario-id", "T99-9"}, "no such scenario"},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		r := runCLI(t, dir, append([]string{"run", "-q", "--output-dir", filepath.Join(dir, "out")}, tc.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: want exit 2 naming %q, got %v", tc.name, tc.want, r)
		}
	}
}

// The root help says only what exists: no network SUTs or training test
// offered as if they were there.
func TestRootHelpSaysWhatExists(t *testing.T) {
	r := runCLI(t, "", "--help")
	if r.code != ExitOK {
		t.Fatalf("--help: %v", r)
	}
	for _, bad := range []string{"Planned", "not yet built"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("root help still calls something planned:\n%s", r.stdout)
		}
	}
	// Each claim names the command that does it; the commands exist.
	for _, want := range []string{"in-process", "over the network", "--sut openai|kserve|dispatch", "'aimeter serve'", "'aimeter train'", "exit status N",
		"serve ", "train ", "run "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("root help lacks %q:\n%s", want, r.stdout)
		}
	}
}

// A find-peak run lists every probe and writes the records of the reported
// probe only; settings.json keeps every probe's outcome.
func TestFindPeakWritesTheReportedProbeOnly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r := runCLI(t, "", "run", "-q", "--mode", "find-peak", "--output-dir", out,
		"--set", "target_qps=2000", "--set", "min_duration=100", "--set", "target_latency=50", "--find-peak-resolution", "0.25")
	if r.code != ExitOK && r.code != ExitInvalid {
		t.Fatalf("find-peak: %v", r)
	}
	var settings struct {
		Passes []loadgen.PassInfo `json:"passes"`
	}
	if err := json.Unmarshal([]byte(readFileT(t, filepath.Join(out, "settings.json"))), &settings); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(r.stdout, "\n  target_qps "); n != len(settings.Passes) || n == 0 {
		t.Errorf("%d probes listed for %d passes:\n%s", n, len(settings.Passes), r.stdout)
	}
	var reported loadgen.PassInfo
	for _, p := range settings.Passes {
		if p.Probe == nil {
			t.Fatalf("a pass without its probe outcome: %+v", p)
		}
		if p.Reported {
			reported = p
		} else if !p.Probe.RecordsDropped {
			t.Errorf("probe at %v qps kept its records", p.TargetQPS)
		}
	}
	recs := readRecordsT(t, out)
	if uint64(len(recs)) != reported.Probe.Samples {
		t.Errorf("%d records, the reported probe issued %d samples", len(recs), reported.Probe.Samples)
	}
	for _, rec := range recs {
		if rec.SeqID < reported.FirstSeq || rec.SeqID >= reported.EndSeq {
			t.Fatalf("record %d is not of the reported probe [%d, %d)", rec.SeqID, reported.FirstSeq, reported.EndSeq)
		}
	}
}
