package benchmark_test

import (
	"cmp"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/bundle"
	"aimeter/derived/metrics"
	"aimeter/loadgen"
	"aimeter/serve"
	"aimeter/sut"
)

// The bounds of the clock checks below. aimeter and the simulator run in
// one process and read the same wall clock (the run's clock is turned into
// it with its pass's start_unix_ns), so the client can only see an event
// after the server sent it: the client's time minus the server's is the
// loopback cost (tens of µs on an idle machine) plus however long the
// goroutines waited for a core. On a loaded 2-core CI machine under -race
// that wait is usually well under a millisecond but can reach tens of
// milliseconds now and then, so:
//
//   - the median over all joined events must lie within ±clockP50 of 0
//     (the test's server takes 40 ms to the first token and 25 ms a token,
//     so that an error of a whole TTFT or TPOT is more than twice that);
//   - no event may be later than clockMaxLate;
//   - no event may come earlier than clockMaxEarly before the server's
//     time. The server notes a send after Flush returns, so a client that
//     reads at once can beat it by as long as the server's goroutine waits
//     for a core right then, the only way to be early (a few ms at a load
//     average of 8 on 2 cores); 20 ms is still less than the server's 25 ms
//     between tokens.
const (
	clockP50      = 10 * time.Millisecond
	clockMaxLate  = 250 * time.Millisecond
	clockMaxEarly = 20 * time.Millisecond
)

// serverResponse is one response as the simulator's send log has it.
type serverResponse struct {
	id      string
	seq     uint64
	arrival int64   // when the request arrived, Unix ns
	content []int64 // when each token event was sent, Unix ns
	last    int64   // when the last event ([DONE]) was sent, Unix ns
}

// serverResponses groups a send log by response, in arrival order.
func serverResponses(t *testing.T, sends []serve.SendTime) []serverResponse {
	t.Helper()
	byID := map[string]*serverResponse{}
	var out []*serverResponse
	for _, s := range sends {
		r := byID[s.ID]
		if r == nil {
			seq, err := strconv.ParseUint(s.ID[strings.LastIndexByte(s.ID, '-')+1:], 10, 64)
			if err != nil {
				t.Fatalf("send log id %q: %v", s.ID, err)
			}
			r = &serverResponse{id: s.ID, seq: seq}
			byID[s.ID] = r
			out = append(out, r)
		}
		if s.Chunk == 0 {
			r.arrival = s.ArrivalUnixNano
		}
		if s.Tokens == 1 {
			r.content = append(r.content, s.UnixNano)
		}
		r.last = max(r.last, s.UnixNano)
	}
	slices.SortFunc(out, func(a, b *serverResponse) int { return cmp.Compare(a.seq, b.seq) })
	res := make([]serverResponse, len(out))
	for i, r := range out {
		if r.arrival == 0 {
			t.Fatalf("response %s: no arrival time in the send log", r.id)
		}
		res[i] = *r
	}
	return res
}

// clientRequest is one request as the run's bundle has it, every time in
// Unix ns.
type clientRequest struct {
	rec                                 loadgen.Record
	scheduled, issued, first, completed int64
	tokens                              []int64
}

// clientRequests reads a bundle's reported pass, its run-clock times moved
// onto the wall clock with the pass's start_unix_ns, in the order the
// requests completed.
func clientRequests(t *testing.T, dir string) ([]clientRequest, loadgen.PassInfo) {
	t.Helper()
	b, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	pi := b.Result.ReportedPass()
	if pi < 0 {
		t.Fatal("no reported pass")
	}
	pass := b.Result.Passes[pi]
	origin := pass.StartUnixNs
	toks := map[uint64][]int64{}
	for seq, times := range b.Result.TokenTimes() {
		toks[seq] = times
	}
	var out []clientRequest
	for rec := range b.Result.PassRecords(pi) {
		if rec.Status != loadgen.StatusOK {
			t.Fatalf("record %+v: want every request answered", rec)
		}
		c := clientRequest{rec: rec, scheduled: origin + rec.ScheduledNs, issued: origin + rec.IssuedNs,
			first: origin + rec.FirstTokenNs, completed: origin + rec.CompletedNs}
		if rec.FirstTokenNs == loadgen.NoTime {
			t.Fatalf("record %+v: no first-token time from a streaming run", rec)
		}
		for _, x := range toks[rec.SeqID] {
			c.tokens = append(c.tokens, origin+x)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b clientRequest) int { return cmp.Compare(a.completed, b.completed) })
	return out, pass
}

