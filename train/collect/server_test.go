package collect

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"aimeter/train"
)

func post(t *testing.T, url, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestValidation posts bad batches over a real socket: each gets a 4xx
// whose message names the field.
func TestValidation(t *testing.T) {
	srv := httptest.NewServer(NewServer(Options{MaxBody: 4096}))
	defer srv.Close()
	ok := `{"kind":"epoch_start","node":"n0","rank":1,"mono_ns":5}`
	cases := []struct {
		name, path, body string
		code             int
		want             string
	}{
		{"valid array", "/v1/events", "[" + ok + "]", 200, `"stored":1`},
		{"valid JSON lines", "/v1/events", ok + "\n" + ok + "\n", 200, `"stored":2`},
		{"empty body stores nothing", "/v1/events", "", 200, `"stored":0`},
		{"unknown kind", "/v1/events", `[{"kind":"nap","node":"n0","rank":1,"mono_ns":5}]`, 400, `field \"kind\"`},
		{"missing node", "/v1/events", `[{"kind":"epoch_start","rank":1,"mono_ns":5}]`, 400, `field \"node\"`},
		{"negative rank", "/v1/events", `[{"kind":"epoch_start","node":"n0","rank":-1,"mono_ns":5}]`, 400, `field \"rank\"`},
		{"no time at all", "/v1/events", `[{"kind":"epoch_start","node":"n0","rank":1}]`, 400, `mono_ns`},
		{"two ranks in one batch", "/v1/events", "[" + ok + `,{"kind":"epoch_end","node":"n0","rank":2,"mono_ns":6}]`, 400, `event 1: field \"rank\"`},
		{"misspelt field", "/v1/events", `[{"kind":"epoch_start","node":"n0","rank":1,"mono":5}]`, 400, `unknown field`},
		{"wrong type", "/v1/events", `[{"kind":"epoch_start","node":"n0","rank":"one","mono_ns":5}]`, 400, `rank`},
		{"trailing garbage", "/v1/events", "[" + ok + "] x", 400, `after the array`},
		{"body too large", "/v1/events", "[" + strings.Repeat(ok+",", 100) + ok + "]", 413, `body over 4096`},
		{"clock without node", "/v1/clock", `{"rank":0,"t0":1}`, 400, `field \"node\"`},
		{"offset with negative rtt", "/v1/offset", `{"rank":0,"node":"n","offset_ns":1,"rtt_ns":-5}`, 400, `field \"rtt_ns\"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := post(t, srv.URL+c.path, c.body, nil)
			if code != c.code || !strings.Contains(body, c.want) {
				t.Errorf("got %d %s, want %d ~%s", code, body, c.code, c.want)
			}
		})
	}
	code, _ := post(t, srv.URL+"/v1/events", "["+ok+"]", map[string]string{SeqHeader: "x1"})
	if code != 400 {
		t.Errorf("bad sequence header: %d", code)
	}
}

// TestIdempotent checks that a batch repeated under the same sequence
// number is acknowledged once and stored once.
func TestIdempotent(t *testing.T) {
	s := NewServer(Options{})
	srv := httptest.NewServer(s)
	defer srv.Close()
	b := `[{"kind":"epoch_start","node":"n0","rank":3,"mono_ns":5},{"kind":"epoch_end","node":"n0","rank":3,"mono_ns":9}]`
	for range 3 {
		if code, body := post(t, srv.URL+"/v1/events", b, map[string]string{SeqHeader: "7"}); code != 200 {
			t.Fatal(code, body)
		}
	}
	post(t, srv.URL+"/v1/events", b, map[string]string{SeqHeader: "8"})
	st := s.Status()
	if st.Events != 4 || st.Duplicates != 2 || st.Batches != 2 || len(st.Ranks) != 1 || st.Ranks[0].Duplicates != 2 {
		t.Errorf("status %+v", st)
	}
}

// TestStoreFull checks the bound: a batch past MaxEvents is refused with
// 507 and counted, and the client reports it.
func TestStoreFull(t *testing.T) {
	s := NewServer(Options{MaxEvents: 3})
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, _ := NewClient(ClientOptions{URL: srv.URL, Node: "n", BatchSize: 2})
	ctx := context.Background()
	for i := range 4 {
		err := c.Add(ctx, train.Event{Kind: train.Power})
		if (i == 3) != (err != nil) {
			t.Errorf("add %d: %v", i, err)
		}
	}
	if st := s.Status(); st.Events != 2 || st.Refused != 2 || c.Sent() != 2 {
		t.Errorf("status %+v sent %d", st, c.Sent())
	}
}

// TestRetryDedup cuts the connection of the first post after the
// collector has stored the batch: the client's retry carries the same
// sequence number, so the events are counted once.
func TestRetryDedup(t *testing.T) {
	s := NewServer(Options{})
	var mu sync.Mutex
	first := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cut := first && r.URL.Path == "/v1/events"
		first = first && !cut
		mu.Unlock()
		if cut {
			s.ServeHTTP(httptest.NewRecorder(), r) // stored
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close() // the rank never hears back
			}
			return
		}
		s.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c, _ := NewClient(ClientOptions{URL: srv.URL, Node: "n", Rank: 2, Backoff: time.Millisecond})
	ctx := context.Background()
	for range 5 {
		c.Add(ctx, train.Event{Kind: train.EpochStart})
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); st.Events != 5 || st.Duplicates != 1 || c.Sent() != 5 {
		t.Errorf("status %+v sent %d", st, c.Sent())
	}
}

// TestSkewedRanks runs two ranks concurrently over loopback whose clocks
// are skewed by +7 s and -3 s against the collector (injected through the
// client's clock): the collector recovers each offset within the round
// trip bound, and events whose true times are further apart than the two
// ranks' uncertainties come out in their true order.
func TestSkewedRanks(t *testing.T) {
	s := NewServer(Options{})
	srv := httptest.NewServer(s)
	defer srv.Close()
	skews := []int64{7e9, -3e9}
	base := time.Now()
	truth := func() int64 { return int64(time.Since(base)) }
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		real = map[string]int64{} // event ID -> true time
		offs = make([]Offset, 2)
		errs = make(chan error, 2)
	)
	for rank := range 2 {
		wg.Go(func() {
			c, err := NewClient(ClientOptions{URL: srv.URL, Node: fmt.Sprint("node", rank), Rank: rank, BatchSize: 8,
				Clock: func() int64 { return truth() + skews[rank] }})
			if err != nil {
				errs <- err
				return
			}
			ctx := context.Background()
			if offs[rank], err = c.Sync(ctx, 10); err != nil {
				errs <- err
				return
			}
			for i := range 20 {
				id := fmt.Sprintf("r%d-%d", rank, i)
				mono := c.Now()
				mu.Lock()
				real[id] = mono - skews[rank]
				mu.Unlock()
				if err := c.Add(ctx, train.Event{Kind: train.EpochStart, Mono: mono, Epoch: i + 1, ID: id}); err != nil {
					errs <- err
					return
				}
				time.Sleep(3 * time.Millisecond)
			}
			errs <- c.Flush(ctx)
		})
	}
	wg.Wait()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st := s.Status()
	if len(st.Ranks) != 2 {
		t.Fatalf("ranks %+v", st.Ranks)
	}
	// The collector's clock is time since NewServer, which began before
	// base: true offset = -(skew) - (base - start).
	lead := int64(base.Sub(s.start))
	for _, r := range st.Ranks {
		want := -skews[r.Rank] + lead
		if d := r.OffsetNS - want; d < -r.UncertaintyNS || d > r.UncertaintyNS || !r.HasOffset {
			t.Errorf("rank %d: offset %d, true %d, uncertainty %d", r.Rank, r.OffsetNS, want, r.UncertaintyNS)
		}
		t.Logf("rank %d: offset error %v, uncertainty %v", r.Rank, time.Duration(r.OffsetNS-want), time.Duration(r.UncertaintyNS))
	}
	evs := s.Events()
	if len(evs) != 40 {
		t.Fatalf("events %d", len(evs))
	}
	unc := st.Ranks[0].UncertaintyNS + st.Ranks[1].UncertaintyNS
	checked := 0
	for i := range evs {
		for j := i + 1; j < len(evs); j++ {
			ti, tj := real[evs[i].ID], real[evs[j].ID]
			if ti-tj > unc {
				t.Errorf("%s (true %d) placed before %s (true %d)", evs[i].ID, ti, evs[j].ID, tj)
			}
			checked++
		}
		// Time on the collector's clock is the true time plus the lead.
		if d := evs[i].Time - (real[evs[i].ID] + lead); d < -unc || d > unc {
			t.Errorf("%s: time off by %v", evs[i].ID, time.Duration(d))
		}
	}
	if checked == 0 {
		t.Error("no pair checked")
	}
}

// TestLoad posts 10 000 events/s from 64 concurrent ranks over loopback
// for 3 s and checks that every acknowledged event is stored: count in,
// count out. The rate achieved and the process's CPU time are logged, not
// asserted (they depend on the machine).
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	const ranks, perSec, secs = 64, 10_000, 3
	s := NewServer(Options{})
	srv := httptest.NewServer(s)
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: ranks}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	var wg sync.WaitGroup
	sent := make([]int64, ranks)
	errs := make(chan error, ranks)
	// Each rank adds perSec/ranks events a second in batches of 16.
	per := perSec / ranks * secs
	for r := range ranks {
		wg.Go(func() {
			c, _ := NewClient(ClientOptions{URL: srv.URL, Node: fmt.Sprint("node", r/8), Rank: r, HTTP: hc, BatchSize: 16})
			ctx := context.Background()
			for i := range per {
				// Pace each batch against the wall clock, so that a slow
				// moment is caught up; sleeping per event would cost a
				// wake-up per event.
				if i%16 == 0 {
					due := start.Add(time.Duration(i) * time.Second * secs / time.Duration(per))
					if d := time.Until(due); d > 0 {
						time.Sleep(d)
					}
				}
				v := float64(i)
				if err := c.Add(ctx, train.Event{Kind: train.Utilization, Chip: r % 8, Value: &v}); err != nil {
					errs <- err
					return
				}
			}
			if err := c.Flush(ctx); err != nil {
				errs <- err
				return
			}
			sent[r] = c.Sent()
		})
	}
	wg.Wait()
	el := time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	var in int64
	for _, n := range sent {
		in += n
	}
	st := s.Status()
	if in != int64(ranks*per) || st.Events != in || int64(len(s.Events())) != in {
		t.Fatalf("sent %d (want %d), stored %d", in, ranks*per, st.Events)
	}
	cpu := time.Duration(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()) * time.Nanosecond
	t.Logf("%d events from %d ranks in %v: %.0f events/s; process CPU (collector and clients) %v = %.2f cores",
		in, ranks, el.Round(time.Millisecond), float64(in)/el.Seconds(), cpu.Round(time.Millisecond), cpu.Seconds()/el.Seconds())
}

// TestWallPlacement checks events without a monotonic reading, or from a
// rank without an offset: they are placed by their wall time against the
// collector's start, and a rank cannot change node.
func TestWallPlacement(t *testing.T) {
	s := NewServer(Options{})
	srv := httptest.NewServer(s)
	defer srv.Close()
	w := s.start.Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	body := `[{"kind":"power","node":"n1","rank":4,"wall":"` + w + `","value":350}]`
	if code, b := post(t, srv.URL+"/v1/events", body, nil); code != 200 {
		t.Fatal(code, b)
	}
	evs := s.Events()
	if len(evs) != 1 || evs[0].Time != 1500*int64(time.Millisecond) {
		t.Errorf("events %+v", evs)
	}
	body = `[{"kind":"power","node":"n2","rank":4,"mono_ns":1}]`
	if code, b := post(t, srv.URL+"/v1/events", body, nil); code != 409 || !strings.Contains(b, `field \"node\"`) {
		t.Errorf("rank changing node: %d %s", code, b)
	}
}
