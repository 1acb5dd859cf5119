// Package scrape reads the Prometheus metrics of the servers under test
// while a run goes: every endpoint is fetched at a fixed interval, each
// exposition parsed with the Prometheus text parser
// (github.com/prometheus/common/expfmt), and every scrape kept with its
// time on the run's clock as a bundle.ServerMetrics (server_metrics.jsonl).
//
// A scrape that fails (the endpoint is down, slower than the timeout, or
// sends what is not the text format) is kept as a gap with its error. It
// never holds up the run: each endpoint is read by its own goroutine, every
// request is bounded by a timeout, and Stop cancels the requests in flight.
//
// Known reads the series that vLLM, SGLang, Text Generation Inference and
// Triton expose for running and waiting requests, KV-cache usage and the
// prefix-cache hit rate, whatever server sent them.
package scrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"aimeter/bundle"
)

// DefaultInterval is the time between two scrapes of one endpoint when
// Options.Interval is 0.
const DefaultInterval = time.Second

// DefaultMaxBytes bounds the exposition read from one scrape when
// Options.MaxBytes is 0.
const DefaultMaxBytes = 16 << 20

// accept asks for the classic text format, which every server named in
// the package comment sends, and which expfmt's text parser reads.
const accept = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// Options say what to scrape and how often.
type Options struct {
	// Targets are the metrics endpoints: absolute http or https URLs.
	Targets []string
	// Interval is the time between the starts of two scrapes of one
	// endpoint; 0 means DefaultInterval. A scrape that takes longer
	// than the interval makes the next one start when it ends.
	Interval time.Duration
	// Timeout bounds one scrape, from its request to the end of its body;
	// 0 means the interval. A scrape past it is a gap.
	Timeout time.Duration
	// MaxBytes bounds the exposition read from one scrape; 0 means
	// DefaultMaxBytes. A larger body is a gap.
	MaxBytes int64
	// Buckets keeps the buckets of histograms and the quantiles of
	// summaries (NAME_bucket, NAME{quantile=…}); false keeps only their
	// NAME_sum and NAME_count, which is enough for a mean per interval and
	// keeps the bundle small (vLLM exposes about 20 buckets for each of
	// its 15 histograms).
	Buckets bool
	// Client makes the requests; nil means a client of its own.
	Client *http.Client
}

// Check returns an error naming the first target or option that is not
// usable, before anything is started.
func (o Options) Check() error {
	if len(o.Targets) == 0 {
		return errors.New("scrape: no metrics endpoint to scrape")
	}
	for i, t := range o.Targets {
		if err := checkURL(t); err != nil {
			return fmt.Errorf("scrape: metrics endpoint %d (%q): %w", i+1, t, err)
		}
	}
	switch {
	case o.Interval < 0:
		return fmt.Errorf("scrape: interval %v is negative", o.Interval)
	case o.Interval > 0 && o.Interval < 10*time.Millisecond:
		return fmt.Errorf("scrape: interval %v is under 10ms: a server's metrics do not change that fast, and scraping that often loads it", o.Interval)
	case o.Timeout < 0:
		return fmt.Errorf("scrape: timeout %v is negative", o.Timeout)
	case o.MaxBytes < 0:
		return fmt.Errorf("scrape: MaxBytes %d is negative", o.MaxBytes)
	}
	return nil
}

func checkURL(t string) error {
	u, err := url.Parse(t)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("want an http:// or https:// URL")
	}
	if u.Host == "" {
		return errors.New("the URL has no host")
	}
	return nil
}

// Scraper scrapes its endpoints from Start to Stop. Its lifecycle is a
// telemetry.Sampler's: started before the run, on a clock that counts from
// its start, given the run's time zero with SetOrigin once it is known,
// and stopped with Stop, which returns its record on that clock.
type Scraper struct {
	opts   Options
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	done   []scrapeAt
	stop   sync.Once
	out    *bundle.ServerMetrics
	start  time.Time
	origin time.Time // the record's clock origin; zero: start
}

// scrapeAt is a scrape with its start on the monotonic clock.
type scrapeAt struct {
	at time.Time
	s  bundle.Scrape
}

// Start checks opts and starts scraping every target at once, then every
// interval, until Stop or until ctx ends.
func Start(ctx context.Context, opts Options) (*Scraper, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Timeout == 0 {
		opts.Timeout = opts.Interval
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 2, DisableCompression: false}}
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Scraper{opts: opts, cancel: cancel, start: time.Now()}
	for i := range opts.Targets {
		s.wg.Go(func() { s.loop(ctx, i) })
	}
	return s, nil
}

