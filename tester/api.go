package tester

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"aimeter/attest"
	"aimeter/clocksync"
	"aimeter/store"
)

// Registration is the body of POST /api/v1/tests: a test item to register.
type Registration struct {
	// TestID is the test ID to use; "" makes one ("T" and the UTC date
	// and time, then random letters). Letters, digits, '.', '_' and '-'
	// only, at most 64.
	TestID string `json:"test_id,omitempty"`
	// Party names the tested party. Required.
	Party string `json:"party"`
	// Info is the test information of clauses 6.1/7.1 (JSON); nil for none.
	Info json.RawMessage `json:"info,omitempty"`
	// RetestAllowance is how many retests the item may use after its first
	// attempt; 0 allows the first attempt only. At most 100.
	RetestAllowance int `json:"retest_allowance"`
	// PublicKey is the tested party's Ed25519 public key, PEM (PKIX), that
	// signs its uploads. Required.
	PublicKey string `json:"public_key"`
	// ExpiresIn is how long the client token works, a Go duration ("720h");
	// "" means DefaultTokenTTL.
	ExpiresIn string `json:"expires_in,omitempty"`
}

// Registered is the answer to a registration: the test ID, the client
// token (shown this once; the service keeps only its hash) and the
// configuration file for the tested party.
type Registered struct {
	TestID    string    `json:"test_id"`
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	Config    Config    `json:"config"`
}

// Config is the configuration file of a test item (GB-A-c): what the tested
// party's formal test needs to report to the service.
type Config struct {
	// Format is "aimeter-test-config/1".
	Format string `json:"format"`
	// TestID is the test ID the formal test reports under.
	TestID string `json:"test_id"`
	// Server is the service's base URL, as the registration reached it.
	Server string `json:"server"`
	// ServerCertificate is the service's TLS certificate (PEM) when it is
	// self-signed, for the client to trust; "" otherwise.
	ServerCertificate string `json:"server_certificate,omitempty"`
	// Party, RetestAllowance and ExpiresAt repeat the registration.
	Party           string    `json:"party"`
	RetestAllowance int       `json:"retest_allowance"`
	ExpiresAt       time.Time `json:"expires_at"`
	// KeyID names the public key that must sign the uploads (attest.KeyID).
	KeyID string `json:"key_id"`
	// Info is the test information registered.
	Info json.RawMessage `json:"info,omitempty"`
}

// ConfigFormat is Config.Format.
const ConfigFormat = "aimeter-test-config/1"

// EventRequest is the body of POST /api/v1/tests/{id}/events.
type EventRequest struct {
	// Kind is test_start, data_download_start, data_download_end or
	// test_end. test_start begins the next attempt (refused when the item
	// has none left).
	Kind string `json:"kind"`
	// At is when it happened on the client; the zero time means when the
	// service received it.
	At time.Time `json:"at,omitzero"`
	// Detail is any JSON the client adds; nil for none.
	Detail json.RawMessage `json:"detail,omitempty"`
}

// EventReply answers an event: the attempt it belongs to and its place in
// the chain.
type EventReply struct {
	Attempt int    `json:"attempt"`
	Seq     int64  `json:"seq"`
	Hash    string `json:"hash"`
}

// ErrorReply is the body of every refusal.
type ErrorReply struct {
	// Error says why, in one line.
	Error string `json:"error"`
	// Reasons list every reason when there are several (each claimed
	// metric that the records do not support).
	Reasons []string `json:"reasons,omitempty"`
}

var testIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// clientEvents are the lifecycle events a client may send (GB-7.7.1-j-1).
var clientEvents = map[string]bool{
	store.EventTestStart:         true,
	store.EventDataDownloadStart: true,
	store.EventDataDownloadEnd:   true,
	store.EventTestEnd:           true,
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("POST /api/v1/tests", s.adminOnly(s.handleRegister))
	m.HandleFunc("GET /api/v1/tests", s.adminOnly(s.handleListTests))
	m.HandleFunc("GET /api/v1/tests/{id}", s.handleGetTest)
	m.HandleFunc("GET /api/v1/token", s.handleToken)
	m.HandleFunc("POST /api/v1/tests/{id}/events", s.handleEvent)
	m.HandleFunc("POST /api/v1/tests/{id}/uploads", s.handleUpload)
	m.HandleFunc("GET /api/v1/runs/{id}", s.adminOnly(s.handleGetRun))
	m.HandleFunc("GET /api/v1/compare", s.adminOnly(s.handleCompare))
	m.HandleFunc("GET /api/v1/events", s.adminOnly(s.handleEvents))
	m.Handle("GET "+clocksync.Path, clocksync.Handler(nil)) // the shards' clock reference (docs/sharding.md)
	s.shardRoutes(m)
	s.dashboardRoutes(m)
	s.mux = m
}

