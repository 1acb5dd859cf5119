// Package netsut turns a client of a remote inference server into a
// loadgen.SUT. The protocol adapters (sut/openai, sut/kserve) implement
// Endpoint, one request per sample; the dispatcher (sut/dispatch) is an
// Endpoint over several of them; SUT runs any Endpoint under loadgen.
//
// The division of work: an Endpoint knows the wire protocol and fills a
// loadgen.Response (output, tokens, token times, wire bytes, node, error);
// SUT owns the goroutines, the per-request deadline, and the hand-over to
// the Responder. Latency is still measured by loadgen from each sample's
// scheduled time, not from the moment the request was sent.
package netsut

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"aimeter/loadgen"
)

// Endpoint is one remote server (or a dispatcher over several) that serves
// samples one request at a time.
type Endpoint interface {
	// Do sends sample s (s.Index is its QSL index) and fills resp with what
	// came back; resp.ID is already set and Do must not change it. It
	// returns when the sample has ended, successfully or not: a failure is
	// resp.Err (categorised with loadgen.WithCategory where the category
	// is known), never a panic. It must return soon after ctx ends. A
	// streaming endpoint may call r.FirstToken(s.ID, …) when the first
	// token arrives and put every token's arrival time (r.Now or r.At) in
	// resp.TokenTimes. Do is called from many goroutines at once.
	Do(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response)
	// Check verifies, before a run, that the server is up and serves what
	// the run needs (liveness, readiness, the model). Its error names the
	// URL and what was tried.
	Check(ctx context.Context) error
	// Name is the SUT name logged as sut_name.
	Name() string
	// Close releases idle connections. Do is not called after Close.
	Close() error
}

// The optional interfaces below are what an Endpoint may offer beside
// Endpoint, for the programs that run it (package benchmark) to ask for
// without naming its concrete type.

// ClientStats are an Endpoint's own counters of a run: what the client
// saw, beside what LoadGen measured.
type ClientStats struct {
	// Requests is the number of samples sent; Errors how many of them
	// ended with an error.
	Requests, Errors uint64
	// TokenMismatches, MissingUsage and TokenTimesDropped are an
	// OpenAI-compatible client's token accounting (openai.Stats); 0 for
	// other clients.
	TokenMismatches, MissingUsage, TokenTimesDropped uint64
	// SendLateness is the time from Do's start to the moment the request
	// was written to the connection: the client's own delay.
	SendLateness Durations
}

// StatsReporter is an Endpoint that counts its requests.
type StatsReporter interface {
	// ClientStats returns the counters so far, and false when the
	// endpoint counted nothing it can report (a KServe client over HTTP).
	ClientStats() (ClientStats, bool)
}

// Nodes is an Endpoint that sends to several servers (a dispatcher).
type Nodes interface {
	// NodeNames returns the name of every node, in node-number order.
	NodeNames() []string
}

// InputsProvider is an Endpoint that may build its own sample library
// from what its server says of the model (a KServe client over a model
// other than the reference data set's).
type InputsProvider interface {
	// OwnInputs returns that library, the QSL of the run, after Check;
	// nil when the endpoint sends the samples of another QSL.
	OwnInputs() loadgen.QSL
}

// Options configure a SUT. The zero value of every field is usable.
type Options struct {
	// RequestTimeout bounds each request, from the moment the SUT hands it
	// to the Endpoint; a request still running then ends with a timeout
	// error. Zero means no per-request bound (the run's own timeouts and
	// the cancellation of Close still end it).
	RequestTimeout time.Duration
}

// SUT serves loadgen samples with an Endpoint, one goroutine per request in
// flight. Create it with New and Close it after the run.
//
// A goroutine that has served a request waits up to workerIdle for the
// next one before it exits: a closed-loop or steady run reuses its
// goroutines, whose stacks have already grown to what a request needs,
// instead of starting one per request and growing its stack again.
type SUT struct {
	ep     Endpoint
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	pool   sync.Pool // *loadgen.Response
	jobs   chan job  // samples handed to workers that were claimed
	// free counts the workers committed to take one more job from jobs:
	// a worker adds itself before it responds (so that the request its
	// response lets loadgen issue finds it), IssueQuery claims one by
	// taking 1 away, and a worker that has waited workerIdle leaves only
	// if it can take itself away (else a job is on its way to it).
	free atomic.Int64
	// started counts the workers started, for tests.
	started atomic.Int64
}

// job is one sample for a worker.
type job struct {
	r *loadgen.Responder
	q loadgen.QuerySample
}