// loop scrapes target i until ctx ends: at its start, then at every
// multiple of the interval from it, skipping the times a slow scrape
// overran.
func (s *Scraper) loop(ctx context.Context, i int) {
	start := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for k := int64(0); ; {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		sc := s.scrapeOnce(ctx, i)
		if ctx.Err() != nil && sc.s.Error != "" {
			// Cut short by Stop: not a gap of the server's.
			return
		}
		s.mu.Lock()
		s.done = append(s.done, sc)
		s.mu.Unlock()
		elapsed := time.Since(start)
		k = max(k+1, int64(elapsed/s.opts.Interval)+1)
		timer.Reset(time.Duration(k)*s.opts.Interval - elapsed)
	}
}

// scrapeOnce fetches and parses target i once.
func (s *Scraper) scrapeOnce(ctx context.Context, i int) scrapeAt {
	at := time.Now()
	samples, err := s.fetch(ctx, s.opts.Targets[i])
	sc := scrapeAt{at: at, s: bundle.Scrape{Target: i, DurationNs: int64(time.Since(at)), Samples: samples}}
	if err != nil {
		sc.s.Error, sc.s.Samples = err.Error(), nil
	}
	return sc
}

// fetch reads one exposition from target.
func (s *Scraper) fetch(ctx context.Context, target string) ([]bundle.MetricSample, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := s.opts.Client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer within %v", s.opts.Timeout)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("HTTP status %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.opts.MaxBytes+1))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("the body did not end within %v", s.opts.Timeout)
		}
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	if int64(len(body)) > s.opts.MaxBytes {
		return nil, fmt.Errorf("the exposition is larger than %d bytes", s.opts.MaxBytes)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" && !textLike(ct) {
		return nil, fmt.Errorf("content type %q is not the Prometheus text format", ct)
	}
	return Parse(string(body), s.opts.Buckets)
}

// textLike reports whether a Content-Type can hold the text format:
// text/plain (as Prometheus clients send it), OpenMetrics text, or none
// said more precisely than octets. An HTML page (a proxy's or a web UI's
// answer for a path it does not have) is not.
func textLike(ct string) bool {
	ct = strings.ToLower(strings.TrimSpace(ct))
	return strings.HasPrefix(ct, "text/plain") || strings.HasPrefix(ct, "application/openmetrics-text") || strings.HasPrefix(ct, "application/octet-stream")
}

// Parse parses one exposition in the Prometheus text format with expfmt's
// parser and flattens it into samples, sorted by name and then labels. An
// OpenMetrics text exposition parses too where it keeps to the classic
// syntax (its "# EOF" line is a comment to the text parser). A histogram
// gives NAME_sum and NAME_count (and NAME_bucket per "le" with buckets), a
// summary NAME_sum, NAME_count (and NAME per "quantile" with buckets).
// An exposition with no sample at all is an error: it is not what a
// metrics endpoint sends.
func Parse(text string, buckets bool) ([]bundle.MetricSample, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("not the Prometheus text format: %w", err)
	}
	var out []bundle.MetricSample
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			out = appendMetric(out, name, f.GetType(), m, buckets)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the exposition holds no sample")
	}
	// Sort by name, then labels: each sample's label key made once.
	keyed := make([]keyedSample, len(out))
	for i, s := range out {
		keyed[i] = keyedSample{s, labelKey(s.Labels)}
	}
	slices.SortFunc(keyed, func(a, b keyedSample) int {
		if c := strings.Compare(a.s.Name, b.s.Name); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	for i := range keyed {
		out[i] = keyed[i].s
	}
	return out, nil
}

type keyedSample struct {
	s   bundle.MetricSample
	key string
}

// labelKey is labels in one comparable string, sorted by name.
func labelKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(labels[k])
		b.WriteByte(0)
	}
	return b.String()
}

