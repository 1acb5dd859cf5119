package benchmark

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/sut"
	"aimeter/tokenize"
)

// PlanFromBundle returns the plan that repeats the run the bundle in dir
// recorded: the same SUT configuration, the same requested settings (as
// settings.json holds them, so no config file need still exist), the same
// GB/T plan and bounds. Set OutputDir (another directory) before running
// it. A directory that is not a bundle, a bundle written before aimeter
// recorded how its run was asked for, or a SUT that cannot be rebuilt
// gives an error naming the file; a prompts or info file that is gone or
// whose SHA-256 changed is refused when the plan runs.
func PlanFromBundle(dir string) (*Plan, error) {
	if _, err := os.Stat(filepath.Join(dir, bundle.ManifestFile)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, usage("PlanFromBundle", "PlanFromBundle %s: not a run bundle (no %s there)", dir, bundle.ManifestFile)
		}
		return nil, usage("PlanFromBundle", "PlanFromBundle %s: %w", dir, err)
	}
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		return nil, usage("PlanFromBundle", "PlanFromBundle %s: %w", dir, err)
	}
	if _, ok := m.Entry(bundle.TrainingRunFile); ok {
		return nil, usage("PlanFromBundle", "PlanFromBundle %s: a training bundle; repeat it with aimeter train", dir)
	}
	if _, ok := m.Entry(bundle.InvocationFile); !ok {
		return nil, usage("PlanFromBundle", "PlanFromBundle %s: the bundle has no %s (written by %s, before aimeter recorded how a run was asked for), so its run cannot be repeated",
			dir, bundle.InvocationFile, orUnknown(m.Generator))
	}
	b, err := derived.Read(dir)
	if err != nil {
		return nil, usage("PlanFromBundle", "PlanFromBundle %s: %w", dir, err)
	}
	inv := invocation.Of(b)
	if inv.SUT.Kind == sut.Custom {
		return nil, usage("PlanFromBundle", "PlanFromBundle %s: %s names a custom SUT (%s) that a Go program built; only that program can run it again",
			dir, filepath.Join(dir, bundle.InvocationFile), inv.SUT.Name)
	}
	if err := inv.SUT.Validate(); err != nil {
		return nil, usage("PlanFromBundle", "PlanFromBundle %s: %s: %w", dir, filepath.Join(dir, bundle.InvocationFile), err)
	}
	requested := b.Result.Requested
	p := &Plan{
		SUT:      inv.SUT,
		Settings: Settings{Explicit: &requested},
		Name:     b.Name, Trace: b.Trace, NoReport: b.NoReport,
		Timeout: inv.Control.Timeout, StallTimeout: inv.Control.StallTimeout, SpinWindow: inv.Control.SpinWindow,
		MaxMemory: inv.Control.MaxMemory, MaxMemorySource: inv.Control.MaxMemorySource, FindPeakResolution: inv.Control.FindPeakResolution, KeepProbeRecords: inv.Control.KeepProbeRecords,
		Warmup: Warmup{Requests: inv.Control.WarmupRequests, Duration: inv.Control.WarmupDuration},
	}
	if inv.Replay != nil {
		rp := *inv.Replay
		p.Replay = &rp
	}
	if inv.Sessions != nil {
		ss := *inv.Sessions
		p.Sessions = &ss
	}
	if inv.SLO != nil {
		slo := *inv.SLO
		p.SLO = &slo
	}
	if inv.GBT != nil {
		p.GBT = &GBT{Input: *inv.GBT}
		for _, f := range inv.Settings.Files {
			if f.Role == "info" {
				if err := sameFile(f); err != nil {
					return nil, usage("PlanFromBundle", "PlanFromBundle %s: %w", dir, err)
				}
				p.GBT.InfoFile = f.Path
			}
		}
	}
	if k := p.SUT.KServe; k != nil && k.InputData != "" {
		if _, err := os.Stat(k.InputData); err != nil {
			return nil, usage("PlanFromBundle", "PlanFromBundle %s: the recorded input data file %s: %w", dir, k.InputData, err)
		}
	}
	if o := p.SUT.OpenAI; o != nil && o.Prompts != "" {
		if _, err := os.Stat(o.Prompts); err != nil {
			return nil, usage("PlanFromBundle", "PlanFromBundle %s: the recorded prompts file %s: %w", dir, o.Prompts, err)
		}
	}
	if o := p.SUT.OpenAI; o != nil {
		for _, spec := range []string{o.InputLengths, o.OutputLengths} {
			if path, ok := tokenize.HistogramFile(spec); ok && path != "" {
				if _, err := os.Stat(path); err != nil {
					return nil, usage("PlanFromBundle", "PlanFromBundle %s: the recorded lengths file %s: %w", dir, path, err)
				}
			}
		}
	}
	// What the recorded run ignored (a default the command line filled in
	// where it did not apply) is dropped, so that the plan is valid.
	p.ClearInapplicable(nil)
	return p, nil
}

// sameFile checks that an input file a run read is still there with the
// same digest.
func sameFile(f bundle.InputFile) error {
	sum, err := fileSHA256(f.Path)
	if err != nil {
		return fmt.Errorf("the recorded %s file %s: %w", f.Role, f.Path, err)
	}
	if f.SHA256 != "" && sum != f.SHA256 {
		return fmt.Errorf("the recorded %s file %s changed since the run (SHA-256 %s, recorded %s)", f.Role, f.Path, sum, f.SHA256)
	}
	return nil
}

// SameDir refuses to repeat a run into the directory of the bundle it
// repeats, which would replace the bundle.
func SameDir(from, out string) error {
	a, errA := os.Stat(from)
	b, errB := os.Stat(out)
	if filepath.Clean(from) == filepath.Clean(out) || (errA == nil && errB == nil && os.SameFile(a, b)) {
		return usage("OutputDir", "OutputDir %s is the bundle PlanFromBundle repeats; name another directory for the new run", out)
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown version"
	}
	return s
}
