package loadgen

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"
)

// runResponding runs a small Offline test in which every sample ends with
// the Response that respond builds for it, sent with Respond.
func runResponding(t *testing.T, n uint64, tokenLatencies bool, respond func(r *Responder, s QuerySample) Response) *Result {
	t.Helper()
	s := DefaultSettings()
	s.Scenario = Offline
	s.MinDurationMs = 0
	s.MinQueryCount = n
	s.UseTokenLatencies = tokenLatencies
	sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
		for _, q := range samples {
			r.Respond(respond(r, q))
		}
	}}
	res, err := Run(context.Background(), sut, &testQSL{total: n, perf: n}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.RecordCount(); uint64(got) != n {
		t.Fatalf("%d records, want %d", got, n)
	}
	return res
}

func TestRespondFillsTheRecord(t *testing.T) {
	errHTTP := WithCategory("http", errors.New("503 Service Unavailable"))
	cases := []struct {
		name   string
		why    string
		resp   func(r *Responder, s QuerySample) Response
		check  func(rec Record) string
		errors []ErrorInfo
	}{
		{
			name: "plain", why: "a response with ID only is an ok record with every new field zero",
			resp: func(_ *Responder, s QuerySample) Response { return Response{ID: s.ID} },
			check: func(rec Record) string {
				if rec.Status != StatusOK || rec.RequestBytes != 0 || rec.ResponseBytes != 0 || rec.Node != 0 || rec.Error != 0 {
					return fmt.Sprintf("%+v", rec)
				}
				return ""
			},
		},
		{
			name: "bytes and node", why: "wire sizes and the serving node reach the record of their own sample",
			resp: func(_ *Responder, s QuerySample) Response {
				return Response{ID: s.ID, RequestBytes: int64(100 + s.Index), ResponseBytes: int64(7 * s.Index), Node: uint32(s.Index%3 + 1)}
			},
			check: func(rec Record) string {
				i := rec.SampleIndex
				if rec.RequestBytes != int64(100+i) || rec.ResponseBytes != int64(7*i) || rec.Node != uint32(i%3+1) {
					return fmt.Sprintf("sample %d: %+v", i, rec)
				}
				return ""
			},
		},
		{
			name: "some fail", why: "an Err fails the sample with status error and an index into a deduplicated error table",
			resp: func(_ *Responder, s QuerySample) Response {
				switch s.Index % 4 {
				case 1:
					return Response{ID: s.ID, Err: errHTTP}
				case 2:
					return Response{ID: s.ID, Err: fmt.Errorf("decode: %w", errors.New("bad json"))}
				}
				return Response{ID: s.ID}
			},
			check: func(rec Record) string {
				want := map[uint64]struct {
					st  Status
					idx uint32
				}{0: {StatusOK, 0}, 1: {StatusError, 1}, 2: {StatusError, 2}, 3: {StatusOK, 0}}[rec.SampleIndex%4]
				if rec.Status != want.st || rec.Error != want.idx {
					return fmt.Sprintf("sample %d: status %v error %d, want %v %d", rec.SampleIndex, rec.Status, rec.Error, want.st, want.idx)
				}
				return ""
			},
			errors: []ErrorInfo{
				{Category: "http", Message: "503 Service Unavailable", Examples: []string{"503 Service Unavailable"}, Count: 4},
				{Category: DefaultErrorCategory, Message: "decode: bad json", Examples: []string{"decode: bad json"}, Count: 4},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runResponding(t, 16, false, c.resp)
			for rec := range res.Records() {
				if msg := c.check(rec); msg != "" {
					t.Errorf("%s (%s)", msg, c.why)
				}
			}
			if !sameGroups(res.Errors, c.errors) {
				t.Errorf("Errors = %+v, want %+v (%s)", res.Errors, c.errors, c.why)
			}
			if want := c.errors != nil; want == res.Summary.Valid {
				t.Errorf("Valid = %v with errors %v (%s)", res.Summary.Valid, c.errors, c.why)
			}
			var failed uint64
			for _, e := range c.errors {
				failed += e.Count
			}
			if res.FailedSamples != failed {
				t.Errorf("FailedSamples = %d, want %d", res.FailedSamples, failed)
			}
		})
	}
}

