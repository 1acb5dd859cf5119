package openai

import (
	"context"
	"encoding/binary"
	"net/http"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/loadgen"
	"aimeter/sut/netsut"
)

// streamTokens is the number of content events each answer of
// streamServer streams.
const streamTokens = 16

// streamServer is a null OpenAI streaming server: every POST is answered
// with streamTokens content events, the usage and [DONE], each flushed
// on its own, as `aimeter serve openai --ttft 0 --tpot 0` answers.
func streamServer(t testing.TB) string {
	events := make([]string, 0, streamTokens+2)
	for range streamTokens {
		events = append(events, delta(" tok"))
	}
	events = append(events, `data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":16}}`+"\n\n", "data: [DONE]\n\n")
	srv := server(t, nil, func(w http.ResponseWriter, _ *http.Request, _ request) {
		writeSSE(w, events...)
	})
	return srv.URL
}

// liveHeap returns the bytes of live heap objects after two collections
// (the second empties the sync.Pools' victim caches).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// concurrencyRun runs n requests at a fixed concurrency of 64 against the
// streaming endpoint at url, with token latencies, as `aimeter run --sut
// openai --concurrency 64 --stream` does, and returns the heap that its
// Result holds: the live heap after the run, with the Result alive, less
// the live heap before; and the bytes its token times take in loadgen's
// store (each sample's count, first time after its issue and gaps, as
// uvarints), reckoned from the times.
func concurrencyRun(t *testing.T, url string, n uint64) (heldBytes, tokenBytes int64) {
	ep := newEndpoint(t, Options{BaseURL: url, Stream: true, MaxTokens: streamTokens, MaxConns: 64})
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.SingleStream
	s.Mode = loadgen.PerformanceOnly
	s.Concurrency = 64
	s.MinDurationMs = 0
	s.MinQueryCount = n
	s.UseTokenLatencies = true
	sut := netsut.New(context.Background(), ep, netsut.Options{RequestTimeout: 30 * time.Second})
	defer sut.Close()
	before := liveHeap()
	res, err := loadgen.Run(context.Background(), sut, ep.opts.Prompts, s, &loadgen.Options{Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatalf("run of %d requests: %v", n, err)
	}
	after := liveHeap()
	var ok, toks uint64
	issued := make(map[uint64]int64)
	for rec := range res.Records() {
		if rec.Status == loadgen.StatusOK {
			ok++
		}
		issued[rec.SeqID] = rec.IssuedNs
	}
	var buf [binary.MaxVarintLen64]byte
	for seq, tt := range res.TokenTimes() {
		toks += uint64(len(tt))
		tokenBytes += int64(binary.PutUvarint(buf[:], uint64(len(tt))))
		prev := issued[seq]
		for _, at := range tt {
			tokenBytes += int64(binary.PutUvarint(buf[:], uint64(at-prev)))
			prev = at
		}
	}
	if ok < n || toks < ok*streamTokens {
		t.Fatalf("run of %d requests: %d ok, %d token times; want every request answered with %d tokens", n, ok, toks, streamTokens)
	}
	runtime.KeepAlive(res)
	return int64(after) - int64(before), tokenBytes
}

// TestRunMemoryPerRequest bounds the memory a network run keeps per
// request (issue 43: one host must hold an MLPerf-length run): the heap a
// live Result of 22,000 streamed requests holds beyond one of 2,000, per
// request, measured after collections, so the run's fixed costs (the
// endpoint, connections, the first pages) cancel and the figure does not
// depend on the machine's speed. Every figure the run reports (records,
// token times, per-sample wire sizes) stays in it. It was 212 bytes
// before token times were stored as gaps (loadgen's tokenStore), 105
// after that, the dropped per-query done column and 4-byte wire sizes;
// of those, token times take about 35 (they are held to the end of the
// run, where tokens.parquet is written from them a row group at a time:
// within issue 43's 200 bytes a request, at the end too, see
// TestEndOfRunMemoryPerRequest).
func TestRunMemoryPerRequest(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("runs 24,500 requests (and the race detector's shadow memory is not the run's)")
	}
	const small, large = 2_000, 22_000
	const bound = 150 // bytes a request (105 to 120 measured; 212 before)
	url := streamServer(t)
	_, _ = concurrencyRun(t, url, 500) // warm up: the server's and client's buffers
	a, ta := concurrencyRun(t, url, small)
	b, tb := concurrencyRun(t, url, large)
	per := float64(b-a) / (large - small)
	t.Logf("live heap held by the Result: %d B after %d requests, %d B after %d: %.1f B a request, of which token times %.1f",
		a, small, b, large, per, float64(tb-ta)/(large-small))
	if per > bound {
		t.Errorf("a run holds %.1f bytes of heap a request, more than %d", per, bound)
	}
}