// workerIdle is how long a worker waits for another request.
const workerIdle = 2 * time.Second

var (
	_ loadgen.SUT     = (*SUT)(nil)
	_ loadgen.Drainer = (*SUT)(nil)
)

// New returns a SUT that sends every sample to ep. Requests are bound to
// ctx: cancelling it (or calling Close) ends those in flight.
func New(ctx context.Context, ep Endpoint, opts Options) *SUT {
	if opts.RequestTimeout < 0 {
		opts.RequestTimeout = 0
	}
	c, cancel := context.WithCancel(ctx)
	s := &SUT{ep: ep, opts: opts, ctx: c, cancel: cancel, jobs: make(chan job, 256)}
	s.pool.New = func() any { return new(loadgen.Response) }
	return s
}

// Name returns the Endpoint's name.
func (s *SUT) Name() string { return s.ep.Name() }

// Endpoint returns the endpoint the SUT sends to.
func (s *SUT) Endpoint() Endpoint { return s.ep }

// IssueQuery starts one request per sample and returns at once.
func (s *SUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	s.wg.Add(len(samples))
	for _, q := range samples {
		if s.claim() {
			s.jobs <- job{r, q}
		} else {
			go s.worker(job{r, q})
		}
	}
}

// claim takes a free worker, if there is one.
func (s *SUT) claim() bool {
	for {
		n := s.free.Load()
		if n <= 0 {
			return false
		}
		if s.free.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// worker serves j, then the jobs it is handed, until none comes for
// workerIdle or the SUT is closed.
func (s *SUT) worker(j job) {
	s.started.Add(1)
	var t *time.Timer
	for {
		s.serve(j.r, j.q)
		select {
		case j = <-s.jobs:
			continue
		default:
		}
		// The response just given usually woke the issuer, which is
		// about to hand out the next job: yield to it once, so that this
		// worker takes that job without parking and being woken again.
		runtime.Gosched()
		select {
		case j = <-s.jobs:
			continue
		default:
		}
		if t == nil {
			t = time.NewTimer(workerIdle)
		} else {
			t.Reset(workerIdle)
		}
		select {
		case j = <-s.jobs:
			continue
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
		}
		if s.claim() {
			return // no job was promised to this worker
		}
		j = <-s.jobs // one is on its way
	}
}

func (s *SUT) serve(r *loadgen.Responder, q loadgen.QuerySample) {
	defer s.wg.Done()
	resp := s.pool.Get().(*loadgen.Response)
	*resp = loadgen.Response{ID: q.ID}
	ctx := s.ctx
	if s.opts.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.RequestTimeout)
		defer cancel()
	}
	s.do(ctx, r, q, resp)
	if resp.Err == nil && ctx.Err() != nil && s.ctx.Err() == nil {
		// The endpoint returned without noticing its deadline.
		resp.Err = timeoutError(s.opts.RequestTimeout)
	}
	s.free.Add(1) // before the response, which may issue the next sample
	r.Respond(*resp)
	*resp = loadgen.Response{}
	s.pool.Put(resp)
}

// do calls the endpoint and turns a panic into a sample error, so one bad
// response cannot take the run down.
func (s *SUT) do(ctx context.Context, r *loadgen.Responder, q loadgen.QuerySample, resp *loadgen.Response) {
	defer func() {
		if v := recover(); v != nil {
			resp.Err = loadgen.WithCategory(CategoryClient, fmt.Errorf("endpoint panicked: %v", v))
		}
	}()
	s.ep.Do(ctx, r, q, resp)
}

func timeoutError(d time.Duration) error {
	return loadgen.WithCategory(CategoryRequestTimeout, fmt.Errorf("request took longer than the request timeout of %v", d))
}

// FlushQueries does nothing: every request is sent as soon as it is issued.
func (*SUT) FlushQueries() {}

// Drain waits until no request is in flight, or ctx ends. A remote server
// may still be working on requests the client gave up on; Drain cannot
// see those.
func (s *SUT) Drain(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close cancels the requests still in flight, waits for their goroutines
// and closes the endpoint.
func (s *SUT) Close() error {
	s.cancel()
	s.wg.Wait()
	return s.ep.Close()
}

// ErrNotReady is wrapped by Check errors of a server that answered but is
// not ready to serve (not live, not ready, or without the model).
var ErrNotReady = errors.New("server not ready")

// NodeNamer is implemented by Endpoints that can ask their server for its
// name (a host name, a server name and version) with one round trip. The
// dispatcher uses it to name its nodes in the SUT name.
type NodeNamer interface {
	NodeName(ctx context.Context) (string, error)
}
