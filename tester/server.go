// Package tester is the tester's service of a GB/T 45087 network test (Annex
// A; GB-7.7.1-m): `aimeter server`.
//
// The tester registers a test item (POST /api/v1/tests, with the admin token
// the service made at its first start) and gets back its test ID, a client
// token and a configuration file for the tested party (GB-A-b, GB-A-c). The
// tested party runs its test (`aimeter run --server URL --token T`, or
// `aimeter submit DIR` for a bundle it has), which reports its lifecycle
// events as they happen and uploads the bundle with a DSSE envelope signed by
// the Ed25519 key registered with the item (package attest).
//
// An upload is stored only when all of these hold: the token is the item's
// and has not expired; the upload ID was never used; the signature verifies
// with the registered key and every file has the digest the signed statement
// names, none missing and none extra; every derived file and metric comes out
// the same when recomputed from the raw records (package recompute) (or,
// with Options.StoreFlagged, the run is stored flagged with the
// differences); the bundle was not stored before; and the item has an attempt left (its first,
// then as many retests as it was allowed). The bundle is then stored
// atomically by package store (GB-A-f), and each step appends an event to the
// store's hash-chained log. A refusal answers with an HTTP error whose JSON
// body names every reason.
//
// Ingest is exactly-once, with the bundle's digest (its manifest's SHA-256)
// as the idempotency key. The run, the attempt it takes, its events and the
// spending of its upload ID commit in one transaction, so a service killed
// or a database lost mid-ingest leaves nothing of the upload, and the same
// upload may be sent again, under its upload ID or another: it is stored if
// no earlier try committed, and otherwise answered 409 with the stored run
// (run_id, bundle_digest, stored_already), which Client.Upload returns as
// success. An upload ID that stored a run is refused for any other bundle.
//
// The same data is shown by server-rendered pages (test items, their runs
// and progress, a run's result with its report, runs side by side, the audit
// trail with the chain's verification) and served as JSON under /api/v1
// (docs/server.md). The service speaks HTTPS only; without a certificate it
// makes a self-signed one on first start and keeps it beside its data.
package tester

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"aimeter/store"
)

// Files the service keeps in its data directory.
const (
	// AdminTokenFile holds the admin token, made at first start (mode
	// 0600).
	AdminTokenFile = "admin.token"
	// StagingDir is where uploads are unpacked before they are stored;
	// emptied at every start.
	StagingDir = "staging"
)

// DefaultTokenTTL is how long a client token works when the registration
// names no expiry.
const DefaultTokenTTL = 30 * 24 * time.Hour

// DefaultMaxUploadBytes bounds an upload's body when Options.MaxUploadBytes
// is 0.
const DefaultMaxUploadBytes = 1 << 30

// Options configure New.
type Options struct {
	// Store is the results database. Required.
	Store *store.Store
	// DataDir holds the admin token, the staging area of uploads and (see
	// TLSFiles) the self-signed certificate. Required.
	DataDir string
	// AdminToken, if set, is the admin token to use; "" reads DataDir's
	// admin.token, or makes and saves one there at first start.
	AdminToken string
	// MaxUploadBytes bounds an upload's body; 0 means
	// DefaultMaxUploadBytes.
	MaxUploadBytes int64
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Logger receives one line per refused request and per stored run; nil
	// discards them.
	Logger *slog.Logger
	// Version is the aimeter version recomputations compare with; ""
	// means version.String().
	Version string
	// StoreFlagged stores a bundle whose claimed results the raw records
	// do not support (every other check passed) with status "flagged" and
	// the differences as its reason, instead of refusing it. The stored
	// metrics are the recomputed ones; the uploaded files are kept as
	// they came. The zero value refuses such a bundle (HTTP 422).
	StoreFlagged bool

	// Dashboard sessions (issue 41, item 3; tester/session.go).

	// SessionLifetime is how long a dashboard session lasts from its
	// sign-in, however it is used (the absolute timeout); 0 means
	// DefaultSessionLifetime.
	SessionLifetime time.Duration
	// SessionIdleTimeout ends a dashboard session that made no request
	// for this long; 0 means DefaultSessionIdleTimeout, a negative value
	// no idle limit (SessionLifetime still applies).
	SessionIdleTimeout time.Duration

	// Limits and admission (docs/server.md, "Limits and admission"). An
	// upload is first given one of MaxConcurrentUploads receive slots
	// (503 with Retry-After when none is free, before its body is read),
	// its body is spooled to the staging area within MaxUploadBytes and
	// UploadTimeout, then it waits for MemoryBudget to hold its
	// recomputation (recompute.EstimateNeed) in a queue of at most
	// MaxQueuedUploads for at most MaxQueueWait (503 beyond), and an
	// upload that needs more than the whole budget is refused (413).

	// MemoryBudget is the memory, in bytes, the recomputations of uploads
	// may take at once by their estimates; 0 means
	// ProcessMemoryBudget() (half of the container's memory limit, else
	// half of the machine's memory); -1 means no memory gate.
	MemoryBudget int64
	// MaxConcurrentUploads bounds the uploads whose bodies are received
	// at once; 0 means DefaultMaxConcurrentUploads.
	MaxConcurrentUploads int
	// MaxQueuedUploads bounds the received uploads waiting for memory; 0
	// means DefaultMaxQueuedUploads, -1 no queue (503 at once when the
	// budget is taken).
	MaxQueuedUploads int
	// MaxQueueWait bounds how long a received upload waits for memory
	// before it is answered 503; 0 means DefaultMaxQueueWait.
	MaxQueueWait time.Duration
	// UploadTimeout bounds the reading of an upload's body, from when
	// the service begins to read it: a body still unread then is cut
	// (HTTP 408) and its staging directory removed; 0 means
	// DefaultUploadTimeout.
	UploadTimeout time.Duration
}

