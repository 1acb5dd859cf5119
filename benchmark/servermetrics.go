package benchmark

import (
	"context"
	"net/url"
	"strings"
	"time"

	"aimeter/bundle"
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

// startScrape starts scraping the server's metrics for the run, or
// returns nil when there is nothing to scrape: an in-process SUT, Off, or
// no default endpoint that answers.
func (r *runner) startScrape(o *opened) (*scrape.Scraper, error) {
	sm := r.plan.ServerMetrics
	if sm.Off || o.cfg == nil || !o.cfg.KindOrNull().IsNetwork() && len(sm.URLs) == 0 {
		return nil, nil
	}
	targets := sm.URLs
	if targets == nil {
		for _, u := range o.cfg.Net.URLs {
			t, ok := defaultMetricsURL(u)
			if !ok {
				continue
			}
			ctx, cancel := context.WithTimeout(r.ctx, probeTimeout)
			err := scrape.Probe(ctx, nil, t, probeTimeout)
			cancel()
			if err != nil {
				r.notify(Info, "server metrics: %s not scraped (%v); name endpoints with ServerMetrics.URLs", t, err)
				continue
			}
			targets = append(targets, t)
		}
		if len(targets) == 0 {
			return nil, nil
		}
	}
	s, err := scrape.Start(r.ctx, scrape.Options{Targets: targets, Interval: sm.Interval})
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return s, nil
}

// stopScrape ends the scraping and returns its record on the run's clock;
// nil for no scraper.
func (r *runner) stopScrape(s *scrape.Scraper, origin time.Time) *bundle.ServerMetrics {
	if s == nil {
		return nil
	}
	m := s.Stop(origin)
	kind := Info
	for _, sc := range m.Scrapes {
		if sc.Error != "" {
			kind = Warning
			break
		}
	}
	r.notify(kind, "server metrics: %s", scrape.Summary(m))
	return m
}

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
