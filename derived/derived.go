// Package derived produces every derived file of a run bundle from its raw
// parts: LoadGen's summary, detail log and trace (package mlperflog), the
// GB/T 45087 result and inference log (package gbt), the training result
// and log (package train) and report.html (package report). The files are
// registered in one list (see files), so a new derived file is one entry;
// Write, Regenerate and `aimeter report` all go through it, and a bundle
// read back from its directory derives the same bytes as the live run.
//
// Package bundle stores and reads the raw parts and computes nothing;
// this package is where they become metrics and pages. The per-run figures
// of the records (per-request figures and goodput, ITL and E2E, the
// steady-state windows) are computed in its subpackage metrics, which sits
// below sweep and report so that they use the same figures; the GB/T
// figures (gbt.Evaluate, ECP) need the bundle's test description and
// power, and are computed here.
package derived

import (
	"aimeter/aisbench"
	"aimeter/bandwidth"
	"aimeter/sysinfo"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/derived/metrics"
	"aimeter/gbt"
	"aimeter/mlperflog"
	"aimeter/report"
	"aimeter/shard"
	"aimeter/sysdesc"
	"aimeter/telemetry"
	"aimeter/train"
	"aimeter/train/trainbundle"
	"aimeter/workload/trace"
)

// Set derives the files and metrics of one bundle. The GB/T metrics and
// the training result are computed once, on first use, and shared by
// every file that needs them. Make one with Of; it is safe for concurrent
// use once made.
type Set struct {
	b *bundle.Bundle

	gbtOnce sync.Once
	gbtRun  gbt.RunData
	gbtM    gbt.Metrics
	gbtErr  error

	trainOnce sync.Once
	trainRes  *train.ResultFile
	trainErr  error

	lateOnce sync.Once
	late     *trace.LatenessSummary

	streamOnce sync.Once
	stream     *metrics.Streaming

	steadyOnce sync.Once
	steady     *metrics.Steady

	bwOnce sync.Once
	bw     *bandwidth.Report
}

// Bandwidth is the MLPerf datacenter bandwidth check of the run
// (bandwidth.Of with the NIC of nicOf): nil for a bundle without the
// declaration (bandwidth.Part). bandwidth.json, result.json, the report,
// the console and aimeter check give this one computation.
func (s *Set) Bandwidth() *bandwidth.Report {
	s.bwOnce.Do(func() {
		if s.b != nil {
			s.bw = bandwidth.Of(s.b, nicOf(s.b))
		}
	})
	return s.bw
}

// nicOf is the capacity of the network interfaces the run's traffic left
// by (sysinfo.System.TrafficInterfaces, from the route to each server):
// one interface's link speed, or the sum over several (a dispatcher's
// nodes reached by different interfaces), named "eth0+eth1". It is
// unknown (BitsPerSecond 0) when no route is recorded, when a route's
// interface has no NIC record or an unknown speed (a virtual or loopback
// interface): never guessed.
func nicOf(b *bundle.Bundle) bandwidth.NIC {
	ifaces := b.System.TrafficInterfaces()
	if len(ifaces) == 0 {
		return bandwidth.NIC{}
	}
	var bits int64
	for _, name := range ifaces {
		i := slices.IndexFunc(b.System.NICs, func(n sysinfo.NIC) bool { return n.Name == name })
		if i < 0 || b.System.NICs[i].SpeedMbps <= 0 {
			return bandwidth.NIC{Name: strings.Join(ifaces, "+")}
		}
		bits += b.System.NICs[i].SpeedMbps * 1_000_000
	}
	return bandwidth.NIC{Name: strings.Join(ifaces, "+"), BitsPerSecond: bits}
}

// Steady is the steady state of the reported pass (metrics.SteadyOf): nil
// for a run without token times. result.json and the report give this one
// computation, which holds the pass's records while it runs.
func (s *Set) Steady() *metrics.Steady {
	s.steadyOnce.Do(func() {
		if s.b != nil && s.b.Result != nil {
			s.steady = metrics.SteadyOf(s.b.Result)
		}
	})
	return s.steady
}

// Streaming are the token figures of a streamed run's reported pass
// (metrics.StreamingOf): nil for a run without token times. result.json
// (streaming), the report and the console give this one computation.
func (s *Set) Streaming() *metrics.Streaming {
	s.streamOnce.Do(func() {
		if s.b != nil {
			s.stream = metrics.StreamingOf(s.b.Result)
		}
	})
	return s.stream
}