func TestErrorOfResolvesTheIndex(t *testing.T) {
	res := runResponding(t, 4, false, func(_ *Responder, s QuerySample) Response {
		if s.Index == 2 {
			return Response{ID: s.ID, Err: WithCategory("grpc", errors.New("unavailable"))}
		}
		return Response{ID: s.ID}
	})
	for rec := range res.Records() {
		e, ok := res.ErrorOf(rec)
		if ok != (rec.SampleIndex == 2) || (ok && (e.Category != "grpc" || e.Message != "unavailable")) {
			t.Errorf("sample %d: ErrorOf = %+v, %v", rec.SampleIndex, e, ok)
		}
	}
	if _, ok := res.ErrorOf(Record{Error: 99}); ok {
		t.Error("ErrorOf accepted an index past the table")
	}
}

func TestFailWithNilErrorIsStillAFailure(t *testing.T) {
	s := DefaultSettings()
	s.Scenario = Offline
	s.MinDurationMs = 0
	s.MinQueryCount = 2
	sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
		for _, q := range samples {
			r.Fail(q.ID, nil)
		}
	}}
	res, err := Run(context.Background(), sut, &testQSL{total: 2, perf: 2}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 1 || res.Errors[0].Count != 2 || res.Errors[0].Category != DefaultErrorCategory {
		t.Errorf("Errors = %+v, want one %q entry counting 2", res.Errors, DefaultErrorCategory)
	}
	for rec := range res.Records() {
		if rec.Status != StatusError || rec.Error != 1 {
			t.Errorf("record %+v, want status error with error 1", rec)
		}
	}
}

// sameGroups compares error tables but for their times, which it only
// checks for order.
func sameGroups(got, want []ErrorInfo) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Category != w.Category || g.Code != w.Code || g.CodeName != w.CodeName || g.Message != w.Message ||
			!slices.Equal(g.Examples, w.Examples) || g.Count != w.Count || g.FirstNs > g.LastNs {
			return false
		}
	}
	return true
}

func TestErrorTableIsCapped(t *testing.T) {
	var tab errorTable
	for i := range MaxErrorKinds + 100 {
		tab.add(WithCode("c", i+1, "", fmt.Errorf("failure %d", i)), int64(i))
	}
	if idx := tab.add(WithCode("c", 6, "", errors.New("failure 5")), 0); idx != 6 {
		t.Errorf("a known group got index %d, want 6", idx)
	}
	if len(tab.list) != MaxErrorKinds {
		t.Fatalf("%d entries, want the cap %d", len(tab.list), MaxErrorKinds)
	}
	last := tab.list[MaxErrorKinds-1]
	if last.Category != OverflowErrorCategory || last.Count != 101 {
		t.Errorf("overflow entry %+v, want category %q counting 101", last, OverflowErrorCategory)
	}
	if idx := tab.add(WithCode("c", -1, "", errors.New("yet another")), 0); idx != MaxErrorKinds {
		t.Errorf("a new kind past the cap got index %d, want %d", idx, MaxErrorKinds)
	}
}

func TestErrorMessageIsCutOnARuneBoundary(t *testing.T) {
	cases := []struct {
		name, msg, why string
	}{
		{"short", "boom", "a short message is kept whole"},
		{"ascii", strings.Repeat("a", 2000), "a long message is cut"},
		{"runes", strings.Repeat("é", 1000), "a cut never splits a two-byte rune"},
		{"offset", "x" + strings.Repeat("错", 400), "a cut never splits a three-byte rune"},
	}
	for _, c := range cases {
		m := errorMessage(errors.New(c.msg))
		if !utf8.ValidString(m) || len(m) > maxErrorMessageLen+len("…") || !strings.HasPrefix(c.msg, strings.TrimSuffix(m, "…")) {
			t.Errorf("%s: got %d bytes, valid %v (%s)", c.name, len(m), utf8.ValidString(m), c.why)
		}
		if len(c.msg) <= maxErrorMessageLen && m != c.msg {
			t.Errorf("%s: %q changed to %q (%s)", c.name, c.msg, m, c.why)
		}
	}
}