// lateness collects differences, each a client's (or the schedule's) time
// minus the server's, and checks them against the bounds above.
type lateness struct {
	what string
	d    []int64
	at   []string // where each difference comes from
}

func (l *lateness) add(d int64, at string) { l.d = append(l.d, d); l.at = append(l.at, at) }

func (l *lateness) check(t *testing.T) {
	t.Helper()
	if len(l.d) == 0 {
		t.Errorf("%s: nothing joined", l.what)
		return
	}
	s := slices.Clone(l.d)
	slices.Sort(s)
	p50 := time.Duration(s[len(s)/2])
	t.Logf("%s, over %d: min %v, p50 %v, max %v", l.what, len(s), time.Duration(s[0]), p50, time.Duration(s[len(s)-1]))
	if p50 < -clockP50 || p50 > clockP50 {
		t.Errorf("%s: median %v, want within ±%v", l.what, p50, clockP50)
	}
	for i, d := range l.d {
		if d < -int64(clockMaxEarly) || d > int64(clockMaxLate) {
			t.Errorf("%s: %s: %v, want within [−%v, %v]", l.what, l.at[i], time.Duration(d), clockMaxEarly, clockMaxLate)
		}
	}
}

// TestClientTimesAgainstServer runs a trace replay, streaming, against the
// simulator on a loopback socket and checks each request's times, as
// aimeter recorded them in the bundle, against the simulator's send log:
// when the request arrived and when each event left.
//
// The server takes 40 ms to the first token and 25 ms a token. The trace
// has four bursts of four requests 500 ms apart, with output lengths 2, 3,
// 4 and 5 (a different order in each burst), and the client has one
// connection (MaxConns 1), so the requests of a burst queue in the client
// and the later ones are sent 65–345 ms after their scheduled time.
// One connection serves the requests one after another, so the join is
// exact: the n-th response the client finished reading is the n-th the
// server numbered. Each pair must then agree on the number of tokens, which
// is also the trace's output length of the record's sample.
//
// Per request it checks, on one wall clock:
//   - the record's scheduled time is the trace's, and the server got the
//     request after it and after the client issued it;
//   - aimeter's TTFT (first token − scheduled time, as the sweep and the
//     report compute it) equals the server's first token send time minus
//     the trace's scheduled time, up to the bounds above;
//   - every token time of tokens.parquet is the matching token event's
//     send time, and the completion the last event's, up to the bounds;
//   - aimeter's TPOT ((completion − first token) / (tokens − 1)) equals the
//     server's own ((last event − first token event) / (tokens − 1)): the
//     difference times (tokens − 1), which is the completion's lateness
//     minus the first token's, has its median within ±clockP50 and all
//     within ±(clockMaxLate + clockMaxEarly).
//
// Mistakes this catches: latency measured from the send rather than the
// scheduled time (the TTFTs of the 12 queued requests would be 65–345 ms
// short: the median and the early bound fail; the test checks that more
// than half the requests queued that long); a pass start that is not the
// run clock's origin (every time shifted); a first token timed at the chat
// role event, which the simulator sends as soon as the request arrives
// (TTFT 40 ms short); token times shifted by one event (25 ms); token
// times or counts given to the wrong request (the token counts of the pair
// differ, or the times are off by a whole response); a completion timed
// before the stream ended. The first four were tried by changing aimeter
// for a run (the client's first token and token times taken from the send,
// the pass start 15 ms off, the first token at the role event, every token
// time the previous event's): each failed the test.
func TestClientTimesAgainstServer(t *testing.T) {
	ttft, step := 40*time.Millisecond, 25*time.Millisecond
	sim, err := serve.NewOpenAI(serve.OpenAIOptions{
		TTFT: serve.Dist{Kind: serve.DistConst, A: float64(ttft), Duration: true},
		TPOT: serve.Dist{Kind: serve.DistConst, A: float64(step), Duration: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); sim.Close() })

	// t_ms,input_tokens,output_tokens
	const burstGap = 500 * time.Millisecond
	outputs := [][]int{{2, 3, 4, 5}, {5, 4, 3, 2}, {3, 5, 2, 4}, {4, 2, 5, 3}}
	var tr strings.Builder
	var want []int // output tokens by sample index
	var sched []time.Duration
	for b, burst := range outputs {
		for _, n := range burst {
			at := time.Duration(b) * burstGap
			fmt.Fprintf(&tr, "%d,%d,%d\n", at.Milliseconds(), 8+n, n)
			want = append(want, n)
			sched = append(sched, at)
		}
	}
	path := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(path, []byte(tr.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	_, err = benchmark.Run(context.Background(), benchmark.Plan{
		SUT: sut.Config{Kind: sut.OpenAI, Net: sut.Net{URLs: []string{srv.URL}, MaxConns: 1},
			OpenAI: &sut.OpenAIConfig{IgnoreEOS: true}},
		Replay:    &benchmark.Replay{Path: path},
		OutputDir: out, NoReport: true, StallTimeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	client, pass := clientRequests(t, out)
	server := serverResponses(t, sim.SendTimes())
	if len(client) != len(want) || len(server) != len(want) {
		t.Fatalf("%d records and %d server responses, want %d each", len(client), len(server), len(want))
	}
	ttftL := lateness{what: "TTFT from the scheduled time, aimeter's − the server's first token event − the trace's time"}
	tokL := lateness{what: "token times, tokens.parquet − the server's sends"}
	endL := lateness{what: "completion, the record's − the server's last event"}
	var tpot []int64 // (aimeter's TPOT − the server's) × (tokens − 1)
	queued := 0
	for i, c := range client {
		s := server[i]
		k := c.rec.SampleIndex
		at := fmt.Sprintf("request %d (sample %d, server %s)", i+1, k, s.id)
		n := want[k]
		if int(c.rec.Tokens) != n || len(c.tokens) != n || len(s.content) != n {
			t.Fatalf("%s: %d tokens in the record, %d token times, %d token events at the server; the trace says %d", at, c.rec.Tokens, len(c.tokens), len(s.content), n)
		}
		if c.rec.ScheduledNs != int64(sched[k]) {
			t.Errorf("%s: scheduled at %v, the trace says %v", at, time.Duration(c.rec.ScheduledNs), sched[k])
		}
		// Causality on one clock. The pass's wall-clock start is read just
		// before its run-clock origin, so a client time turned into wall
		// time can only come out early, by the gap between the two reads,
		// which makes this order safe to require; the microsecond is slack.
		const eps = int64(time.Microsecond)
		if s.arrival+eps < c.issued || c.issued+eps < c.scheduled {
			t.Errorf("%s: scheduled %d, issued %d, arrived at the server %d: want them in this order", at, c.scheduled, c.issued, s.arrival)
		}
		if q := s.arrival - c.scheduled; q > int64(3*clockP50) {
			queued++
		}
		x := metrics.SampleOf(c.rec)
		truth := s.content[0] - c.scheduled // the server's first token, from the trace's schedule
		ttftL.add(x.TTFTNs-truth, at)
		for j := range n {
			tokL.add(c.tokens[j]-s.content[j], fmt.Sprintf("%s token %d", at, j))
		}
		// The record's first-token time is the first token's arrival, the
		// time tokens.parquet has first (Responder.FirstTokenAt): one
		// figure, not two a decoding apart.
		if c.first != c.tokens[0] {
			t.Errorf("%s: first token at %d, its token time %d: want them equal", at, c.first, c.tokens[0])
		}
		endL.add(c.completed-s.last, at)
		if x.HasTPOT {
			tpot = append(tpot, (x.TPOTNs-(s.last-s.content[0])/int64(n-1))*int64(n-1))
		}
	}
	// The earliest arrival of each burst: its request waited for nothing
	// but the client, so it arrived after its scheduled time (checked per
	// request above) and within clockMaxLate of it. The other checks
	// already catch a wrong pass start (it shifts every client time); this
	// one says the schedule is where the server saw the requests come.
	for b := range outputs {
		first := int64(-1)
		for i, c := range client {
			if c.rec.SampleIndex/4 == uint64(b) && (first < 0 || server[i].arrival < first) {
				first = server[i].arrival
			}
		}
		if d := first - (pass.StartUnixNs + int64(time.Duration(b)*burstGap)); d > int64(clockMaxLate) {
			t.Errorf("burst %d: its first request reached the server %v after its scheduled time, want at most %v", b+1, time.Duration(d), clockMaxLate)
		}
	}
	for _, l := range []*lateness{&ttftL, &tokL, &endL} {
		l.check(t)
	}
	// The TPOT difference is the completion's lateness minus the first
	// token's: each within the bounds, so is the difference, either way.
	slices.Sort(tpot)
	t.Logf("TPOT × (tokens − 1), aimeter − server over %d: min %v, p50 %v, max %v", len(tpot), time.Duration(tpot[0]), time.Duration(tpot[len(tpot)/2]), time.Duration(tpot[len(tpot)-1]))
	if p50 := time.Duration(tpot[len(tpot)/2]); p50 < -clockP50 || p50 > clockP50 || tpot[0] < -int64(clockMaxLate+clockMaxEarly) || tpot[len(tpot)-1] > int64(clockMaxLate+clockMaxEarly) {
		t.Errorf("(aimeter's TPOT − the server's) × (tokens − 1): median %v, range [%v, %v]; want the median within ±%v, all within ±%v",
			p50, time.Duration(tpot[0]), time.Duration(tpot[len(tpot)-1]), clockP50, clockMaxLate+clockMaxEarly)
	}
	// The run must have queued in the client, or it cannot tell the
	// scheduled time from the send: a TTFT measured from the send would be
	// short by at least 3 × clockP50 for more than half the requests, and
	// fail the median's bound.
	if queued <= len(client)/2 {
		t.Errorf("only %d of %d requests reached the server more than %v after their scheduled time; the test needs the client to queue", queued, len(client), 3*clockP50)
	}
}

// TestSweepSystemTPSAgainstServer runs a sweep of three fixed-concurrency
// points against the simulator and checks each point's system_tps against
// the server's own count of the tokens it sent during the point's pass
// (from its start_unix_ns to its end): the sum of the send log's tokens
// over that window. Every token of a point's requests is sent after the
// pass started (after the client issued the request) and before the
// client read the end of its stream (before the pass ended), and the
// points run one after another, so the counts are equal exactly; a window
// in the wrong place or of the wrong length misses tokens or takes another
// point's. The elapsed time is checked too: the pass covers the server's
// busy span (first arrival to last event) and is at most clockMaxLate
// longer, so that system_tps is at most the server's own rate over its busy
// span and at least about 80 % of it (250 ms over a pass of a little more
// than the 1 s minimum duration; a few ms on an idle machine).
func TestSweepSystemTPSAgainstServer(t *testing.T) {
	url, sim := simulator(t, "10ms", "5ms", 0)
	dir := filepath.Join(t.TempDir(), "sweep")
	base := openAIPlan(url, 16)
	base.Settings.Set = []string{"min_duration=1000", "min_query_count=8"}
	sum, err := benchmark.RunSweep(context.Background(), benchmark.SweepPlan{
		Base: base, Dir: dir, Name: "sim", Points: []uint64{1, 2, 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	sends := sim.SendTimes()
	var total, inWindows int64
	for _, s := range sends {
		total += int64(s.Tokens)
	}
	if len(sum.Points) != 3 {
		t.Fatalf("%d points, want 3", len(sum.Points))
	}
	for _, p := range sum.Points {
		_, pass := clientRequests(t, filepath.Join(dir, p.Dir))
		from, to := pass.StartUnixNs, pass.StartUnixNs+pass.EndNs
		var tokens int64
		first, last := int64(-1), int64(0)
		for _, s := range sends {
			if s.UnixNano < from || s.UnixNano > to {
				continue
			}
			tokens += int64(s.Tokens)
			if s.ArrivalUnixNano != 0 && (first < 0 || s.ArrivalUnixNano < first) {
				first = s.ArrivalUnixNano
			}
			last = max(last, s.UnixNano)
		}
		inWindows += tokens
		serverTPS := float64(tokens) / p.ElapsedS
		t.Logf("concurrency %d: system_tps %.1f, the server's tokens over the same window %d (%.1f/s), its busy span %v of the pass's %v",
			p.Concurrency, p.SystemTPS, tokens, serverTPS, time.Duration(last-first), time.Duration(pass.EndNs))
		if tokens != p.OutputTokens || p.SystemTPS != serverTPS {
			t.Errorf("concurrency %d: %d output tokens (system_tps %v); the server sent %d in the pass's window (%v/s)", p.Concurrency, p.OutputTokens, p.SystemTPS, tokens, serverTPS)
		}
		if span := last - first; first < from || span > pass.EndNs || pass.EndNs-span > int64(clockMaxLate) {
			t.Errorf("concurrency %d: the pass lasted %v from %d; the server was busy %v from %d: want the pass to cover it, at most %v longer",
				p.Concurrency, time.Duration(pass.EndNs), from, time.Duration(span), first, clockMaxLate)
		}
	}
	if inWindows != total {
		t.Errorf("the server sent %d tokens, %d of them within the points' windows", total, inWindows)
	}
}
