package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"aimeter/sut/netsut"
)

// checkTimeout bounds Check and NodeName when their context has no
// deadline.
const checkTimeout = 30 * time.Second

// modelList is the body of GET /v1/models.
type modelList struct {
	Data []struct {
		ID      string `json:"id"`
		OwnedBy string `json:"owned_by"`
	} `json:"data"`
}

// listModels calls GET /v1/models and returns the list and the Server
// header.
func (e *Endpoint) listModels(ctx context.Context) (modelList, string, error) {
	var l modelList
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, checkTimeout)
		defer cancel()
	}
	where := "GET " + e.display + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/models", nil)
	if err != nil {
		return l, "", fmt.Errorf("%s: %w", where, err)
	}
	req.Header = e.header.Clone()
	delete(req.Header, "Content-Type")
	res, err := e.tr.RoundTrip(req)
	if err != nil {
		if ctx.Err() != nil {
			return l, "", fmt.Errorf("%s: no answer in time: %w", where, ctx.Err())
		}
		return l, "", fmt.Errorf("%s: %w", where, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		return l, "", fmt.Errorf("%s: reading the answer: %w", where, err)
	}
	if res.StatusCode != http.StatusOK {
		return l, "", fmt.Errorf("%w: %s: HTTP %s: %s", netsut.ErrNotReady, where, res.Status, e.scrub(quotePrefix(body)))
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return l, "", fmt.Errorf("%s: not an OpenAI model list: %w (body %s)", where, err, e.scrub(quotePrefix(body)))
	}
	return l, res.Header.Get("Server"), nil
}

// Check asks the server for its models (GET /v1/models): a server that is
// down or refuses gives an error naming the URL and what was tried; a
// model missing from the list gives one listing those served. With
// Options.Model empty, Check picks the first model listed. A context
// without a deadline is bounded to 30 s.
func (e *Endpoint) Check(ctx context.Context) error {
	l, _, err := e.listModels(ctx)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(l.Data))
	for _, m := range l.Data {
		ids = append(ids, m.ID)
	}
	want := e.Model()
	if want == "" {
		if len(ids) == 0 {
			return fmt.Errorf("%w: GET %s/models lists no model", netsut.ErrNotReady, e.display)
		}
		b, err := e.buildBodies(ids[0])
		if err != nil {
			return err
		}
		e.modelMu.Lock()
		e.model = ids[0]
		e.modelMu.Unlock()
		e.bodies.Store(b)
		return nil
	}
	for _, id := range ids {
		// Ollama lists its models with their tag ("name:latest") and
		// serves them by the bare name too.
		if id == want || id == want+":latest" {
			return nil
		}
	}
	return fmt.Errorf("%w: model %q is not served by %s; GET /models lists: %s", netsut.ErrNotReady, want, e.display, strings.Join(ids, ", "))
}

// NodeName names the server with one round trip (GET /v1/models): the
// owner of the model (owned_by) or else the Server header, then "@" and
// the host:port; just the host:port when the server says neither.
func (e *Endpoint) NodeName(ctx context.Context) (string, error) {
	l, server, err := e.listModels(ctx)
	if err != nil {
		return "", err
	}
	owner := ""
	want := e.Model()
	for _, m := range l.Data {
		if m.ID == want || want == "" {
			owner = m.OwnedBy
			break
		}
	}
	if owner == "" {
		owner = server
	}
	if owner == "" {
		return e.reqURL.Host, nil
	}
	return owner + "@" + e.reqURL.Host, nil
}

// Stats is a snapshot of an Endpoint's counters.
type Stats struct {
	// Requests is the number of samples sent (Do calls).
	Requests uint64
	// Errors is how many of them ended with an error.
	Errors uint64
	// TokenMismatches counts streamed responses whose usage.completion_tokens
	// differs from the number of chunks with content (a server that sends
	// several tokens a chunk, or miscounts).
	TokenMismatches uint64
	// MissingUsage counts responses without usage.completion_tokens (their
	// token count is the number of chunks with content, or 0 when not
	// streamed).
	MissingUsage uint64
	// TokenTimesDropped counts token arrival times not kept because a
	// sample had more than the per-sample bound.
	TokenTimesDropped uint64
	// SendLateness is the time from Do's start to the moment the request
	// was written to the connection (httptrace's WroteRequest): the
	// client's own delay, on top of loadgen's issue delay.
	SendLateness Durations
}

// ClientStats returns Stats as a netsut.StatsReporter reports them; an
// OpenAI client always has counters to report.
func (e *Endpoint) ClientStats() (netsut.ClientStats, bool) {
	st := e.Stats()
	return netsut.ClientStats{Requests: st.Requests, Errors: st.Errors, TokenMismatches: st.TokenMismatches,
		MissingUsage: st.MissingUsage, TokenTimesDropped: st.TokenTimesDropped, SendLateness: st.SendLateness}, true
}

// Durations summarises a distribution of durations; it is netsut's, shared
// with the other network adapters.
type Durations = netsut.Durations

// Stats returns a snapshot of the counters.
func (e *Endpoint) Stats() Stats {
	c := &e.stats
	return Stats{
		Requests:          c.requests.Load(),
		Errors:            c.errors.Load(),
		TokenMismatches:   c.mismatches.Load(),
		MissingUsage:      c.missingUsage.Load(),
		TokenTimesDropped: c.timesDropped.Load(),
		SendLateness:      c.lateness.Summary(),
	}
}

type counters struct {
	requests, errors, mismatches, missingUsage, timesDropped atomic.Uint64
	lateness                                                 netsut.Histogram
}