func appendMetric(out []bundle.MetricSample, name string, typ dto.MetricType, m *dto.Metric, buckets bool) []bundle.MetricSample {
	labels := func(extra ...string) map[string]string {
		if len(m.GetLabel()) == 0 && len(extra) == 0 {
			return nil
		}
		l := make(map[string]string, len(m.GetLabel())+len(extra)/2)
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		return l
	}
	add := func(n string, v float64, l map[string]string) {
		out = append(out, bundle.MetricSample{Name: n, Labels: l, Value: v})
	}
	switch typ {
	case dto.MetricType_COUNTER:
		add(name, m.GetCounter().GetValue(), labels())
	case dto.MetricType_GAUGE:
		add(name, m.GetGauge().GetValue(), labels())
	case dto.MetricType_SUMMARY:
		s := m.GetSummary()
		add(name+"_sum", s.GetSampleSum(), labels())
		add(name+"_count", float64(s.GetSampleCount()), labels())
		if buckets {
			for _, q := range s.GetQuantile() {
				add(name, q.GetValue(), labels("quantile", model.FloatString(q.GetQuantile()).String()))
			}
		}
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		h := m.GetHistogram()
		add(name+"_sum", h.GetSampleSum(), labels())
		add(name+"_count", float64(h.GetSampleCount()), labels())
		if buckets {
			for _, b := range h.GetBucket() {
				add(name+"_bucket", float64(b.GetCumulativeCount()), labels("le", leString(b.GetUpperBound())))
			}
		}
	default: // untyped
		add(name, m.GetUntyped().GetValue(), labels())
	}
	return out
}

func leString(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return model.FloatString(v).String()
}

// SetOrigin makes origin the clock origin of the record Stop returns: the
// run's start (loadgen.Result.StartTime, which keeps its monotonic reading
// in a live run), when the Scraper started before it. Without it the
// clock counts from Start. Call it before Stop.
func (s *Scraper) SetOrigin(origin time.Time) {
	s.mu.Lock()
	s.origin = origin
	s.mu.Unlock()
}

// Stop ends the scraping, cancelling the requests in flight, and returns
// every scrape with its time from the origin (SetOrigin, or Start). It
// returns at once, and the same value when called again; its error is
// always nil, and ctx is not needed (nothing is asked after the run): they
// are there so that a Scraper stops as a telemetry.Sampler does.
func (s *Scraper) Stop(ctx context.Context) (*bundle.ServerMetrics, error) {
	s.stop.Do(func() {
		s.cancel()
		s.wg.Wait()
		s.mu.Lock()
		origin := s.origin
		s.mu.Unlock()
		if origin.IsZero() {
			origin = s.start
		}
		out := &bundle.ServerMetrics{IntervalNs: int64(s.opts.Interval)}
		for _, t := range s.opts.Targets {
			out.Targets = append(out.Targets, redact(t))
		}
		slices.SortStableFunc(s.done, func(a, b scrapeAt) int { return a.at.Compare(b.at) })
		for _, d := range s.done {
			sc := d.s
			sc.TimeNs = int64(d.at.Sub(origin))
			out.Scrapes = append(out.Scrapes, sc)
		}
		s.done = nil
		s.out = out
	})
	return s.out, nil
}

// redact removes the password of a URL's user information, as every URL
// a bundle stores.
func redact(t string) string {
	u, err := url.Parse(t)
	if err != nil || u.User == nil {
		return t
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Probe scrapes target once, within timeout, and returns nil when it
// answered with a Prometheus exposition: the test that makes a server's
// /metrics a default target.
func Probe(ctx context.Context, client *http.Client, target string, timeout time.Duration) error {
	if err := checkURL(target); err != nil {
		return err
	}
	if client == nil {
		client = http.DefaultClient
	}
	s := &Scraper{opts: Options{Timeout: timeout, MaxBytes: DefaultMaxBytes, Client: client}}
	_, err := s.fetch(ctx, target)
	return err
}

// Summary says in one line how the scraping went: how many scrapes of
// how many endpoints, how many failed and the first failure.
func Summary(m *bundle.ServerMetrics) string {
	if m == nil {
		return "no server metrics"
	}
	failed := 0
	first := ""
	for _, s := range m.Scrapes {
		if s.Error != "" {
			if failed == 0 {
				first = fmt.Sprintf("%s at %.1f s: %s", m.Targets[s.Target], float64(s.TimeNs)/1e9, s.Error)
			}
			failed++
		}
	}
	line := fmt.Sprintf("%d scrapes of %d metrics endpoint(s) every %v", len(m.Scrapes), len(m.Targets), time.Duration(m.IntervalNs))
	if failed > 0 {
		line += fmt.Sprintf(", %d failed (recorded as gaps; first: %s)", failed, first)
	}
	return line
}
