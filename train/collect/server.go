// Package collect is the HTTP endpoint that the ranks of a distributed
// training job (Slurm, Kubernetes, mpirun) post their events to, so that
// a multi-node run is measured as one cluster on one clock, with each
// rank's clock offset measured and recorded (IN-69).
//
// # Protocol
//
//	POST /v1/clock   {"rank":R,"node":"n","t0":T0}
//	                 -> {"t1":T1,"t2":T2}
//	POST /v1/offset  {"rank":R,"node":"n","offset_ns":O,"rtt_ns":D,"samples":K}
//	POST /v1/events  a JSON array, or JSON lines, of train.Event objects
//	                 from one rank; header Aimeter-Batch-Seq: N
//	GET  /v1/status  counts and every rank's clock offset
//
// Clock offsets are estimated NTP-style. A rank reads its own clock (T0),
// the collector stamps the request's arrival (T1) and its reply (T2) on
// its clock, the rank reads its clock again on the reply (T3); then
// offset = ((T1-T0) + (T2-T3)) / 2 and round trip = (T3-T0) - (T2-T1).
// Whatever the asymmetry of the two directions, the true offset is
// within round trip / 2 of the estimate, so the rank keeps the sample
// with the shortest round trip and reports it; the collector records the
// offset and the uncertainty (round trip / 2) and uses the best report.
//
// A rank's clock is its Event.Mono (nanoseconds from any origin of its
// own). The collector's clock is nanoseconds since NewServer. An event's
// Time on the run's clock is Mono + offset; an event without Mono (or
// from a rank that never reported an offset) is placed by its Wall time
// against the collector's wall clock at its start, which is only as good
// as the hosts' time synchronisation. Offsets apply when events are read
// (Events), so a late or better report corrects events already stored.
//
// # No double counting
//
// Each batch carries a sequence number per rank. The collector stores a
// batch once per rank and sequence and answers a repeat with success
// without storing it again. A client retries a batch only when the
// connection failed (the request may or may not have reached the
// collector); since the retry has the same sequence number, it is
// counted once either way.
package collect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"aimeter/train"
)

// SeqHeader is the request header that carries a batch's sequence number.
const SeqHeader = "Aimeter-Batch-Seq"

// Options configure a Server.
type Options struct {
	// MaxEvents bounds the events stored; a batch that would pass it is
	// refused with 507 and counted in Status.Refused. Zero means 10
	// million (about 2 GB at worst).
	MaxEvents int
	// MaxBody bounds one request body in bytes; larger ones get 413. Zero
	// means 8 MiB.
	MaxBody int64
	// Now is the collector's clock in nanoseconds from its origin. Nil
	// means time since NewServer (monotonic).
	Now func() int64
}

// Server is the event endpoint; it is an http.Handler and is safe for
// concurrent use.
type Server struct {
	opts      Options
	start     time.Time
	mux       *http.ServeMux
	mu        sync.Mutex
	events    []train.Event
	ranks     map[int]*rankInfo
	batches   int64
	duplicate int64
	refused   int64
	rejected  int64
}

// rankInfo is what the collector knows about one rank.
type rankInfo struct {
	RankStatus
	seqs map[uint64]struct{}
}

// RankStatus is one rank's entry in the status.
type RankStatus struct {
	// Rank and Node name the rank.
	Rank int    `json:"rank"`
	Node string `json:"node"`
	// Events counts the events stored from it.
	Events int64 `json:"events"`
	// Batches counts its batches stored; Duplicates the repeats ignored.
	Batches    int64 `json:"batches"`
	Duplicates int64 `json:"duplicates"`
	// HasOffset is true once the rank reported a clock offset.
	HasOffset bool `json:"has_offset"`
	// OffsetNS is the collector's clock minus the rank's, in ns;
	// UncertaintyNS bounds its error (round trip / 2).
	OffsetNS      int64 `json:"offset_ns"`
	UncertaintyNS int64 `json:"uncertainty_ns"`
	// Samples is how many clock exchanges the best report came from.
	Samples int `json:"samples"`
}

