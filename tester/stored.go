package tester

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"aimeter/attest"
	"aimeter/store"
)

// storedRefusal is the body of a 409 that refuses an upload because a run
// is stored already under its bundle or its upload ID: the error, and the
// stored run as its upload's reply. A client that sent the same bundle (the
// same bundle_digest) takes it for success (Client.Upload does).
type storedRefusal struct {
	ErrorReply
	*UploadReply
}

// replayRefusal answers an upload that err (wrapping store.ErrDuplicate)
// refused: a 409 naming the stored run, with the run's reply when it is a
// run of the same test item.
func (s *Server) replayRefusal(ctx context.Context, it *store.TestItem, uid string, err error) *refusal {
	var dup *store.DuplicateBundleError
	var spent *store.UploadSpentError
	var ref *refusal
	var runID int64
	switch {
	case errors.As(err, &dup):
		msg := fmt.Sprintf("replayed upload: this bundle (manifest SHA-256 %s) is stored already", dup.Digest)
		if dup.RunID != 0 {
			msg += fmt.Sprintf(" as run %d of test item %s", dup.RunID, dup.TestItemID)
		}
		ref = refuse(http.StatusConflict, msg)
		if dup.TestItemID == it.ID {
			runID = dup.RunID
		}
	case errors.As(err, &spent):
		msg := "replayed upload: the upload ID " + uid + " was used before"
		if spent.RunID != 0 {
			msg += fmt.Sprintf(", for run %d (bundle manifest SHA-256 %s)", spent.RunID, spent.Digest)
		}
		ref = refuse(http.StatusConflict, msg)
		runID = spent.RunID
	default:
		return refuse(http.StatusServiceUnavailable, "checking the upload against the stored runs failed: retry the upload: "+err.Error())
	}
	if runID != 0 {
		ref.stored = s.storedReply(ctx, it, runID)
		if ref.stored != nil && dup != nil {
			ref.stored.StoredAlready = true
		}
	}
	return ref
}

// storedReply returns the reply that stored run id of the test item: its
// row, and what its upload_complete event records; nil when it cannot be
// read.
func (s *Server) storedReply(ctx context.Context, it *store.TestItem, id int64) *UploadReply {
	run, err := s.store.Run(ctx, id)
	if err != nil || run.TestItemID != it.ID {
		return nil
	}
	rep := &UploadReply{RunID: run.ID, TestID: it.ID, Attempt: run.Attempt, Status: run.Status, BundleDigest: run.BundleDigest,
		KeyID: attest.KeyID(it.PublicKey), Verdict: run.VerdictWord}
	evs, err := s.store.Events(ctx, store.EventFilter{TestItemID: it.ID, RunID: id})
	if err != nil {
		return rep
	}
	for _, e := range evs {
		if e.Kind != store.EventUploadComplete {
			continue
		}
		var d struct {
			KeyID       string   `json:"key_id"`
			Recomputed  []string `json:"recomputed"`
			Differences []string `json:"differences"`
		}
		if json.Unmarshal(e.Detail, &d) == nil {
			if d.KeyID != "" {
				rep.KeyID = d.KeyID
			}
			rep.Recomputed, rep.Differences = d.Recomputed, d.Differences
		}
	}
	return rep
}
