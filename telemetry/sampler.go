package telemetry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultPeriod is the sampling period when Options.Period is 0: once a
// second, as GB/T 45087 asks (GB-6.6.3-T7-PTR) and MLPerf Power samples.
const DefaultPeriod = time.Second

// DefaultWindowTimeout bounds a Windowed source's answer when
// Options.WindowTimeout is 0.
const DefaultWindowTimeout = 30 * time.Second

// Options controls a Sampler. The zero value samples once a second.
type Options struct {
	// Period is the time between two reads of a Poller; 0 means
	// DefaultPeriod.
	Period time.Duration
	// ReadTimeout bounds one read; a read that takes longer leaves a Gap.
	// 0 means half the period.
	ReadTimeout time.Duration
	// WindowTimeout bounds a Windowed source's answer after the run; 0
	// means DefaultWindowTimeout.
	WindowTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Period <= 0 {
		o.Period = DefaultPeriod
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = o.Period / 2
	}
	if o.WindowTimeout <= 0 {
		o.WindowTimeout = DefaultWindowTimeout
	}
	return o
}

// Sampler reads the Pollers of a run on goroutines of its own (one per
// source), once a period, from Start to Stop, and asks the Windowed sources
// for the run's window at Stop. Nothing it does blocks the caller between
// Start and Stop.
type Sampler struct {
	start   time.Time
	opts    Options
	sources []Source
	stop    chan struct{}
	wg      sync.WaitGroup

	mu       sync.Mutex
	readings []Reading
	gaps     []Gap
	stopped  bool
	origin   time.Time // the Log's clock origin; zero: start
	screen   screen    // of the polled series
}

// screen is what keep remembers of each series between readings: the time
// of its last reading kept, and the gap of a reading left out that waits
// for the next reading to know how long it lasts.
type screen struct {
	last map[SeriesKey]int64
	open map[SeriesKey]int // index in Sampler.gaps
}

// keep appends the readings rs of src, read at time t (or each at its own
// T when t < 0), to the sampler's, leaving out each power reading above
// src's ceiling (a gap that lasts from the series' reading before to its
// next), and records the series gaps the source reported, each from the
// series' reading before to t. Call it with s.mu held.
func (s *Sampler) keep(sc *screen, src Source, rs []Reading, reported SeriesGaps, t int64) {
	if sc.last == nil {
		sc.last, sc.open = map[SeriesKey]int64{}, map[SeriesKey]int{}
	}
	name := src.Name()
	for _, g := range reported {
		g.Source = name
		k := SeriesKey{name, g.Node, g.Device, g.Kind}
		g.T = t
		if prev, ok := sc.last[k]; ok && prev < t {
			g.T, g.DurationNs = prev, t-prev
		}
		s.gaps = append(s.gaps, g)
	}
	for _, r := range rs {
		k := keyOf(r)
		if r.Kind == Power {
			if c := ceilingOf(src, r.Node, r.Device); r.Value > c {
				g := Gap{Source: name, Node: r.Node, Device: r.Device, Kind: r.Kind, T: r.T,
					Reason: fmt.Sprintf("a reading of %g W is above the ceiling of %.0f W: left out", r.Value, c)}
				if prev, ok := sc.last[k]; ok && prev < r.T {
					g.T = prev
				}
				if i, ok := sc.open[k]; ok { // two in a row: one gap
					s.gaps[i].Reason += "; " + g.Reason
					continue
				}
				sc.open[k] = len(s.gaps)
				s.gaps = append(s.gaps, g)
				continue
			}
		}
		if i, ok := sc.open[k]; ok {
			s.gaps[i].DurationNs = r.T - s.gaps[i].T
			delete(sc.open, k)
		}
		sc.last[k] = r.T
		s.readings = append(s.readings, r)
	}
}

// splitGaps takes the SeriesGaps out of err (itself, or among the errors
// it joins) and returns the rest.
func splitGaps(err error) (SeriesGaps, error) {
	var sg SeriesGaps
	if errors.As(err, &sg) && err.Error() == sg.Error() {
		return sg, nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil, err
	}
	var rest []error
	for _, e := range j.Unwrap() {
		g, r := splitGaps(e)
		sg = append(sg, g...)
		if r != nil {
			rest = append(rest, r)
		}
	}
	return sg, errors.Join(rest...)
}

// SetOrigin makes origin the clock origin of the Log that Stop returns:
// the run's start, when the Sampler started before it (a warm-up). The
// Windowed sources are then asked with origin as their clock's start, so
// that a replay's t_ns (on the run's clock) lands where it belongs, and
// the polled readings are shifted onto it. Call it before Stop.
func (s *Sampler) SetOrigin(origin time.Time) {
	s.mu.Lock()
	s.origin = origin
	s.mu.Unlock()
}

// Start starts sampling sources, with start as the clock's origin (T = 0).
// The first read of each Poller happens at once, the next ones every period;
// Stop makes a last one.
func Start(start time.Time, sources []Source, opts Options) *Sampler {
	s := &Sampler{start: start, opts: opts.withDefaults(), sources: sources, stop: make(chan struct{})}
	for _, src := range sources {
		if p, ok := src.(Poller); ok {
			s.wg.Go(func() { s.poll(p) })
		}
	}
	return s
}