// Status is the answer of GET /v1/status.
type Status struct {
	// Events counts events stored; Batches the batches stored.
	Events  int64 `json:"events"`
	Batches int64 `json:"batches"`
	// Duplicates counts repeated batches acknowledged without storing.
	Duplicates int64 `json:"duplicates"`
	// Refused counts events refused because the store was full.
	Refused int64 `json:"refused"`
	// Rejected counts requests refused as invalid (4xx).
	Rejected int64 `json:"rejected"`
	// Ranks lists the ranks seen, by rank.
	Ranks []RankStatus `json:"ranks"`
}

// NewServer returns a collector whose clock starts now. Serve it with an
// http.Server that sets ReadHeaderTimeout and ReadTimeout, so that a
// stalled rank cannot hold a connection open for ever. Memory is bounded
// by Options.MaxEvents: the per-rank record of batch numbers grows only
// with batches stored, each of at least one event.
func NewServer(opts Options) *Server {
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = 10_000_000
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = 8 << 20
	}
	s := &Server{opts: opts, start: time.Now(), ranks: make(map[int]*rankInfo)}
	if s.opts.Now == nil {
		s.opts.Now = func() int64 { return int64(time.Since(s.start)) }
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /v1/clock", s.clock)
	s.mux.HandleFunc("POST /v1/offset", s.offset)
	s.mux.HandleFunc("POST /v1/events", s.post)
	s.mux.HandleFunc("GET /v1/status", s.status)
	return s
}

// ServeHTTP serves the protocol of the package comment.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// ClockRequest is the body of POST /v1/clock.
type ClockRequest struct {
	// Rank and Node name the rank.
	Rank int    `json:"rank"`
	Node string `json:"node"`
	// T0 is the rank's clock when it sent the request, in ns.
	T0 int64 `json:"t0"`
}

// ClockReply is the answer of POST /v1/clock.
type ClockReply struct {
	// T0 echoes the request's; T1 and T2 are the collector's clock when
	// the request arrived and when the reply left, in ns.
	T0 int64 `json:"t0"`
	T1 int64 `json:"t1"`
	T2 int64 `json:"t2"`
}

// OffsetReport is the body of POST /v1/offset: a rank's best estimate.
type OffsetReport struct {
	// Rank and Node name the rank.
	Rank int    `json:"rank"`
	Node string `json:"node"`
	// OffsetNS is the collector's clock minus the rank's; RTTNS the
	// round trip of the sample it came from; Samples how many exchanges
	// were made.
	OffsetNS int64 `json:"offset_ns"`
	RTTNS    int64 `json:"rtt_ns"`
	Samples  int   `json:"samples"`
}

func (s *Server) clock(w http.ResponseWriter, r *http.Request) {
	t1 := s.opts.Now()
	var req ClockRequest
	if err := s.decode(w, r, &req); err != nil {
		return
	}
	if err := checkRank(req.Rank, req.Node); err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, ClockReply{T0: req.T0, T1: t1, T2: s.opts.Now()})
}

func (s *Server) offset(w http.ResponseWriter, r *http.Request) {
	var rep OffsetReport
	if err := s.decode(w, r, &rep); err != nil {
		return
	}
	if err := checkRank(rep.Rank, rep.Node); err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	if rep.RTTNS < 0 {
		s.fail(w, http.StatusBadRequest, fmt.Errorf(`field "rtt_ns": %d is negative`, rep.RTTNS))
		return
	}
	s.mu.Lock()
	ri := s.rank(rep.Rank, rep.Node)
	if ri.Node != rep.Node {
		node := ri.Node
		s.mu.Unlock()
		s.fail(w, http.StatusConflict, fmt.Errorf(`field "node": rank %d is node %q, not %q (two processes with one rank?)`, rep.Rank, truncate(node), truncate(rep.Node)))
		return
	}
	unc := rep.RTTNS / 2
	if !ri.HasOffset || unc <= ri.UncertaintyNS {
		ri.HasOffset, ri.OffsetNS, ri.UncertaintyNS, ri.Samples = true, rep.OffsetNS, unc, rep.Samples
	}
	st := ri.RankStatus
	s.mu.Unlock()
	writeJSON(w, st)
}