func (s *Server) adminOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.isAdmin(r) {
			writeError(w, http.StatusUnauthorized, "this needs the admin token (Authorization: Bearer <admin.token>)")
			return
		}
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string, reasons ...string) {
	writeJSON(w, code, ErrorReply{Error: msg, Reasons: reasons})
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "request body: "+err.Error())
		return false
	}
	return true
}

// Register registers a test item (GB-A-b): it checks reg, makes the test ID
// and the client token, and stores the item with the token's hash.
func (s *Server) Register(r *http.Request, reg Registration) (*Registered, error) {
	if strings.TrimSpace(reg.Party) == "" {
		return nil, usageErr("party: required (the tested party's name)")
	}
	if reg.RetestAllowance < 0 || reg.RetestAllowance > 100 {
		return nil, usageErr(fmt.Sprintf("retest_allowance: %d is outside 0…100", reg.RetestAllowance))
	}
	if reg.PublicKey == "" {
		return nil, usageErr("public_key: required (the PEM of the Ed25519 key that signs the uploads; aimeter keygen makes one)")
	}
	pub, err := attest.ParsePublicKey([]byte(reg.PublicKey))
	if err != nil {
		return nil, usageErr("public_key: " + err.Error())
	}
	ttl := DefaultTokenTTL
	if reg.ExpiresIn != "" {
		if ttl, err = time.ParseDuration(reg.ExpiresIn); err != nil || ttl <= 0 {
			return nil, usageErr(fmt.Sprintf("expires_in: %q is not a positive duration (e.g. 720h)", reg.ExpiresIn))
		}
	}
	if reg.Info != nil && !json.Valid(reg.Info) {
		return nil, usageErr("info: not JSON")
	}
	id := reg.TestID
	if id == "" {
		id = "T" + s.now().UTC().Format("20060102-150405") + "-" + NewToken("")[1:7]
	} else if !testIDPattern.MatchString(id) {
		return nil, usageErr(fmt.Sprintf("test_id: %q: use 1 to 64 letters, digits, '.', '_' or '-'", id))
	}
	tok := NewToken("amt")
	now := s.now()
	it, err := s.store.CreateTestItem(r.Context(), store.TestItem{
		ID:              id,
		Party:           reg.Party,
		Info:            reg.Info,
		RetestAllowance: reg.RetestAllowance,
		PublicKey:       ed25519.PublicKey(pub),
		TokenHash:       store.HashToken(tok),
		ExpiresAt:       now.Add(ttl),
		CreatedAt:       now,
	})
	if err != nil {
		if _, e := s.store.TestItem(r.Context(), id); e == nil {
			return nil, usageErr(fmt.Sprintf("test_id: %s is registered already", id))
		}
		return nil, err
	}
	cfg := Config{
		Format:          ConfigFormat,
		TestID:          it.ID,
		Server:          baseURL(r),
		Party:           it.Party,
		RetestAllowance: it.RetestAllowance,
		ExpiresAt:       it.ExpiresAt,
		KeyID:           attest.KeyID(pub),
		Info:            reg.Info,
	}
	if pem, err := readSelfSigned(s.dataDir); err == nil {
		cfg.ServerCertificate = string(pem)
	}
	return &Registered{TestID: it.ID, Token: tok, ExpiresAt: it.ExpiresAt, Config: cfg}, nil
}

type usageError string

func (e usageError) Error() string { return string(e) }

func usageErr(s string) error { return usageError(s) }

func baseURL(r *http.Request) string {
	scheme := "https"
	if r.TLS == nil {
		scheme = "http"
	}
	return scheme + "://" + r.Host
}

func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) {
	var reg Registration
	if !decodeBody(w, r, &reg) {
		return
	}
	out, err := s.Register(r, reg)
	var ue usageError
	switch {
	case errors.As(err, &ue):
		writeError(w, http.StatusBadRequest, ue.Error())
	case err != nil:
		s.internal(w, err)
	default:
		s.log.Info("registered", "test", out.TestID)
		writeJSON(w, http.StatusCreated, out)
	}
}