// peakLive tracks the largest live heap any collection found (the
// /gc/heap/live metric after each cycle) until its stop function is
// called, which returns it. A finalizer re-armed each cycle reads it, so
// that a cycle is seen without a timer; run it with a low GOGC, so that
// the collections come often enough to catch a short-lived peak.
func peakLive() (stop func() uint64) {
	var peak atomic.Uint64
	var done atomic.Bool
	read := func() {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		for v := s[0].Value.Uint64(); ; {
			p := peak.Load()
			if v <= p || peak.CompareAndSwap(p, v) {
				return
			}
		}
	}
	var arm func()
	arm = func() {
		// Big enough not to be a tiny allocation, whose block another
		// object could keep alive.
		sentinel := new([64]byte)
		runtime.SetFinalizer(sentinel, func(*[64]byte) {
			read()
			if !done.Load() {
				arm()
			}
		})
	}
	arm()
	return func() uint64 {
		done.Store(true)
		read()
		return peak.Load()
	}
}

// tokenSUT answers samples as the streaming client does (16 token times,
// the wire sizes), without the network, which would take a minute for the
// requests TestEndOfRunMemoryPerRequest needs. It holds the samples it is
// given, in order, and answers the oldest 8 whenever it holds inFlight
// (the rest at FlushQueries, when the issuing ends), so that at a
// concurrency of inFlight between inFlight − 8 and inFlight requests are
// always in flight: SGLang's in-flight window (steady.InFlight, 80 % of
// the peak) is then most of the run, as for a network run at a steady
// concurrency.
type tokenSUT struct {
	inFlight int
	mu       sync.Mutex
	held     []loadgen.ResponseID
	r        *loadgen.Responder
}

func (*tokenSUT) Name() string { return "tokenSUT" }

func (s *tokenSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.r = r
	for _, q := range samples {
		s.held = append(s.held, q.ID)
	}
	if len(s.held) >= s.inFlight {
		s.answer(8)
	}
}

func (s *tokenSUT) FlushQueries() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer(len(s.held))
}

// answer answers the oldest n samples held.
func (s *tokenSUT) answer(n int) {
	for _, id := range s.held[:n] {
		tt := make([]int64, streamTokens)
		for k := range tt {
			tt[k] = s.r.Now()
		}
		s.r.Respond(loadgen.Response{ID: id, Tokens: streamTokens, TokenTimes: tt, RequestBytes: 300, ResponseBytes: 2100})
	}
	s.held = append(s.held[:0], s.held[n:]...)
}

// tokenQSL is a data set of 1024 samples.
type tokenQSL struct{}

func (tokenQSL) Name() string                   { return "tokenQSL" }
func (tokenQSL) TotalSampleCount() uint64       { return 1024 }
func (tokenQSL) PerformanceSampleCount() uint64 { return 1024 }
func (tokenQSL) LoadSamples([]uint64) error     { return nil }
func (tokenQSL) UnloadSamples([]uint64) error   { return nil }

