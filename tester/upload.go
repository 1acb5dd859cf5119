package tester

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"aimeter/attest"
	"aimeter/bundle"
	"aimeter/recompute"
	"aimeter/shard"
	"aimeter/store"
)

// Upload protocol: POST /api/v1/tests/{id}/uploads with the client token,
// an Upload-ID header and a multipart/form-data body of two parts in this
// order: "envelope" (the DSSE envelope, JSON) and "bundle" (the bundle's
// directory as a tar stream of regular files).
const (
	// UploadIDHeader carries the upload's ID: 16 to 128 letters, digits,
	// '-' or '_', used once.
	UploadIDHeader = "Upload-ID"
	// EnvelopePart and BundlePart name the parts of the body.
	EnvelopePart = "envelope"
	BundlePart   = "bundle"
)

// Events the service appends besides the store's.
const (
	// EventUploadReceived: an upload began; its detail names the upload
	// ID (store.BeginUpload), which the run it stores spends for good.
	EventUploadReceived = store.EventUploadReceived
	// EventUploadRefused: an upload was refused; its detail gives the
	// reasons.
	EventUploadRefused = "upload_refused"
)

// Bounds of an upload's tar stream.
const (
	maxEnvelopeBytes = 4 << 20
	maxBundleFiles   = 10000
)

var uploadIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{16,128}$`)

// UploadReply answers a stored upload.
type UploadReply struct {
	RunID        int64           `json:"run_id"`
	TestID       string          `json:"test_id"`
	Attempt      int             `json:"attempt"`
	Status       store.RunStatus `json:"status"`
	BundleDigest string          `json:"bundle_digest"`
	KeyID        string          `json:"key_id"`
	Verdict      string          `json:"verdict"`
	// Recomputed are the derived files the service regenerated from the
	// raw records and compared with the ones uploaded.
	Recomputed []string `json:"recomputed"`
	// Differences are the claims the raw records do not support, one per
	// metric or file, of a run stored flagged (Options.StoreFlagged);
	// empty for a verified run.
	Differences []string `json:"differences,omitempty"`
	// StoredAlready says that this upload stored nothing because an
	// earlier upload of the same bundle (the same manifest SHA-256) is
	// stored as the run described: the service answers such a retry 409
	// with this reply in the body, which Client.Upload returns as success.
	StoredAlready bool `json:"stored_already,omitempty"`
	// Shard, for the upload of a shard of a sharded test (tester/shards.go),
	// is the shard and its test: RunID is then 0 and Status ShardStatus
	// until the upload that completes the test, whose reply is the merged
	// run's.
	Shard *ShardReply `json:"shard,omitempty"`
}

// refusal is an upload refused with an HTTP status and its reasons.
type refusal struct {
	code    int
	msg     string
	reasons []string
	// busy marks a 503 answered with Retry-After (writeBusy), and queued
	// the uploads waiting for memory then.
	busy   bool
	queued int
	// cause is the error of the body's reader, when one cut it.
	cause error
	// stored, for an upload refused because a run is stored already
	// under its bundle or upload ID, describes that run.
	stored *UploadReply
}

func (e *refusal) Error() string { return e.msg }

func refuse(code int, msg string, reasons ...string) *refusal {
	return &refusal{code: code, msg: msg, reasons: reasons}
}

func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	it := s.client(w, r, id)
	if it == nil {
		return
	}
	uid := r.Header.Get(UploadIDHeader)
	if !uploadIDPattern.MatchString(uid) {
		writeError(w, http.StatusBadRequest, UploadIDHeader+": give 16 to 128 letters, digits, '-' or '_', new for each upload")
		return
	}
	// Two gates before the body is read: its declared length, and a
	// receive slot. Either refusal closes the connection rather than
	// drain a body nobody will read.
	if r.ContentLength > s.maxUpload {
		w.Header().Set("Connection", "close")
		s.log.Warn("upload refused", "test", id, "upload", uid, "reason", "too large", "bytes", r.ContentLength)
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the upload's body of %d bytes exceeds the service's limit of %d bytes (aimeter server --max-upload-bytes)", r.ContentLength, s.maxUpload))
		return
	}
	received, ok := s.admit.tryReceive()
	if !ok {
		w.Header().Set("Connection", "close")
		n := cap(s.admit.receiving)
		s.log.Warn("upload refused", "test", id, "upload", uid, "reason", "busy receiving")
		writeBusy(w, fmt.Sprintf("the service is busy: it is receiving %d uploads, its most at once (aimeter server --max-concurrent-uploads); retry later", n), s.admit.queued())
		return
	}
	defer received()
	rep, ref := s.upload(w, r, it, uid, received)
	if ref != nil {
		s.log.Warn("upload refused", "test", id, "upload", uid, "reason", ref.msg)
		detail, _ := json.Marshal(map[string]any{"upload_id": uid, "reason": ref.msg, "reasons": ref.reasons})
		if ref.code != http.StatusConflict || !strings.Contains(ref.msg, "upload ID") {
			// A body cut off ended the request's context; the refusal
			// is still logged.
			s.store.AppendEvent(context.WithoutCancel(r.Context()), store.Event{TestItemID: id, Attempt: it.Attempts, Kind: EventUploadRefused, Detail: detail})
		}
		if ref.busy {
			writeBusy(w, ref.msg, ref.queued)
			return
		}
		if ref.code == http.StatusRequestTimeout || ref.code == http.StatusRequestEntityTooLarge {
			w.Header().Set("Connection", "close")
		}
		if ref.stored != nil {
			writeJSON(w, ref.code, storedRefusal{ErrorReply{Error: ref.msg, Reasons: ref.reasons}, ref.stored})
			return
		}
		writeError(w, ref.code, ref.msg, ref.reasons...)
		return
	}
	s.log.Info("run stored", "test", id, "run", rep.RunID, "attempt", rep.Attempt)
	writeJSON(w, http.StatusCreated, rep)
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request, it *store.TestItem, uid string, received func()) (*UploadReply, *refusal) {
	ctx := r.Context()
	if it.PublicKey == nil {
		return nil, refuse(http.StatusConflict, "test item "+it.ID+" has no public key registered to verify uploads with")
	}
	// An upload ID that a stored run spent is refused before the body is
	// read, naming that run. The ID is spent by the transaction that
	// stores the run (store.IngestOptions.UploadID), so an upload that
	// failed or was cut off, a crash of the service included, can be
	// retried under it.
	if err := s.store.BeginUpload(ctx, it.ID, uid, it.Attempts); err != nil {
		return nil, s.replayRefusal(ctx, it, uid, err)
	}

	dir, err := os.MkdirTemp(filepath.Join(s.dataDir, StagingDir), "upload-")
	if err != nil {
		return nil, refuse(http.StatusInternalServerError, "internal error: "+err.Error())
	}
	defer os.RemoveAll(dir)
	env, ref := receive(w, r, s.maxUpload, s.uploadTimeout, dir)
	received()
	if ref != nil {
		return nil, ref
	}
	st, err := attest.Verify(env, it.PublicKey, dir)
	if err != nil {
		return nil, refuse(http.StatusUnprocessableEntity, "the signed bundle does not verify: "+err.Error())
	}
	// A bundle stored already is told so before it is recomputed: a
	// client retrying after a lost answer costs no recomputation.
	if digest, err := bundle.Digest(dir); err == nil {
		if err := s.store.CheckNotStored(ctx, digest); err != nil {
			return nil, s.replayRefusal(ctx, it, uid, err)
		}
		if rep, ref, ok := s.shardRetry(ctx, it, dir, digest); ok {
			return rep, ref
		}
	}
	release, ref := s.admitMemory(ctx, dir)
	if ref != nil {
		return nil, ref
	}
	release = sync.OnceFunc(release)
	defer release()
	rc, err := recompute.Check(dir, recompute.Options{Version: s.version})
	if err != nil {
		return nil, refuse(http.StatusUnprocessableEntity, "the bundle cannot be recomputed from its raw records: "+err.Error())
	}
	status := store.StatusVerified
	reason := "signature with key " + attest.KeyID(it.PublicKey) + ", every digest and the recomputation from the raw records agree"
	var differences []string
	if !rc.OK() {
		for _, d := range rc.Differences {
			differences = append(differences, d.String())
		}
		msg := fmt.Sprintf("the raw records do not support %d claim(s) of the bundle", len(differences))
		if !s.flagged {
			return nil, refuse(http.StatusUnprocessableEntity, msg, differences...)
		}
		status = store.StatusFlagged
		reason = "signature with key " + attest.KeyID(it.PublicKey) + " and every digest agree, but " + msg + ": " + strings.Join(differences, "; ") +
			" (the stored metrics are the recomputed ones)"
	}
	digest, err := bundle.Digest(dir)
	if err != nil {
		return nil, refuse(http.StatusInternalServerError, "internal error: "+err.Error())
	}
	if rec := shard.Of(rc.Bundle); rec.Sharded() {
		// A shard of a sharded test is stored as such, not as a run.
		return s.storeShard(ctx, it, uid, dir, rec, shardUpload{status, reason, digest, rc.Compared, st.Predicate.Verdict, rc.Bundle.Result.Interrupted}, release)
	}

	// The store refuses a bundle stored already and takes or claims the
	// attempt in the transaction that stores the run; the database's
	// unique index on the bundle digest decides between two service
	// processes storing the same bundle at once. The same transaction
	// spends the upload ID and appends upload_complete: a crash or a
	// database gone away mid-ingest leaves none of them, and the upload
	// can be retried.
	run, err := s.store.Ingest(ctx, dir, store.IngestOptions{
		TestItemID:   it.ID,
		NextAttempt:  true,
		Status:       status,
		StatusReason: reason,
		Source:       "upload " + uid,
		Bundle:       rc.Bundle,
		Derived:      rc.Derived,
		Move:         true,
		UploadID:     uid,
		Events: func(run *store.Run) []store.Event {
			ev := map[string]any{"upload_id": uid, "run_id": run.ID, "bundle_digest": digest, "key_id": attest.KeyID(it.PublicKey), "recomputed": rc.Compared, "status": run.Status}
			if len(differences) > 0 {
				ev["differences"] = differences
			}
			detail, _ := json.Marshal(ev)
			return []store.Event{{Kind: store.EventUploadComplete, Detail: detail}}
		},
	})
	switch {
	case errors.Is(err, store.ErrDuplicate):
		return nil, s.replayRefusal(ctx, it, uid, err)
	case errors.Is(err, store.ErrRetestsExhausted):
		return nil, refuse(http.StatusConflict, fmt.Sprintf("test item %s has no attempt left: its first attempt and the %d retest(s) it was allowed are used", it.ID, it.RetestAllowance))
	case errors.Is(err, store.ErrExpired):
		return nil, refuse(http.StatusUnauthorized, "the token has expired: ask the tester for a new test item")
	}
	if err != nil {
		s.log.Error("storing an upload failed; the client may retry it", "test", it.ID, "upload", uid, "err", err)
		ref := refuse(http.StatusServiceUnavailable, "storing the run failed: retry the upload, under the same upload ID or another (the bundle is stored once, whatever the number of tries): "+err.Error())
		ref.busy = true // answered with Retry-After, which aimeter submit honours
		return nil, ref
	}
	attempt := run.Attempt
	return &UploadReply{
		RunID: run.ID, TestID: it.ID, Attempt: attempt, Status: run.Status, BundleDigest: digest,
		KeyID: attest.KeyID(it.PublicKey), Verdict: st.Predicate.Verdict, Recomputed: rc.Compared, Differences: differences,
	}, nil
}

// receive reads the multipart body: the envelope, then the bundle's tar
// stream unpacked into dir, each file written to disk as it arrives (no
// part of the body is held in memory beyond the envelope). A body over
// limit bytes is cut (413), and one still unread timeout after receive
// began to read it is cut too (408).
func receive(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration, dir string) (*attest.Envelope, *refusal) {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(timeout)); err == nil {
		defer rc.SetReadDeadline(time.Time{})
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	env, ref := receiveParts(r, dir)
	if ref != nil && ref.code == http.StatusBadRequest && isTimeout(ref.cause) {
		return nil, refuse(http.StatusRequestTimeout, fmt.Sprintf("the upload's body was not received within the service's upload timeout of %s (aimeter server --upload-timeout); the part received is discarded", timeout))
	}
	return env, ref
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

func receiveParts(r *http.Request, dir string) (*attest.Envelope, *refusal) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "the body is not multipart/form-data: "+err.Error())
	}
	p, err := mr.NextPart()
	if err != nil || p.FormName() != EnvelopePart {
		return nil, refuse(http.StatusBadRequest, "the first part of the body must be \""+EnvelopePart+"\" (the DSSE envelope)")
	}
	data, err := io.ReadAll(io.LimitReader(p, maxEnvelopeBytes+1))
	if err != nil {
		return nil, bodyRefusal(err)
	}
	if len(data) > maxEnvelopeBytes {
		return nil, refuse(http.StatusRequestEntityTooLarge, "the envelope exceeds 4 MiB")
	}
	env, err := attest.ParseEnvelope(data)
	if err != nil {
		return nil, refuse(http.StatusUnprocessableEntity, "the envelope: "+err.Error())
	}
	p, err = mr.NextPart()
	if err != nil || p.FormName() != BundlePart {
		return nil, refuse(http.StatusBadRequest, "the second part of the body must be \""+BundlePart+"\" (the bundle as a tar stream)")
	}
	if err := untar(p, dir); err != nil {
		var ref *refusal
		if errors.As(err, &ref) {
			return nil, ref
		}
		return nil, bodyRefusal(err)
	}
	if _, err := mr.NextPart(); err != io.EOF {
		return nil, refuse(http.StatusBadRequest, "the body has parts after \""+BundlePart+"\"")
	}
	return env, nil
}

func bodyRefusal(err error) *refusal {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("the upload exceeds %d bytes", mbe.Limit))
	}
	ref := refuse(http.StatusBadRequest, "the upload was cut off: "+err.Error())
	ref.cause = err
	return ref
}

// untar unpacks a tar stream of regular files and directories into dir,
// refusing any other entry, a name that leaves dir, or a repeated name.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	seen := map[string]bool{}
	for n := 0; ; n++ {
		h, err := tr.Next()
		if err == io.EOF {
			if n == 0 {
				return refuse(http.StatusBadRequest, "the bundle's tar stream is empty")
			}
			return nil
		}
		if err != nil {
			return err
		}
		if n >= maxBundleFiles {
			return refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("the bundle has more than %d entries", maxBundleFiles))
		}
		name := h.Name
		clean := path.Clean(strings.TrimSuffix(name, "/"))
		if name == "" || strings.Contains(name, "\\") || path.IsAbs(name) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || clean != strings.TrimSuffix(name, "/") {
			return refuse(http.StatusBadRequest, fmt.Sprintf("the bundle's tar stream names %q, which is not a plain relative path", name))
		}
		target := filepath.Join(dir, filepath.FromSlash(clean))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if seen[clean] {
				return refuse(http.StatusBadRequest, fmt.Sprintf("the bundle's tar stream holds %s twice", clean))
			}
			seen[clean] = true
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return refuse(http.StatusBadRequest, fmt.Sprintf("the bundle's tar stream holds %s of type %q: only regular files and directories", clean, h.Typeflag))
		}
	}
}
