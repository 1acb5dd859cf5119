package benchmark

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"aimeter/dataset"
	"aimeter/loadgen"
	"aimeter/model"
	"aimeter/report"
	"aimeter/sut/reference"
	"aimeter/sut/reference/mlp"
)

// DemoPlan is the demo (aimeter demo): the reference model on its data
// set, measured once for accuracy and then in the four scenarios, each
// run a bundle of its own through Run, with an HTML report of all five.
type DemoPlan struct {
	// Data is the data set (mlp.LoadData); its Test split is measured.
	Data *mlp.Data
	// Model is the reference model (mlp.ObtainModel).
	Model *model.MLP
	// OutputDir holds one directory per run (its name in lower case,
	// spaces as hyphens) and the report (WriteReport).
	OutputDir string
	// Duration is the minimum duration of the SingleStream and
	// MultiStream runs (PlanDemo); required, > 0.
	Duration time.Duration
	// SpinWindow is the Server run's Plan.SpinWindow (DemoSpinWindow); a
	// spin window applies to a schedule only, so no other run gets it.
	SpinWindow time.Duration
	// Prepare, if set, is called with each run's name and plan before the
	// run: where the caller sets the plan's CommandLine, Done, Notify and
	// Progress.
	Prepare func(name string, p *Plan)
}

// DemoStallTimeout is the StallTimeout of each of the demo's runs.
const DemoStallTimeout = time.Minute

// DemoSpinWindow returns the Server spin window of the demo: given's
// value where the caller chose one (given), else the default on 4 cores
// or more and never spinning (-1) on fewer. A spinning issuer takes one of
// two cores from the model and, with any other process running, leaves the
// Server latency to the scheduler (p99 over 100 ms seen on a 2-core
// machine with one busy neighbour, under 10 ms without spinning).
func DemoSpinWindow(window time.Duration, given bool, cpus int) time.Duration {
	if given || cpus >= 4 {
		return window
	}
	return -1
}

// Demo is a demo ready to run: its model served and calibrated, its runs
// sized (NewDemo). Close it.
type Demo struct {
	plan DemoPlan
	qsl  *dataset.QSL
	// sut serves every run but Server's; serverSUT, whose model leaves
	// one core to the issuer, serves Server's.
	sut, serverSUT *reference.SUT
	// Calibration is the model's measured speed, with the options it
	// was measured with (DemoCalibration).
	Calibration      Calibration
	CalibrateOptions CalibrateOptions
	// Plans are the settings of the four performance runs (PlanDemo).
	Plans DemoPlans
}

// NewDemo serves the plan's model on its test set and calibrates it:
// single samples and batches of DemoCalibration's size on the test set's
// first images, from which PlanDemo sizes the runs.
func NewDemo(plan DemoPlan) (*Demo, error) {
	if plan.Data == nil || plan.Data.Test == nil || plan.Model == nil {
		return nil, usage("DemoPlan.Data", "DemoPlan: the demo needs Data and Model")
	}
	if plan.Duration <= 0 {
		return nil, usage("DemoPlan.Duration", "DemoPlan.Duration must be > 0")
	}
	// The demo keeps no per-sample stage times (no stages.parquet): the
	// report gives each stage's mean from the SUT's sums.
	d := &Demo{plan: plan, qsl: dataset.NewQSL(plan.Data.Test, mlp.QSLPerformanceSamples)}
	var err error
	if d.sut, err = mlp.Serve(plan.Model, d.qsl, mlp.ServeOptions{NoStageTimes: true}); err != nil {
		return nil, err
	}
	// In Server the issuer may keep one core busy to issue on time, so
	// that run gets a SUT whose model uses the other cores only.
	if d.serverSUT, err = mlp.Serve(plan.Model, d.qsl, mlp.ServeOptions{Threads: max(1, runtime.NumCPU()-1), NoStageTimes: true}); err != nil {
		d.sut.Close()
		return nil, err
	}
	d.CalibrateOptions = DemoCalibration()
	d.Calibration = calibrateModel(plan.Model, plan.Data.Test, d.CalibrateOptions)
	d.Plans = PlanDemo(d.Calibration, plan.Duration)
	return d, nil
}

// calibrateModel measures m as the demo sizes its runs from it
// (Calibrate): single samples and batches of o.Batch, on the first images
// of set.
func calibrateModel(m *model.MLP, set *dataset.Images, o CalibrateOptions) Calibration {
	inf := m.NewInferencer(o.Batch)
	px := set.Rows * set.Cols
	x := set.Floats()[:o.Batch*px]
	var out []int
	return Calibrate(func(n int) { out = inf.Predict(out[:0], x[:n*px], n) }, o)
}

// Close stops the demo's SUTs.
func (d *Demo) Close() {
	d.sut.Close()
	d.serverSUT.Close()
}