// now is the time on the run's clock.
func (s *Sampler) now() int64 { return time.Since(s.start).Nanoseconds() }

func (s *Sampler) poll(p Poller) {
	t := time.NewTicker(s.opts.Period)
	defer t.Stop()
	busy := make(chan struct{}, 1) // holds a token while a read runs
	s.read(p, busy)
	for {
		select {
		case <-s.stop:
			s.read(p, busy)
			return
		case <-t.C:
			s.read(p, busy)
		}
	}
}

// read reads p once, bounded by the read timeout. A read that outlives its
// timeout keeps running on its own goroutine (a sysfs read cannot be
// interrupted) and the reads due meanwhile leave gaps instead of piling up.
func (s *Sampler) read(p Poller, busy chan struct{}) {
	due := s.now()
	select {
	case busy <- struct{}{}:
	default:
		s.gap(p.Name(), due, "the previous read is still running")
		return
	}
	type answer struct {
		rs  []Reading
		err error
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ReadTimeout)
	defer cancel()
	done := make(chan answer, 1)
	go func() {
		defer func() { <-busy }()
		rs, err := p.Poll(ctx)
		done <- answer{rs, err}
	}()
	select {
	case a := <-done:
		end := s.now()
		reported, err := splitGaps(a.err)
		if err != nil {
			s.gap(p.Name(), due, err.Error())
			return
		}
		mid := due + (end-due)/2 // the read's midpoint stands for its time
		good := a.rs[:0]
		for _, r := range a.rs {
			r.T, r.Source = mid, p.Name()
			if err := r.check(); err != nil {
				s.gap(p.Name(), due, fmt.Sprintf("%s %s: %v", r.Device, r.Kind, err))
				continue
			}
			good = append(good, r)
		}
		s.mu.Lock()
		s.keep(&s.screen, p, good, reported, mid)
		s.mu.Unlock()
	case <-ctx.Done():
		s.gap(p.Name(), due, fmt.Sprintf("no answer within the read timeout of %v", s.opts.ReadTimeout))
	}
}

func (s *Sampler) gap(source string, t int64, reason string) {
	s.mu.Lock()
	s.gaps = append(s.gaps, Gap{Source: source, T: t, Reason: reason})
	s.mu.Unlock()
}

// Stop makes a last read of each Poller, waits for it, asks each Windowed
// source for the readings from the start to now (each bounded by the window
// timeout, and by ctx), measures the clock of each that answered and is
// Clocked, and returns the Log. A source that fails leaves a
// Gap; Stop itself fails only when called twice.
func (s *Sampler) Stop(ctx context.Context) (*Log, error) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil, errors.New("telemetry: Sampler.Stop called twice")
	}
	s.stopped = true
	s.mu.Unlock()
	end := s.now()
	close(s.stop)
	s.wg.Wait()
	to := s.start.Add(time.Duration(end))
	origin := s.start
	if !s.origin.IsZero() {
		origin = s.origin
		shift := s.start.Sub(origin).Nanoseconds()
		for i := range s.readings {
			s.readings[i].T += shift
		}
		for i := range s.gaps {
			s.gaps[i].T += shift
		}
	}
	now := func() int64 { return time.Since(origin).Nanoseconds() }
	var clocks []ClockReading
	for _, src := range s.sources {
		w, ok := src.(Windowed)
		if !ok {
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, s.opts.WindowTimeout)
		rs, err := w.Window(wctx, origin, s.start, to)
		cancel()
		reported, err := splitGaps(err)
		for _, g := range reported { // a windowed source knows their times
			g.Source = w.Name()
			s.gaps = append(s.gaps, g)
		}
		if err != nil { // what it did read still counts
			s.gap(w.Name(), 0, err.Error())
		} else if c, ok := src.(Clocked); ok {
			// Its clock, once it has answered: a source that did not
			// answer is not asked again.
			cctx, cancel := context.WithTimeout(ctx, s.opts.WindowTimeout)
			t := now()
			off, unc, err := c.ClockOffset(cctx)
			cancel()
			if err != nil {
				s.gap(c.Name(), t, "clock check: "+err.Error())
			} else {
				clocks = append(clocks, ClockReading{Source: c.Name(), T: t, OffsetNs: off.Nanoseconds(), UncertaintyNs: unc.Nanoseconds()})
			}
		}
		good := rs[:0]
		for _, r := range rs {
			r.Source = w.Name()
			if err := r.check(); err != nil {
				s.gap(w.Name(), r.T, fmt.Sprintf("%s %s: %v", r.Device, r.Kind, err))
				continue
			}
			good = append(good, r)
		}
		sortReadings(good)
		s.mu.Lock()
		s.keep(&screen{}, w, good, nil, -1)
		s.mu.Unlock()
	}
	l := &Log{StartUnixNs: origin.UnixNano(), PeriodNs: s.opts.Period.Nanoseconds(), Readings: s.readings, Gaps: s.gaps, Clocks: clocks}
	for _, src := range s.sources {
		_, polled := src.(Poller)
		l.Sources = append(l.Sources, SourceInfo{Name: src.Name(), Spec: src.Spec(), Polled: polled, Notes: src.Notes()})
	}
	sortReadings(l.Readings)
	if l.Readings == nil {
		l.Readings = []Reading{}
	}
	return l, nil
}
