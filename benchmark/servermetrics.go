package benchmark

import (
	"context"
	"net/url"
	"strings"
	"time"

	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/scrape"
)

// ServerMetrics says which Prometheus endpoints of the servers under test
// a network run scrapes (package scrape), stored in the bundle as
// server_metrics.jsonl and drawn in report.html beside the client's
// timeline. Its zero value scrapes every server's /metrics, once a second,
// when it answers before the run.
type ServerMetrics struct {
	// URLs are the endpoints to scrape (e.g. a Triton server's
	// http://host:8002/metrics, or one per node). Nil means the /metrics
	// of each server the SUT sends to (its http or https base URLs), each
	// kept only if it answers with Prometheus metrics before the run. An
	// endpoint named here is scraped whatever it answers; its failures
	// are recorded as gaps.
	URLs []string
	// Interval is the time between two scrapes; 0 means 1 s.
	Interval time.Duration
	// Off scrapes nothing.
	Off bool
}

// probeTimeout bounds the check of a default endpoint before the run.
const probeTimeout = 2 * time.Second

// scrapeRecorder scrapes the servers' metrics while the run goes (package
// scrape) into the bundle's server_metrics.jsonl. It starts after the
// warm-up: Start checks the default endpoints (each server's /metrics,
// probeTimeout each; one that does not answer is left out with a notice)
// and starts scraping, or does nothing when none answers; an endpoint the
// scraper refuses (ServerMetrics.URLs) fails Start, and with it the run,
// as a *UsageError. Stop puts the record on the run's clock and says how
// the scraping went (a warning when a scrape failed; the failures are
// gaps in the record). Scraping ends with the run's ctx too, and never
// holds up the run.
type scrapeRecorder struct {
	cfg    ServerMetrics
	urls   []string // the servers' base URLs
	notify func(NoticeKind, string, ...any)
	ctx    context.Context
	s      *scrape.Scraper
	m      *bundle.ServerMetrics
}

func (r *scrapeRecorder) Start(ctx context.Context) error {
	r.ctx = ctx
	targets := r.cfg.URLs
	if targets == nil {
		for _, u := range r.urls {
			t, ok := defaultMetricsURL(u)
			if !ok {
				continue
			}
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			err := scrape.Probe(pctx, nil, t, probeTimeout)
			cancel()
			if err != nil {
				r.notify(Info, "server metrics: %s not scraped (%v); name endpoints with ServerMetrics.URLs", t, err)
				continue
			}
			targets = append(targets, t)
		}
		if len(targets) == 0 {
			return nil
		}
	}
	s, err := scrape.Start(ctx, scrape.Options{Targets: targets, Interval: r.cfg.Interval})
	if err != nil {
		return &UsageError{Err: err}
	}
	r.s = s
	return nil
}

func (r *scrapeRecorder) Stop(res *loadgen.Result) {
	if r.s == nil {
		return
	}
	m, ok, _ := stopSampler(r.ctx, r.s, res) // a Scraper's Stop does not fail
	if !ok {
		return
	}
	kind := Info
	for _, sc := range m.Scrapes {
		if sc.Error != "" {
			kind = Warning
			break
		}
	}
	r.notify(kind, "server metrics: %s", scrape.Summary(m))
	r.m = m
}

func (r *scrapeRecorder) Attach(b *bundle.Bundle) { b.ServerMetrics = r.m }

// defaultMetricsURL is the /metrics of a server's base URL, which is where
// vLLM, SGLang and TGI serve their metrics; false for a URL that is not
// http or https (a gRPC server's metrics are on another port).
func defaultMetricsURL(base string) (string, bool) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = "/metrics", "", "", ""
	return strings.TrimSuffix(u.String(), "?"), true
}