// endOfRun runs n requests of a tokenSUT at a fixed concurrency of 64 with
// token latencies, its records streamed to a bundle's records file as
// `aimeter run` streams them, then writes the bundle and its derived files
// (result.json with the steady-state windows, the report, tokens.parquet,
// samples.parquet, the MLPerf logs), all at once as `aimeter run` does,
// then its derived files again (derived.Set.Regenerate, from the live
// Result). It returns, each less the live heap before the run, the live
// heap after the run (the Result alive) and the largest any collection
// found while the bundle was written and while its derived files were
// written again.
func endOfRun(t *testing.T, n uint64) (run, write, regen int64) {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.SingleStream
	s.Mode = loadgen.PerformanceOnly
	s.Concurrency = 64
	s.MinDurationMs = 0
	s.MinQueryCount = n
	s.UseTokenLatencies = true
	sut := &tokenSUT{inFlight: int(s.Concurrency)}
	dir := t.TempDir()
	before := liveHeap()
	stream := bundle.NewRecordStream(dir)
	res, err := loadgen.Run(context.Background(), sut, tokenQSL{}, s, &loadgen.Options{Timeout: 5 * time.Minute, RecordColumns: stream.AddColumns})
	if err != nil {
		stream.Discard()
		t.Fatalf("run of %d requests: %v", n, err)
	}
	run = int64(liveHeap()) - int64(before)
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	stop := peakLive()
	if err := derived.Write(dir, &bundle.Bundle{Result: res, Records: stream, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	write = int64(stop()) - int64(before)
	liveHeap()
	stop = peakLive()
	set := derived.Of(&bundle.Bundle{Result: res, Version: "test"})
	if _, err := set.Regenerate(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	regen = int64(stop()) - int64(before)
	if st := set.Steady(); st == nil || !st.Windows[1].Found {
		t.Fatalf("run of %d requests: no in-flight steady-state window; the test measures its analysis", n)
	}
	runtime.KeepAlive(res)
	return run, write, regen
}

// TestEndOfRunMemoryPerRequest bounds the largest heap a streamed run with
// token times holds per request at its end, while its derived files are
// written (issue 43: one host must hold an MLPerf-length run, its end
// included): the steady-state analysis reads the reported pass where it
// lies (loadgen.Result.PassAccess) instead of a []loadgen.Record copy of
// it. As in TestRunMemoryPerRequest, the figures are differences of two
// runs per further request, after collections (here every 5 % of heap
// growth, to catch the peak), not times. Both runs are past a row group
// (65,536 records), so that the buffers of the raw files' writers (the
// records, tokens.parquet, samples.parquet: a few row groups each, about
// 30 MB in all, whatever the run's length) are full in both; but they come
// and go at different moments of each writing, which moves the peak of the
// whole bundle's by up to 100 bytes a request between these two runs. The
// bound is therefore on the derived files written again from the live
// Result (the analyses, which are what grows with the run), and the whole
// writing's figure is logged. With the analysis over a copy of the
// records (before loadgen.Result.PassAccess) the derived files took 252
// bytes a request at their peak, 133 above the run's 120, and the whole
// bundle's writing 215; over the view, 114 and 130 (the writing frees a
// few bytes a request that the run held).
func TestEndOfRunMemoryPerRequest(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("runs 355,000 requests (and the race detector's shadow memory is not the run's)")
	}
	const small, large = 100_000, 250_000
	const bound = 200  // bytes a request at the peak (issue 43's target)
	const extra = 60   // bytes a request the derived files add to the run's
	endOfRun(t, 5_000) // warm up
	runA, writeA, regenA := endOfRun(t, small)
	runB, writeB, regenB := endOfRun(t, large)
	per := func(a, b int64) float64 { return float64(b-a) / (large - small) }
	run, write, regen := per(runA, runB), per(writeA, writeB), per(regenA, regenB)
	t.Logf("live heap after the run: %d B after %d requests, %d after %d: %.1f B a request", runA, small, runB, large, run)
	t.Logf("at the peak while the bundle is written: %d, %d: %.1f B a request; while the derived files are written again: %d, %d: %.1f B a request",
		writeA, writeB, write, regenA, regenB, regen)
	if regen > bound {
		t.Errorf("a run and its derived files hold %.1f bytes of heap a request at the peak, more than %d", regen, bound)
	}
	if regen-run > extra {
		t.Errorf("writing a run's derived files adds %.1f bytes of heap a request to the run's %.1f, more than %d", regen-run, run, extra)
	}
}