func TestErrorCategoryFromTheChain(t *testing.T) {
	cases := []struct {
		err  error
		want string
		why  string
	}{
		{errors.New("x"), DefaultErrorCategory, "a plain error has the default category"},
		{WithCategory("http", errors.New("x")), "http", "CategoryError sets it"},
		{fmt.Errorf("send: %w", WithCategory("net", errors.New("x"))), "net", "a wrapped CategoryError is found"},
		{WithCategory("", errors.New("x")), DefaultErrorCategory, "an empty category falls back to the default"},
		{nil, DefaultErrorCategory, "Fail with a nil error still has a category"},
	}
	for _, c := range cases {
		if got := errorKeyOf(c.err).category; got != c.want {
			t.Errorf("errorKeyOf(%v) = %q, want %q (%s)", c.err, got, c.want, c.why)
		}
	}
	if WithCategory("http", nil) != nil {
		t.Error("WithCategory(nil) is not nil")
	}
}

func TestTokenTimesAreKeptPerSample(t *testing.T) {
	res := runResponding(t, 8, true, func(r *Responder, s QuerySample) Response {
		if s.Index%2 == 1 {
			return Response{ID: s.ID, Tokens: 1}
		}
		now := r.Now()
		buf := []int64{now - 30, now - 20, now - 10}
		resp := Response{ID: s.ID, Tokens: 3, TokenTimes: buf}
		return resp
	})
	bySeq := map[uint64]Record{}
	for rec := range res.Records() {
		bySeq[rec.SeqID] = rec
	}
	n := 0
	prev := uint64(0)
	for seq, times := range res.TokenTimes() {
		rec := bySeq[seq]
		if n > 0 && seq <= prev {
			t.Errorf("sequence ids out of order: %d after %d", seq, prev)
		}
		prev = seq
		n++
		if rec.SampleIndex%2 != 0 || len(times) != 3 || times[2]-times[0] != 20 {
			t.Errorf("sample %d: token times %v", rec.SampleIndex, times)
		}
	}
	if n != 4 {
		t.Errorf("%d samples with token times, want the 4 that reported them", n)
	}
	if !res.HasTokenTimes() {
		t.Error("HasTokenTimes is false")
	}
}

func TestTokenTimesSetTheFirstTokenOfAStream(t *testing.T) {
	synctest.Test(t, testTokenTimesSetTheFirstTokenOfAStream)
}

