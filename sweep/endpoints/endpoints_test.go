package endpoints

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"aimeter/derived/metrics"
	"aimeter/internal/golden"
	"aimeter/steady"
	"aimeter/sweep"
	"aimeter/sysinfo"
)

func readTestSubmission(t *testing.T) *Submission {
	t.Helper()
	s, err := ReadSubmission(filepath.Join("testdata", "submission.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDecodeSubmissionErrors removes or spoils one field at a time: each
// must be refused with an error naming the field.
func TestDecodeSubmissionErrors(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("testdata", "submission.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, from, to, want string
	}{
		{"organization is a directory", "organization: Example", "organization: ''", "organization: missing"},
		{"model names the directory", "model: llama3_1-8b", "model: llama3.1-8b", `model "llama3.1-8b"`},
		{"division has three values", "division: Standardized", "division: Closed", `division "Closed"`},
		{"cohort format", "target_cohort: 2026-10-C1", "target_cohort: 2026-10", `target_cohort "2026-10"`},
		{"seed set", "seed_set: A\n", "", "seed_set: missing"},
		{"model seed", "model_seed: 9315206023656308754\n", "", "model_seed: missing"},
		{"model seed not the set's", "model_seed: 9315206023656308754", "model_seed: 42", "model_seed 42: published seed set A's is 9315206023656308754"},
		{"scheduler seed not the set's", "seed_set: A\n", "seed_set: A\nscheduler_rng_seed: 0\n", "scheduler_rng_seed 0: published seed set A's is 10487924139932647040"},
		{"unknown set without its seeds", "seed_set: A\n", "seed_set: Z\n", `seed_set "Z": not a set aimeter knows (published: A)`},
		{"availability", "  system_availability_status: RDI\n", "", "system_desc.system_availability_status: missing"},
		{"node driver", "  driver: none\n", "", "node.driver: missing"},
		{"system_power", "system_power:", "system_powr:", "system_powr"},
		{"unknown field", "system: sim_1x", "system: sim_1x\nsytem: x", "sytem"},
		{"directory escape", "submission_id: example-2026-10", "submission_id: ../up", `submission_id "../up"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := string(base)
			if !strings.Contains(text, c.from) {
				t.Fatalf("the test submission has no %q", c.from)
			}
			_, err := DecodeSubmission([]byte(strings.Replace(text, c.from, c.to, 1)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := DecodeSubmission(base); err != nil {
		t.Errorf("the test submission: %v", err)
	}
}

// goldenSweep is a hand-made sweep: Cmax 40 (regions for Cmin 1: ultra-low
// 1, low 2–4, medium 5–12, high 13–40), four points and the Cmax point
// elected as the Offline point.
func goldenSweep() *Sweep {
	sys := sysinfo.System{Hostname: "h", OS: "linux", Arch: "amd64", CPU: "Example CPU", Cores: 16, MemoryBytes: 64 << 30, AimeterVersion: "1.2.3",
		Accelerators: []sysinfo.Accelerator{{Vendor: "NVIDIA", Name: "Example GPU", MemoryBytes: 80 << 30}, {Vendor: "NVIDIA", Name: "Example GPU", MemoryBytes: 80 << 30}}}
	mk := func(c uint64, region, mode string, tokens ...int64) Point {
		var samples []metrics.Sample
		var out int64
		for i, n := range tokens {
			ttft := int64(1_000_000 * (i + 1))
			e2e := ttft + (n-1)*100_000*int64(c)
			samples = append(samples, metrics.Sample{OK: true, TTFTNs: ttft, E2ENs: e2e, TPOTNs: (e2e - ttft) / max(n-1, 1), HasTPOT: n > 1, Tokens: n})
			out += n
		}
		samples = append(samples, metrics.Sample{}) // one failed request
		elapsed := 0.5
		return Point{
			Point: sweep.Point{Concurrency: c, Region: region, Dir: sweep.PointDir(c, false), Verdict: "VALID",
				Issued: uint64(len(samples)), Completed: uint64(len(tokens)), Errors: 1, OutputTokens: out, ElapsedS: elapsed,
				SystemTPS: float64(out) / elapsed, TPSPerUser: 1000 / (0.1 * float64(c))},
			OfflineMode: mode, Samples: samples, MinDurationMs: 600000, MinQueryCount: 100,
			SchedulerSeed: 10487924139932647040, SampleIndexSeed: 586478644936801402, QSLName: "synthetic prompts",
			System: sys, Config: map[string]any{"settings": map[string]any{"min_duration_ms": 600000, "schedule_rng_seed": uint64(10487924139932647040)}},
		}
	}
	p := []Point{
		mk(1, sweep.RegionUltraLow, "none", 8, 9, 10),
		mk(4, sweep.RegionLow, "none", 8, 8, 8, 8, 1),
		mk(12, sweep.RegionMedium, "none", 16, 32, 64),
		mk(40, sweep.RegionHigh, "elected", 100, 120, 140, 160),
	}
	// Steady states: a window at r1, too few super-passes at r4, none at
	// r12 (the whole run stands for it), none analysed at r40.
	whole := steady.Metrics{Samples: 40, Completed: 38, Failed: 2, SpanNs: 2e9, OutputTokensPerSec: 900,
		Latency: [3]int64{5e6, 8e6, 9e6}, TTFT: [3]int64{1e6, 2e6, 3e6}, TPOT: [3]int64{4e5, 5e5, 6e5}, HasTokens: true}
	win := whole
	win.Completed, win.OutputTokensPerSec, win.TPOT = 24, 1000, [3]int64{4e5, 4e5, 5e5}
	seqs := make([]uint64, 40)
	p[0].Steady = &metrics.SuperPassAnalysis{DatasetSize: 4, Window: win, Whole: whole, SuperPassResult: steady.SuperPassResult{
		Size: 4, SuperPasses: 10, Warmup: 1, Found: true, Lo: 2, Hi: 8, StartNs: 5e8, EndNs: 1_700_000_000, Samples: seqs[:24]}}
	p[1].Steady = &metrics.SuperPassAnalysis{DatasetSize: 8, Window: whole, Whole: whole, SuperPassResult: steady.SuperPassResult{
		Size: 8, SuperPasses: 5, Warmup: 2, Reason: "no admissible steady plateau", Samples: seqs}}
	p[2].Steady = &metrics.SuperPassAnalysis{DatasetSize: 4, Window: whole, Whole: whole, SuperPassResult: steady.SuperPassResult{
		Size: 4, SuperPasses: 9, Warmup: 1, Reason: "all 1 steady plateaus are too short", Samples: seqs[:36]}}
	return &Sweep{CMax: 40, Points: p}
}

// TestSteadyStateStatus: the steady_state block's status, verdict and
// basis for each outcome of the super-pass analysis.
func TestSteadyStateStatus(t *testing.T) {
	seqs := make([]uint64, 100)
	cases := []struct {
		name, why              string
		sp                     *metrics.SuperPassAnalysis
		status, verdict, basis string
	}{
		{"window", "a window found is the official result",
			&metrics.SuperPassAnalysis{DatasetSize: 10, SuperPassResult: steady.SuperPassResult{Size: 10, Warmup: 1, Found: true, Lo: 1, Hi: 5, Samples: seqs[:40]}},
			StatusWindowable, VerdictSteady, BasisWindow},
		{"partial data set", "fewer samples issued than one pass over the data set",
			&metrics.SuperPassAnalysis{DatasetSize: 200, SuperPassResult: steady.SuperPassResult{Size: 200, Samples: seqs}},
			StatusPartialDataset, VerdictNotFound, BasisTotal},
		{"three after warm-up", "4 full super-passes, 1 of them warm-up: a plateau needs 4",
			&metrics.SuperPassAnalysis{DatasetSize: 25, SuperPassResult: steady.SuperPassResult{Size: 25, Warmup: 1, Samples: seqs}},
			StatusInsufficientPasses, VerdictNotFound, BasisTotal},
		{"no plateau", "enough super-passes, none flat: not the official result, and not for want of passes",
			&metrics.SuperPassAnalysis{DatasetSize: 10, SuperPassResult: steady.SuperPassResult{Size: 10, Warmup: 2, Samples: seqs}},
			StatusInsufficientDuration, VerdictNotFound, BasisTotal},
		{"no analysis", "a run without token times has no block", nil, "", "", ""},
		{"detector error", "a run without a data set size has no block", &metrics.SuperPassAnalysis{Err: errors.New("no size")}, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := map[string]any{}
			for _, it := range steadyState(Point{Steady: c.sp}) {
				got[it.Key.(string)] = it.Value
			}
			if c.status == "" {
				if len(got) != 0 {
					t.Errorf("%s: got a block %v", c.why, got)
				}
				return
			}
			if got["status"] != c.status || got["verdict"] != c.verdict || got["basis"] != c.basis {
				t.Errorf("%s: status %v, verdict %v, basis %v; want %s, %s, %s", c.why, got["status"], got["verdict"], got["basis"], c.status, c.verdict, c.basis)
			}
		})
	}
}

// TestBuildSaltSeed: a point whose run salted its queries exports only
// when its salt seed is the submission's model_seed.
func TestBuildSaltSeed(t *testing.T) {
	s := readTestSubmission(t)
	same, other := *s.ModelSeed, *s.ModelSeed+1
	cases := []struct {
		name, why string
		seed      *uint64
		want      string // "" for no error
	}{
		{"no salt", "a run without --salt has no salt seed to agree", nil, ""},
		{"model seed", "the salt seeded as Endpoints seeds it", &same, ""},
		{"another seed", "the tree would declare a model_seed the salts did not use", &other, "salt seed 9315206023656308755, the set's model_seed is 9315206023656308754"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sw := goldenSweep()
			sw.Points[1].SaltSeed = c.seed
			_, err := Build(sw, s)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "r4")) {
				t.Errorf("%s: error %v, want %q", c.why, err, c.want)
			}
		})
	}
}

// TestBuildGolden compares every file Build writes for goldenSweep with
// testdata/golden (go test -run TestBuildGolden -update rewrites them).
func TestBuildGolden(t *testing.T) {
	files, err := Build(goldenSweep(), readTestSubmission(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "golden")
	if golden.Update() { // the tree as a whole: files Build no longer writes go too
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var onDisk []string
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			onDisk = append(onDisk, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, onDisk) {
		t.Fatalf("files %v, golden %v", got, onDisk)
	}
	for name, data := range files {
		golden.Check(t, filepath.Join(dir, filepath.FromSlash(name)), data)
	}
	// The golden tree passes Verify.
	if err := Verify(filepath.Join(dir, "Example", "example-2026-10")); err != nil {
		t.Error(err)
	}
}

// TestAccuracyPoints: one accuracy run per mandatory band (the lowest
// point of each) and one at the Offline point, none elsewhere.
func TestAccuracyPoints(t *testing.T) {
	pt := func(c uint64, mode string) Point { return Point{Point: sweep.Point{Concurrency: c}, OfflineMode: mode} }
	cases := []struct {
		name   string
		points []Point
		cmax   int
		want   []uint64
	}{
		{"one per band, elected Cmax", []Point{pt(1, "none"), pt(3, "none"), pt(4, "none"), pt(7, "none"), pt(11, "none"), pt(20, "none"), pt(33, "elected")}, 33, []uint64{1, 3, 7, 20, 33}},
		{"dedicated Offline point", []Point{pt(1, "none"), pt(2, "none"), pt(8, "none"), pt(33, "none"), pt(64, "dedicated")}, 33, []uint64{1, 2, 8, 33, 64}},
		{"margin points carry none", []Point{pt(1, "none"), pt(3, "none"), pt(9, "none"), pt(30, "none"), pt(35, "none")}, 33, []uint64{1, 3, 9, 30}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := AccuracyPoints(&Sweep{CMax: c.cmax, Points: c.points}, c.cmax)
			if err != nil {
				t.Fatal(err)
			}
			if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, c.want) {
				t.Errorf("accuracy at %v, want %v", keys, c.want)
			}
		})
	}
}

// TestVerifyRefuses damages a golden tree one way at a time.
func TestVerifyRefuses(t *testing.T) {
	files, err := Build(goldenSweep(), readTestSubmission(t))
	if err != nil {
		t.Fatal(err)
	}
	const r4 = "Example/example-2026-10/results/sim_1x/llama3_1-8b/r4/"
	cases := []struct {
		name, file, from, to, want string
	}{
		{"a disclosure field removed", r4 + PointFile, "target_cohort: 2026-10-C1\n", "", "target_cohort: missing"},
		{"a count removed", r4 + ResultFile, `"n_samples_completed": 5,`, "", "n_samples_completed: missing"},
		{"a P90 removed", r4 + ResultFile, `"90": 400000,`, "", `tpot.percentiles["90"]: missing`},
		{"utilisation changed", r4 + SystemDescFile, `"tps_utilization": 0.`, `"tps_utilization": 1.`, "tps_utilization"},
		{"config not a mapping", r4 + ConfigFile, "settings:", "- settings:", ConfigFile},
		{"scheduler seed not the set's", r4 + PointFile, "scheduler_rng_seed: 10487924139932647040", "scheduler_rng_seed: 0",
			"r4/point.yaml: seed-runtime-match: runtime_settings.runtime does not match seed set \"A\": scheduler_rng_seed=0 (expected 10487924139932647040); run the sweep with --set schedule_rng_seed=10487924139932647040 --set sample_index_rng_seed=586478644936801402"},
		{"model seed removed", r4 + PointFile, "    model_seed: 9315206023656308754\n", "", "seed-runtime-match: runtime_settings.runtime does not match seed set \"A\": model_seed missing (expected 9315206023656308754)"},
		{"an unpublished set", r4 + PointFile, "seed_set: A", "seed_set: Z", `seed-set-membership: seed_set "Z" is not a published set (known: A)`},
		{"a sample unaccounted", r4 + ResultFile, `"n_samples_failed": 1,`, `"n_samples_failed": 0,`, "metric-consistency-accounting: completed (5) + failed (0) = 5 ≠ issued (6)"},
		{"system_tps changed", r4 + ResultFile, `"system_tps": 66,`, `"system_tps": 67,`, "metric-consistency-system-tps: stored system_tps 67 ≠ derived 66"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			for name, data := range files {
				if name == c.file {
					if !strings.Contains(string(data), c.from) {
						t.Fatalf("%s has no %q:\n%s", name, c.from, data)
					}
					data = []byte(strings.Replace(string(data), c.from, c.to, 1))
				}
				p := filepath.Join(out, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := Verify(filepath.Join(out, "Example", "example-2026-10"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Verify: %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestBuildSeeds: a sweep run without the submission's seed set is
// refused, naming every point and seed and the flags that fix it, as
// MLCommons' checker would refuse each point (seed-runtime-match).
func TestBuildSeeds(t *testing.T) {
	s := readTestSubmission(t)
	sw := goldenSweep()
	for i := range sw.Points {
		sw.Points[i].SchedulerSeed, sw.Points[i].SampleIndexSeed = 0, 0
	}
	sw.Points[2].SampleIndexSeed = 586478644936801402 // one seed right: only the other is named
	_, err := Build(sw, s)
	if err == nil {
		t.Fatal("Build of a sweep run with seeds 0: no error")
	}
	for _, want := range []string{
		"4 of the sweep's 4 points did not run with seed set A's seeds",
		"--set schedule_rng_seed=10487924139932647040 --set sample_index_rng_seed=586478644936801402",
		"point r1: schedule_rng_seed 0, the set's scheduler_rng_seed is 10487924139932647040; sample_index_rng_seed 0, the set's is 586478644936801402",
		"point r12: schedule_rng_seed 0, the set's scheduler_rng_seed is 10487924139932647040\n",
		"point r40:",
	} {
		if !strings.Contains(err.Error()+"\n", want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// A set aimeter does not know, declared with its seeds in the file,
	// binds those seeds; the published set's no longer pass.
	z := *s
	sched, idx := uint64(1), uint64(2)
	z.SeedSet, z.SchedulerRNGSeed, z.SampleIndexRNGSeed = "Z", &sched, &idx
	if err := z.Check(); err != nil {
		t.Fatalf("a declared set: %v", err)
	}
	if _, err := Build(goldenSweep(), &z); err == nil || !strings.Contains(err.Error(), "schedule_rng_seed 10487924139932647040, the set's scheduler_rng_seed is 1") {
		t.Errorf("Build with a declared set the sweep did not use: %v", err)
	}
}

// TestVerifySeedSetConsistency: the points of one curve that declare two
// known seed sets are refused (seed-set-consistency), each point's seeds
// being its own set's.
func TestVerifySeedSetConsistency(t *testing.T) {
	files, err := Build(goldenSweep(), readTestSubmission(t))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	const r4 = "Example/example-2026-10/results/sim_1x/llama3_1-8b/r4/" + PointFile
	for name, data := range files {
		if name == r4 {
			data = []byte(strings.Replace(string(data), "seed_set: A", "seed_set: B", 1))
		}
		p := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := PublishedSeedSet("A")
	b := a
	b.ID = "B"
	err = VerifyWith(filepath.Join(out, "Example", "example-2026-10"), VerifyOptions{SeedSets: []SeedSet{b}})
	if err == nil || !strings.Contains(err.Error(), "seed-set-consistency: the points declare 2 seed sets (A, B)") || strings.Contains(err.Error(), "seed-runtime-match") {
		t.Errorf("VerifyWith: %v", err)
	}
}

// FuzzDecodeSubmission: any input is decoded or refused without a panic,
// and an accepted submission names only directories inside the output.
func FuzzDecodeSubmission(f *testing.F) {
	base, err := os.ReadFile(filepath.Join("testdata", "submission.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(base)
	f.Add([]byte(`{"organization": "a", "model": "m"}`))
	f.Add([]byte("organization: [1, 2]\n"))
	f.Add([]byte(strings.Replace(string(base), "system: sim_1x", "system: ..", 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSubmission(data)
		if err != nil {
			return
		}
		if err := s.Check(); err != nil {
			t.Fatalf("accepted, then refused: %v", err)
		}
		if !filepath.IsLocal(filepath.FromSlash(s.ModelDir())) {
			t.Fatalf("model directory %q leaves the output", s.ModelDir())
		}
		for _, name := range []string{s.Organization, s.SubmissionID, s.System, s.Model} {
			if name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
				t.Fatalf("directory name %q", name)
			}
		}
	})
}

// TestWriteRefuses: a directory that is no sweep, and a submission that
// fails its check, are refused before anything is written.
func TestWriteRefuses(t *testing.T) {
	s := readTestSubmission(t)
	out := t.TempDir()
	if _, err := Write(out, t.TempDir(), s); err == nil || !strings.Contains(err.Error(), "not a sweep directory") {
		t.Errorf("Write of an empty directory: %v", err)
	}
	bad := *s
	bad.SeedSet = ""
	if _, err := Write(out, t.TempDir(), &bad); err == nil || !strings.Contains(err.Error(), "seed_set: missing") {
		t.Errorf("Write without a seed set: %v", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("refused writes left %d entries", len(entries))
	}
}
