package tester

import (
	"context"
	"crypto/ed25519"

	"aimeter/benchmark"
	"aimeter/store"
)

// Attempt is one attempt of a test item at the tester's service, as a
// tested party's run reports it (GB/T 45087 Annex A): StartAttempt
// reports test_start, Event the run's phases, and Finish test_end and the
// signed bundle (Fail test_end with the error of a run that did not
// complete).
type Attempt struct {
	client *Client
	// TestID is the test item.
	TestID string
	// Number is the attempt's number the service gave it (1 the first,
	// then each retest).
	Number int
}

// StartAttempt reports test_start for the test item and returns the
// attempt the service counted.
func (c *Client) StartAttempt(ctx context.Context, testID string) (*Attempt, error) {
	return c.startAttempt(ctx, testID, nil)
}

// startAttempt reports test_start, naming the shard when sh is a shard of
// a sharded test: the service then counts the shards of one test as one
// attempt ("Sharded tests" in docs/server.md).
func (c *Client) startAttempt(ctx context.Context, testID string, sh *benchmark.Shard) (*Attempt, error) {
	var detail any
	if sh != nil && sh.Count > 1 {
		detail = map[string]any{"shard": ShardStart{Index: sh.Index, Count: sh.Count}}
	}
	ev, err := c.Event(ctx, testID, store.EventTestStart, detail)
	if err != nil {
		return nil, err
	}
	return &Attempt{client: c, TestID: testID, Number: ev.Attempt}, nil
}

// Event reports a lifecycle event of the attempt (data_download_start,
// data_download_end) with its detail, a JSON object or nil.
func (a *Attempt) Event(ctx context.Context, kind string, detail any) error {
	_, err := a.client.Event(ctx, a.TestID, kind, detail)
	return err
}

// Fail reports test_end with cause as its error: the run did not
// complete, and nothing is uploaded.
func (a *Attempt) Fail(ctx context.Context, cause error) error {
	return a.Event(ctx, store.EventTestEnd, map[string]string{"error": cause.Error()})
}

// Finish reports test_end and uploads the bundle in dir signed with key
// (Client.Submit).
func (a *Attempt) Finish(ctx context.Context, dir string, key ed25519.PrivateKey) (*UploadReply, error) {
	if err := a.Event(ctx, store.EventTestEnd, nil); err != nil {
		return nil, err
	}
	return a.client.Submit(ctx, a.TestID, dir, key)
}

// Flagged reports whether the service stored the run flagged: the raw
// records do not support Differences.
func (r *UploadReply) Flagged() bool { return r.Status == store.StatusFlagged }

// AttemptOptions configure Client.RunAttempt.
type AttemptOptions struct {
	// Dir is the run's bundle, uploaded when the run completes.
	Dir string
	// Key signs the bundle.
	Key ed25519.PrivateKey
	// Completed says whether a run that returned err completed (an
	// invalid result still counts, and is uploaded); nil counts only a run
	// without an error.
	Completed func(err error) bool
	// Started, if set, is called once the service counted the attempt.
	Started func(*Attempt)
	// EventFailed, if set, is called when the service did not take a
	// phase's event; the run goes on without it (the service refuses the
	// upload later if the token no longer works).
	EventFailed func(kind benchmark.PhaseKind, err error)
	// Shard, when it names a shard of a test of several (Count > 1), is
	// the run's shard: its test_start names it, so that the service
	// counts the shards of one test as one attempt. Nil (or Count ≤ 1) is
	// a whole test.
	Shard *benchmark.Shard
}

// AttemptOutcome is what Client.RunAttempt did.
type AttemptOutcome struct {
	// Attempt is the attempt the service counted.
	Attempt *Attempt
	// RunErr is the run's error.
	RunErr error
	// Reply is the service's answer to the upload; nil when the run did
	// not complete and nothing was uploaded.
	Reply *UploadReply
}

// RunAttempt is a formal run at the tester's service (GB/T 45087 Annex A):
// it reports test_start, calls run with the hook that reports the run's
// phases (benchmark.Plan.Phase: data_download_start, data_download_end with
// the loaded QSL or the error), then reports test_end and uploads the
// bundle in o.Dir signed with o.Key; a run that did not complete reports
// test_end with its error and uploads nothing. The error is the service's
// (StartAttempt, Finish); the run's is the outcome's RunErr.
func (c *Client) RunAttempt(ctx context.Context, testID string, run func(phase func(benchmark.Phase)) error, o AttemptOptions) (*AttemptOutcome, error) {
	at, err := c.startAttempt(ctx, testID, o.Shard)
	if err != nil {
		return nil, err
	}
	if o.Started != nil {
		o.Started(at)
	}
	out := &AttemptOutcome{Attempt: at}
	out.RunErr = run(func(ph benchmark.Phase) {
		if err := at.Phase(context.WithoutCancel(ctx), ph); err != nil && o.EventFailed != nil {
			o.EventFailed(ph.Kind, err)
		}
	})
	completed := out.RunErr == nil
	if !completed && o.Completed != nil {
		completed = o.Completed(out.RunErr)
	}
	if !completed {
		at.Fail(context.WithoutCancel(ctx), out.RunErr)
		return out, nil
	}
	if out.Reply, err = at.Finish(ctx, o.Dir, o.Key); err != nil {
		return out, err
	}
	return out, nil
}

// Phase reports a phase of the run as its lifecycle event: the phase's
// kind, with the loaded QSL (qsl, total_samples, performance_samples) or
// the loading error on data_download_end.
func (a *Attempt) Phase(ctx context.Context, ph benchmark.Phase) error {
	detail := map[string]any{}
	if ph.Kind == benchmark.DataLoadEnd {
		if ph.Err != nil {
			detail["error"] = ph.Err.Error()
		} else {
			detail["qsl"], detail["total_samples"], detail["performance_samples"] = ph.QSL, ph.TotalSamples, ph.PerformanceSamples
		}
	}
	return a.Event(ctx, ph.Kind.String(), detail)
}
