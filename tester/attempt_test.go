package tester_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"aimeter/internal/bundletest"
	"aimeter/store"
	"aimeter/tester"
)

// TestAttempt reports two attempts through the Attempt API: one that
// fails (test_end with its error, nothing uploaded) and one that ends
// with a signed upload; the audit trail holds both lifecycles.
func TestAttempt(t *testing.T) {
	s := newService(t, backends(t)[0])
	ctx := context.Background()
	p := s.register(t, 1, "")
	failed, err := p.client.StartAttempt(ctx, p.reg.TestID)
	if err != nil || failed.Number != 1 || failed.TestID != p.reg.TestID {
		t.Fatalf("first attempt %+v, %v", failed, err)
	}
	if err := failed.Fail(ctx, errors.New("the SUT went away")); err != nil {
		t.Fatal(err)
	}
	at, err := p.client.StartAttempt(ctx, p.reg.TestID)
	if err != nil || at.Number != 2 {
		t.Fatalf("retest %+v, %v", at, err)
	}
	if err := at.Event(ctx, store.EventDataDownloadStart, nil); err != nil {
		t.Fatal(err)
	}
	rep, err := at.Finish(ctx, bundletest.Copy(t, bundletest.MLPerf), p.key)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Attempt != 2 || rep.Flagged() || rep.Status != store.StatusVerified {
		t.Fatalf("reply %+v", rep)
	}
	var trail tester.AuditTrail
	getJSON(t, s, "/api/v1/events?test="+p.reg.TestID, &trail)
	var kinds []string
	var failDetail map[string]string
	for _, e := range trail.Events {
		kinds = append(kinds, e.Kind)
		if e.Kind == store.EventTestEnd && failDetail == nil {
			if err := json.Unmarshal(e.Detail, &failDetail); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{store.EventTestCreated, store.EventAttemptClaimed, store.EventTestStart, store.EventTestEnd,
		store.EventAttemptClaimed, store.EventTestStart, store.EventDataDownloadStart, store.EventTestEnd,
		tester.EventUploadReceived, store.EventRunRecorded, store.EventUploadComplete}
	if !slices.Equal(kinds, want) {
		t.Fatalf("events %v\nwant   %v", kinds, want)
	}
	if failDetail["error"] != "the SUT went away" {
		t.Errorf("the failed attempt's test_end detail is %v", failDetail)
	}
}
