package serve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// capacityEnv carries the server address to the client process of
// TestOpenAICapacity.
const capacityEnv = "AIMETER_SERVE_CAPACITY_ADDR"

// TestOpenAICapacity holds 10,000 concurrent streams against one simulator
// in this process and reports the memory per stream: the Go heap and
// stacks in use with every stream open, less before, divided by the
// streams (2,000 streams under the race detector, whose figure is not the
// one to report). The clients run in a child process (this test binary again, as
// TestOpenAICapacityClient), so that the figure is the server's alone and
// each process needs only 10,000 file descriptors.
func TestOpenAICapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 streams: not in -short")
	}
	var streams int64 = 10_000
	if raceEnabled {
		// The race detector allows 8,128 live goroutines and inflates
		// memory: hold fewer streams, to check the mechanism only.
		streams = 2_000
	}
	raiseFDLimit(t, uint64(streams)+500)

	s, err := NewOpenAI(OpenAIOptions{
		TPOT:        Dist{Kind: DistConst, A: float64(2 * time.Second), Duration: true},
		SendLogSize: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	defer s.Close()

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestOpenAICapacityClient$", "-test.v")
	cmd.Env = append(os.Environ(), capacityEnv+"="+hs.Listener.Addr().String(), fmt.Sprintf("AIMETER_SERVE_CAPACITY_N=%d", streams))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close() // the client closes its connections and exits
		if err := cmd.Wait(); err != nil {
			t.Errorf("client process: %v\n%s", err, stderr.String())
		}
	}()
	sc := bufio.NewScanner(stdout)
	ready := false
	var out strings.Builder
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if sc.Text() == "READY" {
			ready = true
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	if !ready {
		t.Fatalf("the client process did not get its streams open:\n%s%s", out.String(), stderr.String())
	}
	// Every stream has sent its first token when the counters say so.
	st := waitStats(s, func(st OpenAIStats) bool { return st.Streams >= streams && st.OutputTokens >= streams })
	if st.Streams != streams || st.OutputTokens < streams {
		t.Fatalf("after %v: %v", time.Since(start), st)
	}
	opened := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	g1 := runtime.NumGoroutine()
	inuse := func(m *runtime.MemStats) int64 { return int64(m.HeapInuse + m.StackInuse) }
	per := float64(inuse(&after)-inuse(&before)) / float64(streams)
	t.Logf("%d streams held (opened in %v): %.1f KiB per stream (heap+stacks in use, %d → %d MiB), %.2f goroutines per stream",
		streams, opened.Round(time.Millisecond), per/1024, inuse(&before)>>20, inuse(&after)>>20, float64(g1-g0)/float64(streams))
	if int64(g1-g0) < streams {
		t.Errorf("%d goroutines for %d streams: not every stream is in its handler", g1-g0, streams)
	}
}

// TestOpenAICapacityClient is the client process of TestOpenAICapacity:
// it opens the streams, prints READY and holds them until its standard
// input closes. Run on its own, it skips.
func TestOpenAICapacityClient(t *testing.T) {
	addr := os.Getenv(capacityEnv)
	if addr == "" {
		t.Skip("the client half of TestOpenAICapacity")
	}
	streams, err := strconv.Atoi(os.Getenv("AIMETER_SERVE_CAPACITY_N"))
	if err != nil {
		t.Fatal(err)
	}
	raiseFDLimit(t, uint64(streams)+100)
	body := `{"prompt":"hold","max_tokens":1000,"ignore_eos":true,"stream":true}`
	req := []byte(fmt.Sprintf("POST /v1/completions HTTP/1.1\r\nHost: sim\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	conns := make([]net.Conn, streams)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	const dialers = 16
	for d := range dialers {
		wg.Go(func() {
			for i := d; i < streams; i += dialers {
				var c net.Conn
				var err error
				for range 50 { // the accept queue may overflow briefly
					if c, err = net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				if err == nil {
					_, err = c.Write(req)
				}
				if err != nil {
					select {
					case errs <- fmt.Errorf("stream %d: %w", i, err):
					default:
					}
					return
				}
				conns[i] = c
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	// Spot-check that a stream is live: headers, then the first token.
	c := conns[streams/2]
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: {") {
		t.Fatalf("first line of a held stream: %q, %v", line, err)
	}
	fmt.Println("READY")
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Error("the parent never closed standard input")
	}
}

// raiseFDLimit raises the soft file-descriptor limit to n, or skips.
func raiseFDLimit(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot read the file-descriptor limit: %v", err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		t.Skipf("the file-descriptor limit is %d (hard %d); the test needs %d", lim.Cur, lim.Max, n)
	}
	old := lim
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot raise the file-descriptor limit to %d: %v", n, err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}

// nopBody is a request body that can be rewound.
type nopBody struct{ bytes.Reader }

func (*nopBody) Close() error { return nil }

// discardRW is a ResponseWriter and Flusher that drops the body, so that a
// benchmark measures the handler alone.
type discardRW struct {
	h http.Header
	n int
}

func (d *discardRW) Header() http.Header         { return d.h }
func (d *discardRW) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }
func (d *discardRW) WriteHeader(int)             {}
func (d *discardRW) Flush()                      {}

// BenchmarkServeStream measures the roofline handler (no delays) per
// streamed request: allocs/op is the same for 16 and 256 tokens, since no
// token allocates.
func BenchmarkServeStream(b *testing.B) {
	for _, tokens := range []int{16, 256} {
		for _, chat := range []bool{false, true} {
			name := fmt.Sprintf("tokens=%d/chat=%v", tokens, chat)
			b.Run(name, func(b *testing.B) {
				s, err := NewOpenAI(OpenAIOptions{SendLogSize: -1})
				if err != nil {
					b.Fatal(err)
				}
				path, payload := "/v1/completions", fmt.Sprintf(`{"model":"sim","prompt":"a b c d e f g h","max_tokens":%d,"stream":true,"stream_options":{"include_usage":true}}`, tokens)
				if chat {
					path, payload = "/v1/chat/completions", fmt.Sprintf(`{"model":"sim","messages":[{"role":"user","content":"a b c d e f g h"}],"max_tokens":%d,"stream":true,"stream_options":{"include_usage":true}}`, tokens)
				}
				req := httptest.NewRequest("POST", path, nil)
				body := &nopBody{}
				req.Body = body
				w := &discardRW{h: http.Header{}}
				b.ReportAllocs()
				for b.Loop() {
					body.Reset([]byte(payload))
					clear(w.h)
					s.ServeHTTP(w, req)
				}
				b.ReportMetric(float64(w.n)/float64(b.N), "B/resp")
				if st := s.Stats(); st.Completed != int64(b.N) {
					b.Fatalf("%v", st)
				}
			})
		}
	}
}

// BenchmarkSendSkew streams over loopback, one stream at a time, and
// reports the client's arrival time of each event less the server's send
// time (its send-time log), at p50 and p99 in µs.
func BenchmarkSendSkew(b *testing.B) {
	s, err := NewOpenAI(OpenAIOptions{
		TPOT: Dist{Kind: DistConst, A: float64(time.Millisecond), Duration: true},
	})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	c := hs.Client()
	var skews []int64
	var n int64
	for b.Loop() {
		resp, err := c.Post(hs.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"x","max_tokens":100,"ignore_eos":true,"stream":true}`))
		if err != nil {
			b.Fatal(err)
		}
		events, err := readSSE(resp.Body)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		n++
		waitStats(s, func(st OpenAIStats) bool { return st.Completed == n }) // the last send time is logged
		sends := s.SendTimes()
		sends = sends[len(sends)-len(events):]
		for i := range events {
			skews = append(skews, events[i].at-sends[i].UnixNano)
		}
	}
	p50, p99 := quantiles(skews)
	b.ReportMetric(float64(p50)/1e3, "p50-µs")
	b.ReportMetric(float64(p99)/1e3, "p99-µs")
}

// BenchmarkServeLoopback compares the simulator, non-streaming and with
// no delays, with a bare net/http handler that reads the body and writes a
// fixed answer of similar size, both driven by the same net/http client
// over loopback (client and server share the machine: compare the two
// ns/op side by side, not with other runs).
func BenchmarkServeLoopback(b *testing.B) {
	const payload = `{"model":"sim","prompt":"a b c d e f g h","max_tokens":16}`
	sim, err := NewOpenAI(OpenAIOptions{SendLogSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	rec := httptest.NewRecorder()
	sim.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/completions", strings.NewReader(payload)))
	fixed := rec.Body.Bytes()
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(fixed)
	})
	for _, h := range []struct {
		name string
		h    http.Handler
	}{{"bare", bare}, {"sim", sim}} {
		b.Run(h.name, func(b *testing.B) {
			hs := httptest.NewServer(h.h)
			defer hs.Close()
			tr := &http.Transport{MaxIdleConnsPerHost: 64}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := c.Post(hs.URL+"/v1/completions", "application/json", strings.NewReader(payload))
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
				}
			})
		})
	}
}

// BenchmarkServeWhole measures the roofline handler (no delays) per
// non-streaming request.
func BenchmarkServeWhole(b *testing.B) {
	s, err := NewOpenAI(OpenAIOptions{SendLogSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	const payload = `{"model":"sim","prompt":"a b c d e f g h","max_tokens":16}`
	req := httptest.NewRequest("POST", "/v1/completions", nil)
	body := &nopBody{}
	req.Body = body
	w := &discardRW{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		body.Reset([]byte(payload))
		clear(w.h)
		s.ServeHTTP(w, req)
	}
	if st := s.Stats(); st.Completed != int64(b.N) {
		b.Fatalf("%v", st)
	}
}
