package openai

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"aimeter/loadgen"
)

// The benchmarks send to a minimal server in a child process (this test
// binary, started with benchServerEnv set), so that the process's CPU
// time (getrusage) is the client's alone.
const benchServerEnv = "AIMETER_OPENAI_BENCH_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(benchServerEnv) == "1" {
		serveBench()
		return
	}
	os.Exit(m.Run())
}

// benchChunks is the number of content chunks of a streamed response.
const benchChunks = 64

// serveBench serves /v1/chat/completions on a loopback port it prints,
// until its standard input closes.
func serveBench() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error", err)
		return
	}
	whole := []byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hello world"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":2}}`)
	var stream bytes.Buffer
	for range benchChunks {
		stream.WriteString(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" tok"}}]}` + "\n\n")
	}
	stream.WriteString(`data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":64}}` + "\n\ndata: [DONE]\n\n")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(stream.Bytes())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(whole)
	})}
	go srv.Serve(l)
	fmt.Println(l.Addr().String())
	io.Copy(io.Discard, os.Stdin)
}

var benchServer struct {
	once sync.Once
	addr string
	err  error
}

// startBenchServer starts the child server once per test binary run.
func startBenchServer(b *testing.B) string {
	benchServer.once.Do(func() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), benchServerEnv+"=1")
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			benchServer.err = err
			return
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || strings.HasPrefix(line, "error") {
			benchServer.err = fmt.Errorf("bench server: %q %v", line, err)
			return
		}
		benchServer.addr = strings.TrimSpace(line)
		_ = stdin // closed when this process exits, which ends the child
		go cmd.Wait()
	})
	if benchServer.err != nil {
		b.Fatal(benchServer.err)
	}
	return benchServer.addr
}

// fakeClock stands in for the loadgen.Responder.
type fakeClock struct{ start time.Time }

func (c fakeClock) Now() int64                                     { return int64(time.Since(c.start)) }
func (c fakeClock) At(t time.Time) int64                           { return int64(t.Sub(c.start)) }
func (c fakeClock) FirstTokenAt(loadgen.ResponseID, int64, []byte) {}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchParallelism × GOMAXPROCS requests are in flight in each benchmark.
var benchParallelism = 16

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "client-cpu-ns/op")
}

func benchmarkDo(b *testing.B, stream bool, client string) {
	addr := startBenchServer(b)
	ep, err := New(Options{BaseURL: "http://" + addr, Model: "m", Stream: stream, MaxTokens: benchChunks,
		Prompts: testPrompts(b, 64), MaxConns: 1024, HTTPClient: client})
	if err != nil {
		b.Fatal(err)
	}
	defer ep.Close()
	clk := fakeClock{start: time.Now()}
	ctx := context.Background()
	b.SetParallelism(benchParallelism)
	b.ReportAllocs()
	cpu := cpuTime()
	b.ResetTimer()
	var next sync.Mutex
	id := uint64(0)
	b.RunParallel(func(pb *testing.PB) {
		var resp loadgen.Response
		for pb.Next() {
			next.Lock()
			id++
			s := loadgen.QuerySample{ID: loadgen.ResponseID(id), Index: id % 64}
			next.Unlock()
			resp = loadgen.Response{ID: s.ID}
			ep.do(ctx, clk, s, &resp)
			if resp.Err != nil {
				b.Error(resp.Err)
				return
			}
			if stream && len(resp.TokenTimes) != benchChunks {
				b.Errorf("%d token times", len(resp.TokenTimes))
				return
			}
		}
	})
	b.StopTimer()
	reportCPU(b, cpu)
	if st := ep.Stats(); st.Errors != 0 {
		b.Errorf("stats %+v", st)
	}
}

// BenchmarkDo measures the adapter with each HTTP client: requests/s
// (ns/op at 32 in flight), allocations and client CPU per request.
func BenchmarkDo(b *testing.B) {
	for _, client := range []string{ClientH1, ClientNetHTTP} {
		b.Run("whole/"+client, func(b *testing.B) { benchmarkDo(b, false, client) })
		b.Run("stream64/"+client, func(b *testing.B) { benchmarkDo(b, true, client) })
	}
}

// BenchmarkBareLoop is the baseline: a plain net/http client sending the
// same bodies and reading the responses to the end, with no decoding.
func BenchmarkBareLoop(b *testing.B) {
	for _, stream := range []bool{false, true} {
		name := "whole"
		if stream {
			name = "stream64"
		}
		b.Run(name, func(b *testing.B) {
			addr := startBenchServer(b)
			tr := &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, DisableCompression: true}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			url := "http://" + addr + "/v1/chat/completions"
			body := fmt.Sprintf(`{"model":"m","stream":%v,"max_tokens":64,"messages":[{"role":"user","content":"abcdefghijklm prompt <1> \"quoted\""}]}`, stream)
			b.SetParallelism(benchParallelism)
			b.ReportAllocs()
			cpu := cpuTime()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				buf := make([]byte, 32<<10)
				for pb.Next() {
					req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					res, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					for {
						if _, err := res.Body.Read(buf); err != nil {
							break
						}
					}
					res.Body.Close()
				}
			})
			b.StopTimer()
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkDecodeChunk compares the chunk scanner with encoding/json on a
// typical streamed chunk of vLLM.
func BenchmarkDecodeChunk(b *testing.B) {
	body := []byte(`{"id":"chatcmpl-7f3a","object":"chat.completion.chunk","created":1732500000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}]}`)
	b.Run("scanner", func(b *testing.B) {
		var p parsed
		var c chunk
		b.ReportAllocs()
		for b.Loop() {
			if err := p.decode(body, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	// netbench's NullServer chunk, the one bench-stream.sh's runs decode.
	null := []byte(`{"id":"chatcmpl-null","object":"chat.completion.chunk","created":1700000000,"model":"null","choices":[{"index":0,"delta":{"content":"a "},"finish_reason":null}]}`)
	b.Run("scanner-null", func(b *testing.B) {
		var p parsed
		var c chunk
		b.ReportAllocs()
		for b.Loop() {
			if err := p.decode(null, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		var c chunk
		b.ReportAllocs()
		for b.Loop() {
			if err := c.decode(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
