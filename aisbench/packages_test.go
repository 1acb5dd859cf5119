package aisbench_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/aisbench"
	"aimeter/benchmark"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/sysinfo"
	"aimeter/telemetry"
	"aimeter/train"
	"aimeter/train/trainbundle"
)

func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: %v", tool, err)
		}
	}
}

// copyPackage copies the testdata package name into a fresh folder and
// returns it, so that a test can change one file of it.
func copyPackage(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// tree lists every file under dir with its content, to show that a run
// leaves the package as it was.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		out[path] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// trainPackage runs dir under benchmark.Train as aimeter train
// --ais-bench does, and reads the bundle back from disk.
func trainPackage(t *testing.T, dir string, timeout time.Duration, cfg func(*benchmark.TrainPlan)) (*benchmark.TrainOutcome, *train.ResultFile, *trainbundle.Training, error) {
	t.Helper()
	host := sysinfo.Host{}
	p := benchmark.TrainPlan{AisBench: &benchmark.TrainAisBench{Dir: dir, Timeout: timeout}, OutputDir: filepath.Join(t.TempDir(), "out"), Node: "node-1", Host: &host}
	if cfg != nil {
		cfg(&p)
	}
	out, err := benchmark.Train(context.Background(), p)
	if out == nil {
		t.Fatalf("no bundle: %v", err)
	}
	b, rerr := derived.Read(p.OutputDir)
	if rerr != nil {
		t.Fatalf("reading the bundle back: %v", rerr)
	}
	res, rerr := derived.Of(b).TrainingResult()
	if rerr != nil {
		t.Fatal(rerr)
	}
	return out, res, trainbundle.Of(b), err
}

func figure(rep *train.WorkloadReport, name, source string) *train.ReportedFigure {
	for i, f := range rep.Figures {
		if f.Name == name && f.Source == source {
			return &rep.Figures[i]
		}
	}
	return nil
}

func hasProblem(rep *train.WorkloadReport, part string) bool {
	for _, p := range rep.Problems {
		if strings.Contains(p, part) {
			return true
		}
	}
	return false
}

func keys(rep *train.WorkloadReport) map[string]string {
	out := map[string]string{}
	for _, k := range rep.Keys {
		out[k.Key] = string(k.Value)
	}
	return out
}

// TestPackagesUnderTrain runs each testdata package as aimeter train
// --ais-bench does: the bundle holds the keys as set, the mapped figures
// with their sources, the problems, the package's files, and the outcome
// GB/T's rules give.
func TestPackagesUnderTrain(t *testing.T) {
	needTools(t)
	evalFails := copyPackage(t, "resnet50")
	// The evaluation set lacks its labels: eval.py exits 1, run_eval fails.
	cfgPath := filepath.Join(evalFails, "code", "config", "config.sh")
	cfg, _ := os.ReadFile(cfgPath)
	if err := os.WriteFile(cfgPath, []byte(strings.Replace(string(cfg), "data/val", "data/train", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, dir string
		why       string
		// failed and incomplete: the outcome GB/T's rules give.
		failed     bool
		incomplete string
		check      func(t *testing.T, rep *train.WorkloadReport, res *train.ResultFile, tr *trainbundle.Training)
	}{
		{"resnet50", filepath.Join("testdata", "resnet50"), "a stubs 1.0 package: four phases timed, throughput summed over two ranks, numeric accuracy reaching the target", false, "",
			func(t *testing.T, rep *train.WorkloadReport, res *train.ResultFile, tr *trainbundle.Training) {
				k := keys(rep)
				if k["result"] != `"OK"` || k["throughput_ratio"] == "" || k["accuracy"] != "0.7614" {
					t.Errorf("keys %v: want result OK, throughput_ratio and accuracy 0.7614", k)
				}
				th, sum := figure(rep, "Th", train.SourceWorkload), figure(rep, "Th (sum over ranks)", train.SourceWorkloadFiles)
				if th == nil || sum == nil || th.Value == nil || sum.Value == nil || *th.Value != *sum.Value || *th.Value <= 0 {
					t.Errorf("Th %+v and the per-rank sum %+v: want both, equal and > 0", th, sum)
				}
				if f := figure(rep, "T_TR", train.SourceAimeter); f == nil || f.Value == nil || *f.Value <= 0 {
					t.Errorf("T_TR measured by aimeter: %+v", f)
				}
				m := res.Metrics.Trials[0]
				if m.TTRMs == nil || m.FinalAccuracy == nil || *m.FinalAccuracy != 0.7614 || m.ReachedTarget == nil || !*m.ReachedTarget {
					t.Errorf("GB/T trial: T_TR %v, final accuracy %v, reached %v; want T_TR, 0.7614 and the 0.75 target reached", m.TTRMs, m.FinalAccuracy, m.ReachedTarget)
				}
				if len(rep.Problems) != 0 {
					t.Errorf("problems %q, want none", rep.Problems)
				}
				if len(tr.AisBenchFiles["result/result.log"]) == 0 || len(tr.AisBenchFiles["work/train_parallel1/train.log"]) == 0 {
					t.Errorf("bundle files %v: want result/result.log and the rank's train.log", tr.Run.AisBench.Files)
				}
				if !strings.Contains(string(tr.Stdout), "train start") {
					t.Error("training_stdout.log lacks the package's output")
				}
			}},
		{"llama2-7b", filepath.Join("testdata", "llama2-7b"), "a stubs 2.0 LLM package: ais_utils in dependencies/logging, result_rank_<N>.json summed, accuracy a loss/perplexity string", false, "",
			func(t *testing.T, rep *train.WorkloadReport, res *train.ResultFile, tr *trainbundle.Training) {
				th, sum := figure(rep, "Th", train.SourceWorkload), figure(rep, "Th (sum over ranks)", train.SourceWorkloadFiles)
				if th == nil || sum == nil || th.Value == nil || sum.Value == nil || *th.Value != *sum.Value {
					t.Errorf("Th %+v and the per-rank sum %+v: want both and equal", th, sum)
				}
				if len(tr.Run.AisBench.RankFiles) != 2 {
					t.Errorf("rank files %+v, want result_rank_0.json and result_rank_1.json", tr.Run.AisBench.RankFiles)
				}
				if f := figure(rep, "perplexity", train.SourceWorkload); f == nil || f.Value == nil {
					t.Errorf("perplexity not read from the accuracy string: %+v", rep.Figures)
				}
				if !hasProblem(rep, "is a loss and a perplexity") {
					t.Errorf("problems %q: want the accuracy string recorded", rep.Problems)
				}
				for _, name := range []string{"T_L", "T_P"} {
					if figure(rep, name, train.SourceWorkload) == nil {
						t.Errorf("no %s from the workload's time stamps: %+v", name, rep.Figures)
					}
				}
				if m := res.Metrics.Trials[0]; m.FinalAccuracy != nil || m.ReachedTarget != nil {
					t.Errorf("final accuracy %v from a loss string: want none", m.FinalAccuracy)
				}
			}},
		{"bert-nvidia", filepath.Join("testdata", "bert-nvidia"), "an NVIDIA package: unquoted dates (day only), no phase banners, so no T_TR and an incomplete result", false, "no trial has both a training start and a training end",
			func(t *testing.T, rep *train.WorkloadReport, res *train.ResultFile, tr *trainbundle.Training) {
				if !hasProblem(rep, `proc_start_time "`) || !hasProblem(rep, "has only the day") {
					t.Errorf("problems %q: want the day-only proc_start_time", rep.Problems)
				}
				var extra []string
				for _, k := range rep.Keys {
					if k.Key == "proc_start_time" {
						extra = k.Extra
					}
				}
				if len(extra) != 1 || len(extra[0]) != len("15:04:05") {
					t.Errorf("proc_start_time extra words %q, want the time of day", extra)
				}
				if !hasProblem(rep, "no phase banners") {
					t.Errorf("problems %q: want the missing banners", rep.Problems)
				}
				if _, ok := tr.AisBenchFiles["log/detail.log"]; !ok {
					t.Errorf("bundle files %v: want log/detail.log", tr.Run.AisBench.Files)
				}
			}},
		{"resnet50, run_eval fails", evalFails, "exit 3: run_eval failed; the bundle still holds T_TR and the throughput files, no accuracy", true, "run_eval failed",
			func(t *testing.T, rep *train.WorkloadReport, res *train.ResultFile, tr *trainbundle.Training) {
				if tr.Run.AisBench.ExitCode != 3 || !hasProblem(rep, "exited with status 3 (run_eval failed)") {
					t.Errorf("exit %d, problems %q: want 3, run_eval failed", tr.Run.AisBench.ExitCode, rep.Problems)
				}
				if len(rep.Keys) != 0 || !hasProblem(rep, "set no result") {
					t.Errorf("keys %v, problems %q: want none set and the gap recorded", rep.Keys, rep.Problems)
				}
				if m := res.Metrics.Trials[0]; m.TTRMs == nil || m.FinalAccuracy != nil {
					t.Errorf("T_TR %v, final accuracy %v: want T_TR measured, no accuracy", m.TTRMs, m.FinalAccuracy)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := tree(t, c.dir)
			out, res, tr, err := trainPackage(t, c.dir, 2*time.Minute, func(p *benchmark.TrainPlan) {
				target := 0.75
				p.Target = &target
			})
			if (out.Failure != nil) != c.failed || (err != nil) != c.failed {
				t.Errorf("%s: failure %v, error %v; want failed %v", c.why, out.Failure, err, c.failed)
			}
			if c.incomplete == "" && out.Incomplete != "" || !strings.Contains(out.Incomplete, c.incomplete) {
				t.Errorf("%s: incomplete %q, want %q", c.why, out.Incomplete, c.incomplete)
			}
			if res.Reported == nil {
				t.Fatalf("%s: gbt_training.json has no reported figures", c.why)
			}
			if tr.Run.Source != trainbundle.SourceAisBench || tr.Run.AisBench == nil {
				t.Fatalf("training_run.json source %q, ais_bench %v", tr.Run.Source, tr.Run.AisBench)
			}
			c.check(t, res.Reported, res, tr)
			after := tree(t, c.dir)
			if len(after) != len(before) {
				t.Errorf("the package folder changed: %d files, was %d", len(after), len(before))
			}
			for p, body := range before {
				if after[p] != body {
					t.Errorf("the package's %s changed", p)
				}
			}
			if _, err := derived.Regenerate(out.Dir, out.Bundle); err != nil {
				t.Errorf("aimeter report could not regenerate the bundle: %v", err)
			}
			if _, err := os.Stat(filepath.Join(out.Dir, bundle.ManifestFile)); err != nil {
				t.Error(err)
			}
		})
	}
}

// writePackage writes a package whose code/benchmark.sh is script.
func writePackage(t *testing.T, script string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pkg")
	if err := os.MkdirAll(filepath.Join(dir, "code"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, aisbench.EntryScript), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// banners are the phase banners of a package that trains for a moment.
const banners = `log() { echo "$(date +%Y-%m-%dT%T) -Ais-Bench-Stubs- INFO run_train(x.sh:1) - ---- $1 ----"; }
log "train start"; sleep 0.2; log "train end"
`

// TestBadPackages: bad input is a clear error or a recorded gap, never a
// crash.
func TestBadPackages(t *testing.T) {
	needTools(t)
	t.Run("no code/benchmark.sh", func(t *testing.T) {
		p := benchmark.TrainPlan{AisBench: &benchmark.TrainAisBench{Dir: t.TempDir()}, OutputDir: filepath.Join(t.TempDir(), "out")}
		out, err := benchmark.Train(context.Background(), p)
		if out != nil || !benchmark.IsUsage(err) || !strings.Contains(err.Error(), "no code/benchmark.sh") {
			t.Errorf("outcome %v, error %v: want a usage error naming code/benchmark.sh", out, err)
		}
	})
	for _, c := range []struct {
		name, script string
		timeout      time.Duration
		problem      string
		incomplete   string
	}{
		{"set_result with an unknown mode", banners + `python3 ais_utils.py set_result testing accuracy 0.9`, 0,
			`set with unknown mode "testing"`, ""},
		{"non-numeric throughput", banners + `python3 -c 'import ais_utils; ais_utils.set_result("training", "throughput_ratio", "fast")'`, 0,
			`throughput_ratio "fast" is not a number`, ""},
		{"never calls set_result", banners, 0, "set no result", ""},
		{"set_result with too few words", banners + `python3 ais_utils.py set_result training`, 0, "did not parse", ""},
		{"hangs past the timeout", `log() { echo "$(date +%Y-%m-%dT%T) -Ais-Bench-Stubs- INFO run_train(x.sh:1) - ---- $1 ----"; }
log "train start"; sleep 600 & wait`, 2 * time.Second, "phase run_train started and never ended", "timed out after 2s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writePackage(t, c.script)
			out, res, tr, _ := trainPackage(t, dir, c.timeout, nil)
			if !hasProblem(res.Reported, c.problem) {
				t.Errorf("problems %q, want one with %q", res.Reported.Problems, c.problem)
			}
			if !strings.Contains(out.Incomplete, c.incomplete) || c.incomplete == "" && out.Incomplete != "" {
				t.Errorf("incomplete %q, want %q", out.Incomplete, c.incomplete)
			}
			if c.timeout > 0 && !tr.Run.AisBench.TimedOut {
				t.Error("the hung package is not recorded as timed out")
			}
		})
	}
}

// TestThroughputContradictedByPhases: a throughput too high for the
// training set to pass once in the time run_train lasted is recorded.
func TestThroughputContradictedByPhases(t *testing.T) {
	needTools(t)
	dir := writePackage(t, banners+`python3 ais_utils.py set_result training throughput_ratio 10`)
	_, res, _, _ := trainPackage(t, dir, 0, func(p *benchmark.TrainPlan) { p.TrainingSetSize = 1281167 })
	if !hasProblem(res.Reported, "contradicted by the phase times") {
		t.Errorf("problems %q, want the throughput contradicted", res.Reported.Problems)
	}
}

// TestPowerFromBothSources: the package's own power figures and those of
// aimeter's meters sampled over run_train are both reported, each with
// its source.
func TestPowerFromBothSources(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	smi := filepath.Join(dir, "nvidia-smi")
	if err := os.WriteFile(smi, []byte("#!/bin/sh\necho '0, 300.00, 50'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	srcs, err := telemetry.Open("nvidia-smi:"+smi, telemetry.SpecOptions{Node: "node-1", Period: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	pkg := writePackage(t, `log() { echo "$(date +%Y-%m-%dT%T) -Ais-Bench-Stubs- INFO run_train(x.sh:1) - ---- $1 ----"; }
log "train start"; sleep 1; log "train end"
python3 ais_utils.py set_result training average_power 350
python3 ais_utils.py set_result training max_power 420`)
	_, res, _, _ := trainPackage(t, pkg, 0, func(p *benchmark.TrainPlan) {
		p.Power, p.PowerOptions = srcs, telemetry.Options{Period: 50 * time.Millisecond}
	})
	rep := res.Reported
	if f := figure(rep, "P_TR", train.SourceWorkload); f == nil || *f.Value != 350 {
		t.Errorf("the package's P_TR: %+v", f)
	}
	if f := figure(rep, "P_TRmax", train.SourceWorkload); f == nil || *f.Value != 420 {
		t.Errorf("the package's P_TRmax: %+v", f)
	}
	if f := figure(rep, "P_TR", train.SourceAimeter); f == nil || *f.Value != 300 {
		t.Errorf("aimeter's P_TR over run_train: %+v, want 300 W from its meter", f)
	}
}