// TestItemView is a test item as the API shows it, with its runs.
type TestItemView struct {
	store.TestItem
	RetestsUsed int         `json:"retests_used"`
	Expired     bool        `json:"expired"`
	KeyID       string      `json:"key_id,omitempty"`
	Runs        []store.Run `json:"runs"`
	// LastEvent is the latest lifecycle event: how far the test has come.
	LastEvent *store.Event `json:"last_event,omitempty"`
}

func (s *Server) testView(r *http.Request, it *store.TestItem, withEvents bool) (*TestItemView, error) {
	v := &TestItemView{TestItem: *it, RetestsUsed: it.RetestsUsed()}
	v.Expired = !it.ExpiresAt.IsZero() && !s.now().Before(it.ExpiresAt)
	if it.PublicKey != nil {
		v.KeyID = attest.KeyID(it.PublicKey)
	}
	runs, err := s.store.Runs(r.Context(), store.RunFilter{TestItemID: it.ID})
	if err != nil {
		return nil, err
	}
	v.Runs = runs
	if v.Runs == nil {
		v.Runs = []store.Run{}
	}
	if withEvents {
		evs, err := s.store.Events(r.Context(), store.EventFilter{TestItemID: it.ID})
		if err != nil {
			return nil, err
		}
		if len(evs) > 0 {
			v.LastEvent = &evs[len(evs)-1]
		}
	}
	return v, nil
}

func (s *Server) handleListTests(w http.ResponseWriter, r *http.Request) {
	items, err := s.store.TestItems(r.Context())
	if err != nil {
		s.internal(w, err)
		return
	}
	out := []*TestItemView{}
	for i := range items {
		v, err := s.testView(r, &items[i], true)
		if err != nil {
			s.internal(w, err)
			return
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, out)
}

// handleGetTest answers the admin, or the item's own client.
func (s *Server) handleGetTest(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var it *store.TestItem
	if s.isAdmin(r) {
		var err error
		it, err = s.store.TestItem(r.Context(), id)
		if errors.Is(err, store.ErrNotFound) {
			writeError(w, http.StatusNotFound, "no test item "+id)
			return
		}
		if err != nil {
			s.internal(w, err)
			return
		}
	} else if it = s.client(w, r, id); it == nil {
		return
	}
	v, err := s.testView(r, it, true)
	if err != nil {
		s.internal(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// handleToken answers a client with the test item its token belongs to.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	t := bearer(r)
	if t == "" {
		writeError(w, http.StatusUnauthorized, "no token: send Authorization: Bearer <the client token of the test item>")
		return
	}
	it, err := s.store.TestItemByToken(r.Context(), t)
	if err != nil {
		if errors.Is(err, store.ErrExpired) || errors.Is(err, store.ErrNotFound) {
			s.client(w, r, "") // writes the refusal
			return
		}
		s.internal(w, err)
		return
	}
	if it = s.client(w, r, it.ID); it == nil {
		return
	}
	v, err := s.testView(r, it, true)
	if err != nil {
		s.internal(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) handleEvent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	it := s.client(w, r, id)
	if it == nil {
		return
	}
	var req EventRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if !clientEvents[req.Kind] {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("kind: %q is not a client event (test_start, data_download_start, data_download_end, test_end)", req.Kind))
		return
	}
	if req.Detail != nil && !json.Valid(req.Detail) {
		writeError(w, http.StatusBadRequest, "detail: not JSON")
		return
	}
	attempt := it.Attempts
	if req.Kind == store.EventTestStart {
		a, err := s.claimAttempt(r.Context(), id, req.Detail)
		if s.refuseClaim(w, id, err) {
			return
		}
		attempt = a
	} else if attempt == 0 {
		writeError(w, http.StatusConflict, fmt.Sprintf("%s before test_start: the test has not started", req.Kind))
		return
	}
	at := req.At
	if at.IsZero() {
		at = s.now()
	}
	ev, err := s.store.AppendEvent(r.Context(), store.Event{TestItemID: id, Attempt: attempt, Kind: req.Kind, At: at, Detail: req.Detail})
	if err != nil {
		s.internal(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, EventReply{Attempt: attempt, Seq: ev.Seq, Hash: ev.Hash})
}

// refuseClaim writes the refusal of a failed ClaimAttempt; false when err
// is nil.
func (s *Server) refuseClaim(w http.ResponseWriter, id string, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, store.ErrRetestsExhausted):
		writeError(w, http.StatusConflict, fmt.Sprintf("test item %s has no attempt left: its first attempt and every retest it was allowed are used", id))
	case errors.Is(err, store.ErrExpired):
		writeError(w, http.StatusUnauthorized, "the token has expired: ask the tester for a new test item")
	default:
		s.internal(w, err)
	}
	return true
}

// RunView is a run as the API shows it: the stored run, its metrics and
// files.
type RunView struct {
	store.Run
	Metrics   []store.Metric   `json:"metrics"`
	Artifacts []store.Artifact `json:"artifacts"`
}

func (s *Server) runView(r *http.Request, id int64) (*RunView, error) {
	run, err := s.store.Run(r.Context(), id)
	if err != nil {
		return nil, err
	}
	ms, err := s.store.Metrics(r.Context(), id)
	if err != nil {
		return nil, err
	}
	as, err := s.store.Artifacts(r.Context(), id)
	if err != nil {
		return nil, err
	}
	return &RunView{Run: *run, Metrics: ms, Artifacts: as}, nil
}

func (s *Server) handleGetRun(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, "run id: not a number")
		return
	}
	v, err := s.runView(r, id)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no run %d", id))
		return
	}
	if err != nil {
		s.internal(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// Comparison is two or more runs side by side: one row per metric, one
// value per run (nil where the run lacks it).
type Comparison struct {
	Runs []store.Run      `json:"runs"`
	Rows []ComparedMetric `json:"metrics"`
}

// ComparedMetric is one metric of a Comparison.
type ComparedMetric struct {
	Name   string       `json:"name"`
	Unit   string       `json:"unit,omitempty"`
	Better store.Better `json:"better,omitempty"`
	Values []*float64   `json:"values"`
	// Change is the relative change of the last run from the first,
	// (last − first) / first; nil where either lacks it or first is 0.
	Change *float64 `json:"change,omitempty"`
}

// parseRunIDs reads "1,2" or repeated ?runs= into run IDs (2 to 8).
func parseRunIDs(r *http.Request) ([]int64, error) {
	var ids []int64
	for _, v := range r.URL.Query()["runs"] {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			id, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("runs: %q is not a run id", f)
			}
			ids = append(ids, id)
		}
	}
	if len(ids) < 2 || len(ids) > 8 {
		return nil, fmt.Errorf("runs: give 2 to 8 run ids (?runs=1,2), got %d", len(ids))
	}
	return ids, nil
}