func testTokenTimesSetTheFirstTokenOfAStream(t *testing.T) {
	// Server, so that first-token times are kept (Offline has none).
	s := DefaultSettings()
	s.Scenario = Server
	s.ServerTargetQPS = 1000
	s.ServerTargetLatencyNs = 1e9
	s.MinDurationMs = 0
	s.MinQueryCount = 8
	s.UseTokenLatencies = true
	sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
		issued := r.Now()
		go func() {
			// Tokens at +0.5 ms and +2 ms; FirstToken, where called, at
			// +1 ms (fake clock: the times are exact).
			time.Sleep(time.Millisecond)
			for _, q := range samples {
				if q.Index%2 == 0 {
					r.FirstToken(q.ID, nil) // reported first: TokenTimes must not overrule it
				}
			}
			time.Sleep(time.Millisecond)
			for _, q := range samples {
				r.Respond(Response{ID: q.ID, Tokens: 2, TokenTimes: []int64{issued + 500_000, issued + 2_000_000}})
			}
		}()
	}}
	res, err := Run(context.Background(), sut, &testQSL{total: 8, perf: 8}, s, &Options{SpinWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	times := map[uint64][]int64{}
	for seq, tt := range res.TokenTimes() {
		times[seq] = tt
	}
	for rec := range res.Records() {
		tt := times[rec.SeqID]
		switch {
		case len(tt) != 2:
			t.Errorf("sample %d: token times %v", rec.SampleIndex, tt)
		case rec.SampleIndex%2 == 1 && rec.FirstTokenNs != tt[0]:
			t.Errorf("sample %d: first token %d, want the first token time %d", rec.SampleIndex, rec.FirstTokenNs, tt[0])
		case rec.SampleIndex%2 == 0 && rec.FirstTokenNs == tt[0]:
			t.Errorf("sample %d: TokenTimes overruled FirstToken", rec.SampleIndex)
		}
	}
}

func TestUnusedColumnsAreNeverAllocated(t *testing.T) {
	res := runResponding(t, 64, false, func(_ *Responder, s QuerySample) Response {
		return Response{ID: s.ID, Data: []byte{1}, Tokens: 1}
	})
	if len(res.passes) == 0 {
		t.Fatal("no live passes")
	}
	for _, pr := range res.passes {
		p := pr.p
		if p.reqBytes.used() || p.respBytes.used() || p.node.used() || p.errIdx.used() || p.tokRef.used() || len(p.toks.blocks) > 0 || p.stages.used() {
			t.Errorf("pass %s allocated a column no response used", pr.info.Kind)
		}
	}
	res = runResponding(t, 64, false, func(_ *Responder, s QuerySample) Response {
		return Response{ID: s.ID, Node: 2}
	})
	p := res.passes[len(res.passes)-1].p
	if !p.node.used() || p.reqBytes.used() {
		t.Error("reporting Node alone should allocate the node column and only it")
	}
}

func TestRespondBatchSharesOneTimestamp(t *testing.T) {
	s := DefaultSettings()
	s.Scenario = Offline
	s.MinDurationMs = 0
	s.MinQueryCount = 32
	sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
		batch := make([]Response, len(samples))
		for i, q := range samples {
			batch[i] = Response{ID: q.ID, RequestBytes: 10}
			if i == 0 {
				batch[i].Err = errors.New("first one failed")
			}
		}
		r.RespondBatch(batch)
	}}
	res, err := Run(context.Background(), sut, &testQSL{total: 32, perf: 32}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs := records(res)
	for _, rec := range recs {
		if rec.CompletedNs != recs[0].CompletedNs || rec.RequestBytes != 10 {
			t.Errorf("record %+v: want completion at %d and 10 request bytes", rec, recs[0].CompletedNs)
		}
	}
	if res.FailedSamples != 1 || len(res.Errors) != 1 {
		t.Errorf("FailedSamples %d, Errors %+v: want the one failure", res.FailedSamples, res.Errors)
	}
}

func TestAttachedRecordsKeepTheNewFields(t *testing.T) {
	var want4 []int64
	res := runResponding(t, 8, false, func(r *Responder, s QuerySample) Response {
		resp := Response{ID: s.ID, RequestBytes: 5, ResponseBytes: int64(s.Index), Node: 1}
		if s.Index == 3 {
			resp.Err = errors.New("nope")
		}
		if s.Index == 4 {
			now := r.Now()
			resp.TokenTimes = []int64{now, now, now}
			want4 = resp.TokenTimes
		}
		return resp
	})
	recs := records(res)
	var traces []TokenTrace
	for seq, tt := range res.TokenTimes() {
		traces = append(traces, TokenTrace{SeqID: seq, TimesNs: tt})
	}
	stored := &Result{Passes: res.Passes, Errors: res.Errors}
	stored.AttachRecords(recs)
	stored.AttachTokenTimes(traces)
	if got := records(stored); !slices.Equal(got, recs) {
		t.Errorf("stored records differ:\n%+v\n%+v", got, recs)
	}
	for rec := range stored.Records() {
		_, failed := stored.ErrorOf(rec)
		if failed != (rec.SampleIndex == 3) {
			t.Errorf("sample %d: ErrorOf failed = %v", rec.SampleIndex, failed)
		}
	}
	n := 0
	for seq, tt := range stored.TokenTimes() {
		n++
		if seq != traces[0].SeqID || !slices.Equal(tt, want4) {
			t.Errorf("stored token times %d %v", seq, tt)
		}
	}
	if n != 1 {
		t.Errorf("%d stored token traces, want 1", n)
	}
}