// SendLateness is how late the reported pass's samples were issued
// against their scheduled times (issue − scheduled), for a run on a
// schedule: the Server scenario at a target rate, or a trace replay. Nil
// for other runs, whose scheduled times are not send times. result.json
// (send_lateness), the report and the console give this one summary; it
// is computed once, as it sorts every record's lateness.
func (s *Set) SendLateness() *trace.LatenessSummary {
	s.lateOnce.Do(func() {
		if s.b != nil && s.b.Result != nil {
			s.late = sendLatenessOf(s.b.Result)
		}
	})
	return s.late
}

// Of returns the derivations of b. Set b's parts (Result, GBT, Foreign,
// Training) before the first call of a method.
func Of(b *bundle.Bundle) *Set { return &Set{b: b} }

// Bundle returns the bundle the Set derives from.
func (s *Set) Bundle() *bundle.Bundle { return s.b }

// Write writes the bundle into dir with every derived file and its
// manifest (bundle.Write with Files).
func (s *Set) Write(dir string) error { return bundle.Write(dir, s.b, s.Files()) }

// Regenerate writes every derived file into dir again from the raw parts
// (bundle.Regenerate with Files) and returns their names.
func (s *Set) Regenerate(dir string) ([]string, error) {
	return bundle.Regenerate(dir, s.b, s.Files())
}

// Write writes b into dir with every derived file: Of(b).Write(dir).
func Write(dir string, b *bundle.Bundle) error { return Of(b).Write(dir) }

// Regenerate is Of(b).Regenerate(dir).
func Regenerate(dir string, b *bundle.Bundle) ([]string, error) { return Of(b).Regenerate(dir) }

// entry is one derived file: its name, which bundles have it, and how it
// is made. b is the bundle the file belongs to: s's own bundle, or for
// the files of a mixed test's foreign run, that foreign run.
type entry struct {
	name  string
	has   func(b *bundle.Bundle) bool
	write func(s *Set, b *bundle.Bundle, w io.Writer) error
	// mainOnly leaves the file out of a mixed test's foreign run.
	mainOnly bool
}

// files is every derived file a bundle can have.
var files = []entry{
	{bundle.SummaryFile, isRun, writeSummary, false},
	{bundle.ResultFile, isRun, writeResult, true},
	{bundle.DetailFile, isRun, func(_ *Set, b *bundle.Bundle, w io.Writer) error {
		return mlperflog.WriteDetail(w, b.Result, mlperflog.DetailOptions{Version: b.Version, PID: b.ProcessID(), Location: b.TimeZone()})
	}, false},
	{bundle.TraceFile, func(b *bundle.Bundle) bool { return isRun(b) && b.Trace }, func(_ *Set, b *bundle.Bundle, w io.Writer) error {
		return mlperflog.WriteTrace(w, b.Result)
	}, false},
	{bandwidth.File, func(b *bundle.Bundle) bool { return isRun(b) && bandwidth.Part.Has(b) }, func(s *Set, _ *bundle.Bundle, w io.Writer) error {
		r := s.Bandwidth()
		if r == nil {
			return fmt.Errorf("derived: %s of a bundle without %s", bandwidth.File, bandwidth.InputFile)
		}
		return r.Write(w)
	}, true},
	{bundle.ReportFile, func(b *bundle.Bundle) bool { return trainbundle.Of(b) != nil || (isRun(b) && !b.NoReport) }, writeReport, false},
	{bundle.GBTLogFile, isGBT, func(s *Set, b *bundle.Bundle, w io.Writer) error {
		s.evaluateGBT()
		return gbt.WriteInferenceLog(w, gbt.TestOf(b), s.gbtRun.Main.Records)
	}, false},
	{bundle.GBTResultFile, isGBT, func(s *Set, _ *bundle.Bundle, w io.Writer) error {
		m, err := s.GBTMetrics()
		if err != nil {
			return err
		}
		return gbt.WriteResultFile(w, gbt.NewResultFile(s.gbtRun, m))
	}, false},
	{bundle.TrainingResultFile, isTraining, func(s *Set, _ *bundle.Bundle, w io.Writer) error {
		res, err := s.TrainingResult()
		if err != nil {
			return err
		}
		return train.WriteResult(w, res)
	}, false},
	{sysdesc.MLPerfFile, isNetworkDivision, writeMLPerfNetwork, true},
	{bundle.TrainingLogFile, isTraining, func(_ *Set, b *bundle.Bundle, w io.Writer) error {
		t := trainbundle.Of(b)
		return train.WriteLog(w, t.Events, train.LogOptions{Location: t.Run.Location(), Origin: t.Run.Origin})
	}, false},
}