// Compare puts the runs side by side.
func (s *Server) Compare(r *http.Request, ids []int64) (*Comparison, error) {
	c := &Comparison{}
	index := map[string]int{}
	for i, id := range ids {
		v, err := s.runView(r, id)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", id, err)
		}
		c.Runs = append(c.Runs, v.Run)
		for _, m := range v.Metrics {
			k, ok := index[m.Name]
			if !ok {
				k = len(c.Rows)
				index[m.Name] = k
				c.Rows = append(c.Rows, ComparedMetric{Name: m.Name, Unit: m.Unit, Better: m.Better, Values: make([]*float64, len(ids))})
			}
			val := m.Value
			c.Rows[k].Values[i] = &val
		}
	}
	for i := range c.Rows {
		v := c.Rows[i].Values
		if a, b := v[0], v[len(v)-1]; a != nil && b != nil && *a != 0 {
			ch := (*b - *a) / *a
			c.Rows[i].Change = &ch
		}
	}
	return c, nil
}

func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	ids, err := parseRunIDs(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	c, err := s.Compare(r, ids)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	if err != nil {
		s.internal(w, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// AuditTrail is the event log with the chain's verification.
type AuditTrail struct {
	// ChainOK is whether VerifyChain found every link intact; Checked is
	// how many rows it checked and ChainError the first break.
	ChainOK    bool          `json:"chain_ok"`
	Checked    int64         `json:"checked"`
	ChainError string        `json:"chain_error,omitempty"`
	Events     []store.Event `json:"events"`
}

// Audit reads the events (of one test item, or all when testID is "") and
// verifies the whole chain.
func (s *Server) Audit(r *http.Request, testID string) (*AuditTrail, error) {
	evs, err := s.store.Events(r.Context(), store.EventFilter{TestItemID: testID})
	if err != nil {
		return nil, err
	}
	a := &AuditTrail{Events: evs}
	if a.Events == nil {
		a.Events = []store.Event{}
	}
	n, err := s.store.VerifyChain(r.Context())
	a.Checked = n
	var ce *store.ChainError
	switch {
	case errors.As(err, &ce):
		a.ChainError = ce.Error()
	case err != nil:
		return nil, err
	default:
		a.ChainOK = true
	}
	return a, nil
}

func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	a, err := s.Audit(r, r.URL.Query().Get("test"))
	if err != nil {
		s.internal(w, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func jsonIndent(v any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return string(b), err
}