// TestErrorTableGroupsByCategoryAndCode: failures group by category and
// code whatever their messages; a group keeps up to three distinct
// examples, the first and last time, and the code and its name.
func TestErrorTableGroupsByCategoryAndCode(t *testing.T) {
	var tab errorTable
	adds := []struct {
		err  error
		at   int64
		want uint16
	}{
		{WithCategory("connection_reset", errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: reset")), 50, 1},
		{WithCode("http_5xx", 501, "", errors.New("HTTP 501: a")), 60, 2},
		{WithCategory("connection_reset", errors.New("read tcp 127.0.0.1:3->127.0.0.1:2: reset")), 40, 1},
		{WithCode("http_5xx", 503, "", errors.New("HTTP 503")), 70, 3},
		{fmt.Errorf("wrapped: %w", WithCode("http_5xx", 501, "", errors.New("HTTP 501: b"))), 80, 2},
		{WithCode("http_5xx", 501, "", errors.New("HTTP 501: c")), 90, 2},
		{WithCode("http_5xx", 501, "", errors.New("HTTP 501: d")), 100, 2},
		{WithCode("http_5xx", 501, "", errors.New("HTTP 501: a")), 110, 2},
		{WithCode("grpc", 14, "Unavailable", errors.New("gRPC Unavailable")), 120, 4},
		{errors.Join(errors.New("x"), WithCode("grpc", 14, "Unavailable", errors.New("joined"))), 130, 4},
	}
	for i, a := range adds {
		if got := tab.add(a.err, a.at); got != a.want {
			t.Errorf("add %d: group %d, want %d", i, got, a.want)
		}
	}
	want := []ErrorInfo{
		{Category: "connection_reset", Message: "read tcp 127.0.0.1:1->127.0.0.1:2: reset",
			Examples: []string{"read tcp 127.0.0.1:1->127.0.0.1:2: reset", "read tcp 127.0.0.1:3->127.0.0.1:2: reset"}, Count: 2, FirstNs: 40, LastNs: 50},
		{Category: "http_5xx", Code: 501, Message: "HTTP 501: a", Examples: []string{"HTTP 501: a", "wrapped: HTTP 501: b", "HTTP 501: c"}, Count: 5, FirstNs: 60, LastNs: 110},
		{Category: "http_5xx", Code: 503, Message: "HTTP 503", Examples: []string{"HTTP 503"}, Count: 1, FirstNs: 70, LastNs: 70},
		{Category: "grpc", Code: 14, CodeName: "Unavailable", Message: "gRPC Unavailable", Examples: []string{"gRPC Unavailable", "x\njoined"}, Count: 2, FirstNs: 120, LastNs: 130},
	}
	if !reflect.DeepEqual(tab.list, want) {
		t.Errorf("table\n%+v\nwant\n%+v", tab.list, want)
	}
	for i, l := range []string{"connection_reset", "http_5xx/501", "http_5xx/503", "grpc/Unavailable"} {
		if got := tab.list[i].Label(); got != l {
			t.Errorf("Label %d = %q, want %q", i, got, l)
		}
	}
}

// TestErrorTableRepeatDoesNotAllocate: counting one more failure of a
// known group allocates nothing, even before its examples are complete.
func TestErrorTableRepeatDoesNotAllocate(t *testing.T) {
	var tab errorTable
	err := fmt.Errorf("POST x: %w", WithCode("http_5xx", 503, "", errors.New("HTTP 503")))
	tab.add(err, 1)
	if n := testing.AllocsPerRun(1000, func() { tab.add(err, 2) }); n != 0 {
		t.Errorf("%v allocations per repeated failure, want 0", n)
	}
	if tab.list[0].Count != 1002 { // AllocsPerRun runs the function once more to warm up
		t.Errorf("count %d", tab.list[0].Count)
	}
}

// TestErrorInfoMessagesOfAnOldTable: a table entry without examples (an
// errors.json written before groups) gives its message as the example.
func TestErrorInfoMessagesOfAnOldTable(t *testing.T) {
	if got := (ErrorInfo{Category: "http", Message: "HTTP 500"}).Messages(); !slices.Equal(got, []string{"HTTP 500"}) {
		t.Errorf("Messages = %q", got)
	}
}

// TestProgressCountsFailures: the last progress snapshot of a pass counts
// its failed samples.
func TestProgressCountsFailures(t *testing.T) {
	s := DefaultSettings()
	s.Scenario = Offline
	s.MinDurationMs = 0
	s.MinQueryCount = 6
	sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
		for i, q := range samples {
			if i%3 == 0 {
				r.Fail(q.ID, errors.New("x"))
			} else {
				r.Complete(q.ID, nil, 0)
			}
		}
	}}
	var last Progress
	var mu sync.Mutex
	res, err := Run(context.Background(), sut, &testQSL{total: 6, perf: 6}, s, &Options{Progress: func(p Progress) { mu.Lock(); last = p; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !last.Done || last.Failed != int64(res.FailedSamples) || last.Failed == 0 || last.Completed != last.Issued {
		t.Errorf("last progress %+v, %d failed samples", last, res.FailedSamples)
	}
}

func TestFirstTokenAtKeepsTheSUTsTime(t *testing.T) {
	synctest.Test(t, testFirstTokenAtKeepsTheSUTsTime)
}

// testFirstTokenAtKeepsTheSUTsTime: FirstTokenAt records the time the SUT
// took, not the time of the call; a time before the sample's issue or
// after the call is refused and counted as a protocol error.
func testFirstTokenAtKeepsTheSUTsTime(t *testing.T) {
	s := DefaultSettings()
	s.Scenario = Server
	s.ServerTargetQPS = 1000
	s.ServerTargetLatencyNs = 1e9
	s.MinDurationMs = 0
	s.MinQueryCount = 6
	s.UseTokenLatencies = true
	type want struct {
		at int64 // the first token time, NoTime for none
		ok bool  // the call was accepted
	}
	wants := map[uint64]want{} // by sample index
	var mu sync.Mutex
	sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
		issued := r.Now()
		go func() {
			// The token arrived at +1 ms; it is reported at +3 ms, after
			// decoding (fake clock: the times are exact).
			time.Sleep(3 * time.Millisecond)
			for _, q := range samples {
				var at int64
				switch q.Index % 3 {
				case 0:
					at = issued + 1_000_000 // accepted: the arrival, not the call
				case 1:
					at = issued - 1 // before the issue
				default:
					at = r.Now() + 1 // in the future
				}
				r.FirstTokenAt(q.ID, at, nil)
				mu.Lock()
				if q.Index%3 == 0 {
					wants[q.Index] = want{at, true}
				} else {
					wants[q.Index] = want{NoTime, false}
				}
				mu.Unlock()
			}
			time.Sleep(time.Millisecond)
			for _, q := range samples {
				r.Respond(Response{ID: q.ID, Tokens: 2})
			}
		}()
	}}
	res, err := Run(context.Background(), sut, &testQSL{total: 6, perf: 6}, s, &Options{SpinWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for rec := range res.Records() {
		w := wants[rec.SampleIndex]
		if !w.ok {
			refused++
		}
		if rec.FirstTokenNs != w.at {
			t.Errorf("sample %d: first token %d, want %d", rec.SampleIndex, rec.FirstTokenNs, w.at)
		}
	}
	if refused == 0 || res.Summary.Result.ProtocolErrors != uint64(refused) {
		t.Errorf("%d protocol errors for %d refused first-token times", res.Summary.Result.ProtocolErrors, refused)
	}
}