// DemoRun is one run of the demo.
type DemoRun struct {
	// Name is the run's name: Accuracy or a scenario's.
	Name string
	// Outcome is what Run returned.
	Outcome *Outcome
	// Stages are the SUT's stage times of the run.
	Stages reference.StageStats
}

// DemoOutcome is what the demo measured: its runs in order, as far as it
// got.
type DemoOutcome struct {
	// Runs are the runs that returned an outcome.
	Runs []DemoRun
	// DataName is the name of the data set measured.
	DataName string
	// Model is the model measured.
	Model *model.MLP
}

// Run runs the demo: accuracy (every test image once, Offline, one batched
// query), then SingleStream, MultiStream, Server and Offline as Plans
// sizes them. It stops at the first run that fails or is interrupted and
// returns that error beside the outcome of the runs so far, which is never
// nil.
func (d *Demo) Run(ctx context.Context) (*DemoOutcome, error) {
	out := &DemoOutcome{DataName: d.plan.Data.Test.Name, Model: d.plan.Model}
	acc := loadgen.DefaultSettings()
	acc.Scenario, acc.Mode = loadgen.Offline, loadgen.AccuracyOnly
	for _, r := range []struct {
		name string
		s    loadgen.Settings
	}{{"Accuracy", acc}, {"SingleStream", d.Plans.SingleStream}, {"MultiStream", d.Plans.MultiStream},
		{"Server", d.Plans.Server}, {"Offline", d.Plans.Offline}} {
		if err := d.run(ctx, out, r.name, r.s); err != nil {
			return out, err
		}
	}
	return out, nil
}

// run runs one scenario through the one run path (Run) and writes its
// bundle; an accuracy run is scored against the labels there, so the
// bundle keeps the outcome.
func (d *Demo) run(ctx context.Context, out *DemoOutcome, name string, s loadgen.Settings) error {
	sut := d.sut
	if s.Scenario == loadgen.Server {
		sut = d.serverSUT
	}
	sut.ResetStats()
	p := Plan{
		Custom:    &Custom{SUT: sut, QSL: d.qsl, Labels: d.qsl.Label, Target: d.plan.Data.Target},
		Settings:  Settings{Explicit: &s},
		OutputDir: filepath.Join(d.plan.OutputDir, strings.ToLower(strings.ReplaceAll(name, " ", "-"))),
		Name:      name, StallTimeout: DemoStallTimeout,
	}
	if d.plan.Prepare != nil {
		d.plan.Prepare(name, &p)
	}
	if s.Scenario == loadgen.Server { // a spin window applies to a schedule only
		p.SpinWindow = d.plan.SpinWindow
	}
	o, err := Run(ctx, p)
	if o != nil {
		out.Runs = append(out.Runs, DemoRun{Name: name, Outcome: o, Stages: sut.Stats()})
	}
	return err
}

// Invalid reports whether a run of the demo has a verdict that failed.
func (o *DemoOutcome) Invalid() bool {
	for _, r := range o.Runs {
		if r.Outcome.Verdict.Kind != VerdictNone && !r.Outcome.Verdict.Pass {
			return true
		}
	}
	return false
}

// Report is the demo's HTML report: its runs, the machine of the first,
// the model, and for each run the machine's load and the SUT's mean stage
// times per sample.
func (o *DemoOutcome) Report(generated time.Time) (*report.Report, error) {
	rep := &report.Report{
		Title:     "aimeter demo: reference MLP on " + o.DataName,
		Generated: generated,
	}
	if len(o.Runs) > 0 {
		rep.System = o.Runs[0].Outcome.Bundle.System
	}
	m := o.Model
	rep.Notes = append(rep.Notes, fmt.Sprintf("Model: pure-Go MLP %v, %d parameters, %d FLOP per sample.", m.Layers(), m.NumParams(), m.FLOPsPerSample()))
	for _, r := range o.Runs {
		sc, err := r.Outcome.Derived.ReportRun()
		if err != nil {
			return nil, err
		}
		rep.Runs = append(rep.Runs, sc)
		if l := r.Outcome.Bundle.HostLoad; l != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: during the run %s.", r.Name, l))
		}
		if r.Stages.Samples > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: SUT stage times per sample: preprocess %v, inference %v, postprocess %v (mean batch %.1f).",
				r.Name, r.Stages.MeanPerSample(reference.Preprocess), r.Stages.MeanPerSample(reference.Inference),
				r.Stages.MeanPerSample(reference.Postprocess), r.Stages.MeanBatch()))
		}
	}
	return rep, nil
}

// DemoReportFile is the name of the demo's HTML report in its output
// directory.
const DemoReportFile = "report.html"

// WriteReport writes the demo's report (Report, generated now) to
// DemoReportFile in dir, creating dir, and returns its path.
func (o *DemoOutcome) WriteReport(dir string) (string, error) {
	rep, err := o.Report(time.Now())
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, DemoReportFile)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := report.Write(f, rep); err != nil {
		f.Close()
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return path, f.Close()
}
