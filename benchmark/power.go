package benchmark

import (
	"context"
	"time"

	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/telemetry"
	"aimeter/train"
	"aimeter/train/trainbundle"
)

// powerRecorder samples the plan's power, energy and utilisation sources
// (package telemetry) into the bundle's telemetry.json. It is an early
// recorder: it starts before the warm-up, so that the warm-up's energy is
// cut from the same telemetry as the measured run's (result.json's power
// phases), and its log is put on the run's clock at Stop (ns from its time
// zero, the clock of the records and of a replay's t_ns). Stop runs after
// an interrupted run too: the windowed sources are asked without the run's
// cancellation, each within its own timeout (PowerOptions), so a failing
// or silent source neither fails nor holds up the run: its reads that gave
// nothing are gaps in the log, with a warning, and a log that cannot be
// made at all is a warning and no telemetry.json.
type powerRecorder struct {
	sources []telemetry.Source
	opts    telemetry.Options
	notify  func(NoticeKind, string, ...any)
	ctx     context.Context
	s       *telemetry.Sampler
	log     *telemetry.Log
}

func (p *powerRecorder) BeforeWarmup() {}

func (p *powerRecorder) Start(ctx context.Context) error {
	p.ctx = ctx
	p.s = telemetry.Start(time.Now(), p.sources, p.opts)
	return nil
}

func (p *powerRecorder) Stop(res *loadgen.Result) {
	l, ok, err := stopSampler(p.ctx, p.s, res)
	switch {
	case !ok: // no run: nothing to keep
		return
	case err != nil:
		p.notify(Warning, "power: %v", err)
		return
	}
	if n := len(l.Gaps); n > 0 {
		g := l.Gaps[0]
		p.notify(Warning, "power: %d reads gave nothing or were left out (the first, of %s: %s); telemetry.json lists them and result.json's coverage counts them", n, g.Source, g.Reason)
	}
	p.log = l
}

func (p *powerRecorder) Attach(b *bundle.Bundle) { telemetry.SetLog(b, p.log) }

// trainPowerRecorder is the power recorder of a training test (Train):
// the same sampler and lifecycle, but its reads go into the training's
// events (training_events.jsonl, train.TelemetryEvents) on the training
// run's clock instead of into telemetry.json, and a log that cannot be
// made is no events and no notice.
type trainPowerRecorder struct {
	powerRecorder
	// node names the machine in the events.
	node string
}

func (p *trainPowerRecorder) Stop(res *loadgen.Result) {
	l, ok, err := stopSampler(p.ctx, p.s, res)
	if !ok || err != nil {
		return
	}
	if n := len(l.Gaps); n > 0 {
		p.notify(Info, "power: %d reads gave nothing (the first, of %s: %s)", n, l.Gaps[0].Source, l.Gaps[0].Reason)
	}
	p.log = l
}

func (p *trainPowerRecorder) Attach(b *bundle.Bundle) {
	if p.log != nil {
		trainbundle.Of(b).Events = append(trainbundle.Of(b).Events, train.TelemetryEvents(p.log, p.node)...)
	}
}