func isRun(b *bundle.Bundle) bool      { return b.Result != nil }
func isGBT(b *bundle.Bundle) bool      { return b.Result != nil && gbt.TestOf(b) != nil }
func isTraining(b *bundle.Bundle) bool { return trainbundle.Of(b) != nil }

// isNetworkDivision reports whether b is a run declared for MLPerf's
// network division with a system description.
func isNetworkDivision(b *bundle.Bundle) bool {
	r := sysdesc.Of(b)
	return b.Result != nil && r != nil && r.Division == "network" && r.Description != nil
}

// writeMLPerfNetwork writes MLPerf's network-mode fields of the system
// description (sysdesc.Record.MLPerfFields) from the description, the
// recorded NICs and routes, and the client's connection bound.
func writeMLPerfNetwork(_ *Set, b *bundle.Bundle, w io.Writer) error {
	in := sysdesc.MLPerfInput{NICs: b.System.NICs, Routes: b.System.Routes, Version: b.Version}
	if inv := invocation.Of(b); inv != nil {
		in.Connections = inv.SUT.Net.MaxConns
	}
	return bundle.WriteJSON(w, sysdesc.Of(b).MLPerfFields(in))
}

// Names returns the names of every derived file a bundle can have.
func Names() []string {
	out := make([]string, len(files))
	for i, e := range files {
		out[i] = e.name
	}
	return out
}

// Files returns the derivations of s's bundle for bundle.Write and
// bundle.Regenerate.
func (s *Set) Files() []bundle.Derivation {
	out := make([]bundle.Derivation, len(files))
	for i, e := range files {
		has := e.has
		if e.mainOnly {
			has = func(b *bundle.Bundle) bool { return b == s.b && e.has(b) }
		}
		out[i] = bundle.Derivation{Name: e.name, For: has, Write: func(w io.Writer, b *bundle.Bundle) error { return e.write(s, b, w) }}
	}
	return out
}

// GBTMetrics returns the clause 7.6 metrics of a GB/T bundle,
// gbt.Evaluate(gbt.RunOf(b)), computed once.
func (s *Set) GBTMetrics() (gbt.Metrics, error) {
	if gbt.TestOf(s.b) == nil || s.b.Result == nil {
		return gbt.Metrics{}, errors.New("derived: not a GB/T bundle")
	}
	s.evaluateGBT()
	return s.gbtM, s.gbtErr
}

func (s *Set) evaluateGBT() {
	s.gbtOnce.Do(func() {
		s.gbtRun = gbt.RunOf(s.b)
		s.gbtRun.Power = gbtPowerGrid(s.b)
		s.gbtM, s.gbtErr = gbt.Evaluate(s.gbtRun)
	})
}

// TrainingResult returns the result of a training bundle
// (gbt_training.json's content), computed once.
func (s *Set) TrainingResult() (*train.ResultFile, error) {
	if trainbundle.Of(s.b) == nil {
		return nil, errors.New("derived: not a training bundle")
	}
	s.trainOnce.Do(func() { s.trainRes, s.trainErr = trainingResult(trainbundle.Of(s.b)) })
	return s.trainRes, s.trainErr
}

func trainingResult(t *trainbundle.Training) (*train.ResultFile, error) {
	run := &t.Run
	m, err := train.Compute(t.Events, run.Config)
	if err != nil {
		return nil, err
	}
	loc := run.Location()
	res := &train.ResultFile{
		Version: train.ResultVersion, Info: run.Info, Training: run.Training, Scenario: run.Scenario, Config: run.Config,
		Metrics: m, Log: train.LogLines(t.Events, train.LogOptions{Location: loc, Origin: run.Origin}),
	}
	res.UTCOffset = train.UTCOffset(time.Unix(0, 0).In(loc))
	if run.AisBench != nil {
		res.Reported = aisbench.Map(run.AisBench, m, run.Config)
	}
	return res, nil
}

