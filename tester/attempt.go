package tester

import (
	"context"
	"crypto/ed25519"

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
	ev, err := c.Event(ctx, testID, store.EventTestStart, nil)
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