// rank returns the rank's entry, making it; s.mu is held.
func (s *Server) rank(rank int, node string) *rankInfo {
	ri := s.ranks[rank]
	if ri == nil {
		ri = &rankInfo{RankStatus: RankStatus{Rank: rank, Node: node}, seqs: make(map[uint64]struct{})}
		s.ranks[rank] = ri
	}
	return ri
}

func (s *Server) post(w http.ResponseWriter, r *http.Request) {
	var seq uint64
	hasSeq := false
	if h := r.Header.Get(SeqHeader); h != "" {
		n, err := strconv.ParseUint(h, 10, 64)
		if err != nil {
			s.fail(w, http.StatusBadRequest, fmt.Errorf("header %s: %q is not a sequence number", SeqHeader, h))
			return
		}
		seq, hasSeq = n, true
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.fail(w, http.StatusRequestEntityTooLarge, fmt.Errorf("body over %d bytes", mbe.Limit))
			return
		}
		s.fail(w, http.StatusBadRequest, fmt.Errorf("reading body: %w", err))
		return
	}
	evs, err := DecodeEvents(body)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	if len(evs) == 0 {
		writeJSON(w, map[string]int{"stored": 0})
		return
	}
	s.mu.Lock()
	ri := s.rank(evs[0].Rank, evs[0].Node)
	if ri.Node != evs[0].Node {
		node := ri.Node
		s.mu.Unlock()
		s.fail(w, http.StatusConflict, fmt.Errorf(`field "node": rank %d is node %q, not %q (two processes with one rank?)`, evs[0].Rank, truncate(node), truncate(evs[0].Node)))
		return
	}
	if hasSeq {
		if _, dup := ri.seqs[seq]; dup {
			ri.Duplicates++
			s.duplicate++
			s.mu.Unlock()
			writeJSON(w, map[string]any{"stored": 0, "duplicate": true})
			return
		}
	}
	if len(s.events)+len(evs) > s.opts.MaxEvents {
		s.refused += int64(len(evs))
		s.mu.Unlock()
		s.fail(w, http.StatusInsufficientStorage, fmt.Errorf("event store full (%d events)", s.opts.MaxEvents))
		return
	}
	if hasSeq {
		ri.seqs[seq] = struct{}{}
	}
	s.events = append(s.events, evs...)
	ri.Events += int64(len(evs))
	ri.Batches++
	s.batches++
	s.mu.Unlock()
	writeJSON(w, map[string]int{"stored": len(evs)})
}

func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, s.Status())
}

// Status returns the counts and every rank's clock offset.
func (s *Server) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Events: int64(len(s.events)), Batches: s.batches, Duplicates: s.duplicate, Refused: s.refused, Rejected: s.rejected}
	for _, ri := range s.ranks {
		st.Ranks = append(st.Ranks, ri.RankStatus)
	}
	slices.SortFunc(st.Ranks, func(a, b RankStatus) int { return a.Rank - b.Rank })
	return st
}

// Events returns a copy of the stored events with Time set on the
// collector's clock (see the package comment), sorted by Time; events of
// equal Time keep their arrival order.
func (s *Server) Events() []train.Event {
	s.mu.Lock()
	out := slices.Clone(s.events)
	off := make(map[int]RankStatus, len(s.ranks))
	for r, ri := range s.ranks {
		off[r] = ri.RankStatus
	}
	s.mu.Unlock()
	for i := range out {
		e := &out[i]
		if rs := off[e.Rank]; rs.HasOffset && e.Mono != 0 {
			e.Time = e.Mono + rs.OffsetNS
		} else {
			e.Time = e.Wall.Sub(s.start).Nanoseconds()
		}
	}
	slices.SortStableFunc(out, func(a, b train.Event) int {
		switch {
		case a.Time < b.Time:
			return -1
		case a.Time > b.Time:
			return 1
		}
		return 0
	})
	return out
}

// decode reads a small JSON body into v, answering 400 itself on error.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		err = fmt.Errorf("body: %w", err)
		s.fail(w, http.StatusBadRequest, err)
		return err
	}
	return nil
}