// writeSummary writes LoadGen's summary of b; a GB/T test's ends with a
// note that LoadGen's verdict is not the test's (gbt.SummaryNote).
func writeSummary(s *Set, b *bundle.Bundle, w io.Writer) error {
	if err := mlperflog.WriteSummary(w, b.Result); err != nil {
		return err
	}
	if gbt.TestOf(b) == nil || b != s.b {
		return nil
	}
	m, err := s.GBTMetrics()
	if err != nil {
		return err
	}
	v := VerdictOf(b, &m)
	return mlperflog.WriteSummaryNote(w, gbt.SummaryNote(gbt.TestOf(b), m, v.Reasons))
}

// writeReport writes report.html: the training page of a training bundle,
// else the run's page.
func writeReport(s *Set, b *bundle.Bundle, w io.Writer) error {
	if trainbundle.Of(b) != nil {
		res, err := s.TrainingResult()
		if err != nil {
			return err
		}
		t := trainbundle.Of(b)
		return report.WriteTraining(w, &report.Training{Name: t.Run.Name, Source: t.Run.SourceText(), System: t.Run.System,
			Result: res, Events: t.Events, Notes: append(t.Run.Notes(), aisbench.Lines(res.Reported)...)})
	}
	r, err := s.Report()
	if err != nil {
		return err
	}
	return report.Write(w, r)
}

// Report is the HTML report of the bundle alone; its notes give the
// machine's load during the run, when measured.
func (s *Set) Report() (*report.Report, error) {
	b := s.b
	sc, err := s.ReportRun()
	if err != nil {
		return nil, err
	}
	r := &report.Report{System: b.System, Runs: []report.RunSection{sc}, Network: reportNetwork(s)}
	if b.HostLoad != nil {
		r.Notes = append(r.Notes, "During the run "+b.HostLoad.String()+".")
	}
	return r, nil
}

// reportNetwork is the bundle's system description and division for the
// report's section "Network and system", which points to the bandwidth
// check's file when the run has one; nil for neither.
func reportNetwork(s *Set) *report.Network {
	b := s.b
	n := &report.Network{Desc: sysdesc.Of(b)}
	if s.Bandwidth() != nil {
		n.BandwidthFile = bandwidth.File
	}
	if n.Desc == nil && n.BandwidthFile == "" {
		return nil
	}
	return n
}

// ReportRun is the bundle as one scenario of a report.
func (s *Set) ReportRun() (report.RunSection, error) {
	b := s.b
	if b.Result == nil {
		return report.RunSection{}, fmt.Errorf("derived: a report scenario of a bundle without a run")
	}
	name := b.Name
	if name == "" {
		name = b.Result.SUTName + " " + b.Result.Effective.Scenario.String()
	}
	sc := report.RunSection{Name: name, Result: b.Result, Accuracy: ReportAccuracy(b.AccuracyCheck), Nodes: ReportNodes(b.Nodes),
		ServerMetrics: ReportServerMetrics(b.ServerMetrics, b.Result), Steady: s.Steady(),
		Serving: reportServing(b, s.SendLateness(), s.Streaming()), Shards: shard.MergeOf(b),
		Bandwidth: s.Bandwidth()}
	if telemetry.LogOf(b) != nil {
		samples := sampleCounts(b.Result)
		sc.Power = ReportPower(b, powerFigures(b, samples))
	}
	if gbt.TestOf(b) != nil {
		m, err := s.GBTMetrics()
		if err != nil {
			return sc, err
		}
		sc.GBT = &report.GBTRun{Test: gbt.TestOf(b), Metrics: m}
		if b.Foreign != nil {
			sc.GBT.Foreign = b.Foreign.Result
		}
	}
	v, err := s.Verdict()
	if err != nil {
		return sc, err
	}
	sc.Verdict = &report.Verdict{Word: v.Word(), Pass: v.Pass, Reasons: v.Reasons}
	return sc, nil
}

// ReportAccuracy is a stored accuracy check as the report shows it; nil
// for nil.
func ReportAccuracy(a *bundle.AccuracyCheck) *report.AccuracyInfo {
	if a == nil {
		return nil
	}
	return &report.AccuracyInfo{Metric: a.Metric, Value: a.Value, Target: a.Target, Pass: a.Pass}
}

// ReportNodes are stored nodes as the report names them; nil for none.
func ReportNodes(nodes []bundle.Node) []report.Node {
	if nodes == nil {
		return nil
	}
	out := make([]report.Node, len(nodes))
	for i, n := range nodes {
		out[i] = report.Node{Number: n.Number, Name: n.Name, URL: n.URL}
	}
	return out
}