// Server is the service: an http.Handler for the API and the dashboard.
// Make one with New; it is safe for concurrent use.
type Server struct {
	store     *store.Store
	dataDir   string
	adminHash [32]byte
	maxUpload int64
	now       func() time.Time
	log       *slog.Logger
	version   string
	flagged   bool
	mux       *http.ServeMux

	// Dashboard sessions (tester/session.go).
	sessions sessionPolicy

	admit         *admission
	uploadTimeout time.Duration

	// Merges of sharded tests (tester/shards.go).
	shards shardMerges
}

// New makes the service: it reads or makes the admin token and empties the
// staging area (an upload cut off by a crash left nothing stored).
func New(opts Options) (*Server, error) {
	if opts.Store == nil {
		return nil, errors.New("server: Options.Store is required")
	}
	if opts.DataDir == "" {
		return nil, errors.New("server: Options.DataDir is required")
	}
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return nil, err
	}
	tok := opts.AdminToken
	if tok == "" {
		var err error
		if tok, err = LoadAdminToken(opts.DataDir); err != nil {
			return nil, err
		}
	}
	staging := filepath.Join(opts.DataDir, StagingDir)
	if err := os.RemoveAll(staging); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(staging, 0o700); err != nil {
		return nil, err
	}
	s := &Server{
		store:     opts.Store,
		dataDir:   opts.DataDir,
		adminHash: sha256.Sum256([]byte(tok)),
		maxUpload: opts.MaxUploadBytes,
		now:       opts.Now,
		log:       opts.Logger,
		version:   opts.Version,
		flagged:   opts.StoreFlagged,
	}
	if s.maxUpload == 0 {
		s.maxUpload = DefaultMaxUploadBytes
	}
	if s.now == nil {
		s.now = time.Now
	}
	if err := s.setLimits(opts); err != nil {
		return nil, err
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.sessions = newSessionPolicy(opts)
	s.routes()
	return s, nil
}

// ServeHTTP serves the API and the dashboard.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	s.mux.ServeHTTP(w, r)
}

// LoadAdminToken reads dir's admin.token, or makes a new token and saves it
// there (mode 0600) when the file does not exist.
func LoadAdminToken(dir string) (string, error) {
	p := filepath.Join(dir, AdminTokenFile)
	b, err := os.ReadFile(p)
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("server: %s is empty; remove it to make a new admin token", p)
		}
		return tok, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	tok := NewToken("adm")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", err
	}
	return tok, f.Close()
}

// NewToken returns a fresh random token: the prefix, "_" and 32 random
// bytes in unpadded base64url.
func NewToken(prefix string) string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return prefix + "_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// bearer returns the token of an "Authorization: Bearer" header. A cookie
// is never a token: the API is not cookie-authenticated, so a browser
// cannot be made to call it for a signed-in tester (CSRF).
func bearer(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if t, ok := strings.CutPrefix(h, "Bearer "); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

func (s *Server) isAdmin(r *http.Request) bool {
	t := bearer(r)
	if t == "" {
		return false
	}
	h := sha256.Sum256([]byte(t))
	return subtle.ConstantTimeCompare(h[:], s.adminHash[:]) == 1
}

// client returns the test item whose token the request carries, or writes
// the refusal and returns nil.
func (s *Server) client(w http.ResponseWriter, r *http.Request, id string) *store.TestItem {
	t := bearer(r)
	if t == "" {
		writeError(w, http.StatusUnauthorized, "no token: send Authorization: Bearer <the client token of the test item>")
		return nil
	}
	it, err := s.store.TestItemByToken(r.Context(), t)
	switch {
	case errors.Is(err, store.ErrExpired):
		writeError(w, http.StatusUnauthorized, "the token has expired: ask the tester for a new test item")
		return nil
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusUnauthorized, "unknown token")
		return nil
	case err != nil:
		s.internal(w, err)
		return nil
	}
	if !it.ExpiresAt.IsZero() && !s.now().Before(it.ExpiresAt) {
		writeError(w, http.StatusUnauthorized, "the token has expired: ask the tester for a new test item")
		return nil
	}
	if it.ID != id {
		writeError(w, http.StatusForbidden, fmt.Sprintf("the token is not the token of test item %s", id))
		return nil
	}
	return it
}

func (s *Server) internal(w http.ResponseWriter, err error) {
	s.log.Error("internal error", "err", err)
	writeError(w, http.StatusInternalServerError, "internal error: "+err.Error())
}

// Shutdown is a helper for commands: it shuts hs down within d.
func Shutdown(hs *http.Server, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return hs.Shutdown(ctx)
}