// fail answers an error as JSON {"error": "..."}.
func (s *Server) fail(w http.ResponseWriter, code int, err error) {
	if code < 500 {
		s.mu.Lock()
		s.rejected++
		s.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func checkRank(rank int, node string) error {
	if rank < 0 {
		return fmt.Errorf(`field "rank": %d is negative`, rank)
	}
	if node == "" {
		return errors.New(`field "node": missing`)
	}
	if len(node) > 256 {
		return errors.New(`field "node": longer than 256 bytes`)
	}
	return nil
}

// kinds are the event kinds the collector accepts.
var kinds = map[train.Kind]bool{
	train.DataReadStart: true, train.DataReadEnd: true, train.TrainStart: true,
	train.AcceleratorStart: true, train.EpochStart: true, train.EpochEnd: true,
	train.ValidationStart: true, train.ValidationEnd: true, train.TrainEnd: true,
	train.ConversionStart: true, train.ConversionEnd: true, train.PersistStart: true,
	train.PersistEnd: true, train.Send: true, train.Receive: true,
	train.GenerationStart: true, train.GenerationEnd: true, train.TrialStart: true,
	train.TrialEnd: true, train.Utilization: true, train.Power: true,
	train.InitStart: true, train.InitEnd: true, train.BlockStart: true,
	train.BlockEnd: true, train.Accuracy: true, train.TrainSamples: true,
	train.EvalSamples: true,
}

// DecodeEvents decodes a batch: a JSON array of events, or one event per
// line (JSON lines). Unknown fields are refused, so that a misspelt field
// is not silently lost. Every event must have a known kind, a node, a
// rank ≥ 0 and a Mono or Wall time, all events the same rank and node,
// and a finite Value; the error names the event (0-based) and the field.
// The events' Time is cleared: the collector sets it.
func DecodeEvents(body []byte) ([]train.Event, error) {
	var evs []train.Event
	i := 0
	for i < len(body) && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n') {
		i++
	}
	if i < len(body) && body[i] == '[' {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&evs); err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		if dec.More() {
			return nil, errors.New("events: data after the array")
		}
	} else {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		for dec.More() {
			var e train.Event
			if err := dec.Decode(&e); err != nil {
				return nil, fmt.Errorf("event %d: %w", len(evs), err)
			}
			evs = append(evs, e)
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, fmt.Errorf("event %d: not a JSON object", len(evs))
		}
	}
	for n := range evs {
		e := &evs[n]
		if err := check(e, &evs[0]); err != nil {
			return nil, fmt.Errorf("event %d: %w", n, err)
		}
		e.Time = 0
	}
	return evs, nil
}

// check validates one event against the batch's first.
func check(e, first *train.Event) error {
	switch {
	case e.Kind == "":
		return errors.New(`field "kind": missing`)
	case !kinds[e.Kind]:
		return fmt.Errorf(`field "kind": unknown kind %q`, truncate(string(e.Kind)))
	}
	if err := checkRank(e.Rank, e.Node); err != nil {
		return err
	}
	switch {
	case e.Mono == 0 && e.Wall.IsZero():
		return errors.New(`fields "mono_ns" and "wall": neither is set`)
	case e.Rank != first.Rank:
		return fmt.Errorf(`field "rank": %d, but the batch is from rank %d (one rank per batch)`, e.Rank, first.Rank)
	case e.Node != first.Node:
		return fmt.Errorf(`field "node": %q, but the batch is from node %q`, truncate(e.Node), truncate(first.Node))
	case e.Value != nil && (math.IsNaN(*e.Value) || math.IsInf(*e.Value, 0)):
		return errors.New(`field "value": not finite`)
	case e.Epoch < 0 || e.Trial < 0 || e.Chip < 0 || e.Count < 0:
		return errors.New(`fields "epoch", "trial", "chip", "count": negative`)
	case len(e.ID) > 256 || len(e.Status) > 256:
		return errors.New(`fields "id", "status": longer than 256 bytes`)
	}
	return nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
