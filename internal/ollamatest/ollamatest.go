// Package ollamatest starts a real Ollama server (v0.6.5) for tests, serving
// a random-weight llama model that internal/gguf generates, so that
// aimeter's network adapters are tested against a third-party
// OpenAI-compatible server over real loopback sockets.
//
// Each Start runs its own `ollama serve` on a free 127.0.0.1 port, with its
// home and model store in temporary folders, creates the model with
// `ollama create` (offline), warms it with one request, and stops the whole
// process group (the server and its llama.cpp runner) when the test ends.
//
// The binary is found in $AIMETER_OLLAMA, then in aimeter's cache
// ($AIMETER_CACHE, default ~/.cache/aimeter, at bin/ollama-v0.6.5, where
// scripts/install-ollama.sh puts it), then on PATH. Without one the test is
// skipped, or fails when AIMETER_REQUIRE_OLLAMA=1 (as in CI).
//
// Benchmark warning: Ollama reuses its KV prefix cache when a prompt repeats,
// so a repeated prompt reports a time to first token of a few milliseconds
// instead of the prefill's. Vary the prompts.
package ollamatest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"aimeter/internal/gguf"
	"aimeter/internal/toolcache"
)

// Version is the Ollama version this package is written for.
const Version = "0.6.5"

// InstallCommand is the command that installs the binary Start looks for.
const InstallCommand = "scripts/install-ollama.sh"

// Options configure Start. The zero value serves the micro model with two
// parallel slots.
type Options struct {
	// Size is the model's size, "micro" (0.13 M parameters, the fastest)
	// or "tiny" (3.6 M, about 1 ms per output token). Zero: "micro".
	Size string
	// Seed seeds the model's weights. Zero: 1.
	Seed uint64
	// Model is the name the model is served as. Zero: "aimeter-" + Size.
	Model string
	// NumParallel is OLLAMA_NUM_PARALLEL, the number of requests the
	// runner decodes at once (more wait in Ollama's queue). Ollama
	// multiplies the context by it. Zero: 2.
	NumParallel int
	// NumCtx is the model's context length per parallel slot (the
	// Modelfile's num_ctx). Zero: 2048.
	NumCtx int
	// NumThread is the runner's thread count (num_thread). One thread
	// gives the steadiest time per token on a small machine. Zero: 1.
	NumThread int
	// ReadyTimeout bounds each stage of the start: the server's readiness,
	// the model's creation and the warm-up request. Zero: 60 s.
	ReadyTimeout time.Duration
	// Env adds variables ("KEY=value") to the server's environment, after
	// the ones Start sets.
	Env []string
}

func (o Options) withDefaults() Options {
	if o.Size == "" {
		o.Size = "micro"
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Model == "" {
		o.Model = "aimeter-" + o.Size
	}
	if o.NumParallel <= 0 {
		o.NumParallel = 2
	}
	if o.NumCtx <= 0 {
		o.NumCtx = 2048
	}
	if o.NumThread <= 0 {
		o.NumThread = 1
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	return o
}

// Server is a running Ollama server. It is stopped by the cleanup that
// Start registers, or earlier by Stop.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:PORT, without a
	// trailing slash: the OpenAI-compatible API is under URL + "/v1".
	URL string
	// Model is the name of the served model, for the requests' "model".
	Model string
	// Binary is the path of the ollama binary that runs.
	Binary string
	// Dir is the server's temporary home; its models are in Dir/models.
	Dir string

	cmd      *exec.Cmd
	log      *logBuffer
	exited   chan struct{} // closed when the serve process has exited
	waitErr  error         // set before exited is closed
	stopOnce sync.Once
}

// FindBinary returns the ollama binary Start would use: $AIMETER_OLLAMA,
// then the cache path of scripts/install-ollama.sh, then "ollama" on PATH.
// It returns an error listing what it tried when none exists.
func FindBinary() (string, error) {
	var tried []string
	if p := os.Getenv("AIMETER_OLLAMA"); p != "" {
		if isExec(p) {
			return p, nil
		}
		return "", fmt.Errorf("ollamatest: AIMETER_OLLAMA=%s is not an executable file", p)
	}
	if p := CachePath(); p != "" {
		if isExec(p) {
			return p, nil
		}
		tried = append(tried, p)
	}
	if p, err := exec.LookPath("ollama"); err == nil {
		return p, nil
	}
	tried = append(tried, "ollama on PATH")
	return "", fmt.Errorf("ollamatest: no ollama binary (tried $AIMETER_OLLAMA, %s); install it with %s", strings.Join(tried, ", "), InstallCommand)
}

// CachePath returns where scripts/install-ollama.sh installs the binary:
// $AIMETER_CACHE/bin/ollama-v0.6.5, with AIMETER_CACHE defaulting to
// $HOME/.cache/aimeter. It returns "" when neither variable is set.
func CachePath() string {
	dir, err := toolcache.Dir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "bin", "ollama-v"+Version)
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Required reports whether AIMETER_REQUIRE_OLLAMA=1 is set, in which case a
// missing binary fails the test instead of skipping it.
func Required() bool { return os.Getenv("AIMETER_REQUIRE_OLLAMA") == "1" }

// Start starts an Ollama server serving a freshly generated model and
// returns once the model has answered one request. It registers a cleanup
// that stops the server and every process it started. It skips the test
// when no binary is found (fails under AIMETER_REQUIRE_OLLAMA=1), and fails
// it, with the server's log tail, when the server does not come up.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin, err := FindBinary()
	if err != nil {
		if Required() {
			t.Fatalf("%v (AIMETER_REQUIRE_OLLAMA=1)", err)
		}
		t.Skipf("%v", err)
	}
	s, err := start(t, bin, opts.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func start(t testing.TB, bin string, o Options) (*Server, error) {
	cfg, err := gguf.BySize(o.Size, o.Seed)
	if err != nil {
		return nil, fmt.Errorf("ollamatest: Options.Size: %w", err)
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "model.gguf")
	if err := gguf.WriteFile(model, cfg); err != nil {
		return nil, fmt.Errorf("ollamatest: %w", err)
	}
	modelfile := filepath.Join(dir, "Modelfile")
	if err := os.WriteFile(modelfile, []byte(Modelfile(model, o.NumCtx, o.NumThread)), 0o644); err != nil {
		return nil, fmt.Errorf("ollamatest: %w", err)
	}

	// A free port can be taken between our check and the server's bind;
	// try a few.
	var s *Server
	for attempt := 0; ; attempt++ {
		s, err = serve(t, bin, dir, o)
		if err == nil || attempt == 2 || !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	s.Model = o.Model

	ctx, cancel := context.WithTimeout(context.Background(), o.ReadyTimeout)
	defer cancel()
	create := exec.CommandContext(ctx, bin, "create", o.Model, "-f", modelfile)
	create.Dir = dir
	create.Env = s.cmd.Env
	if out, err := create.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ollamatest: ollama create %s: %w\n%s\nserver log tail:\n%s", o.Model, err, tail(string(out), 2000), s.LogTail(4000))
	}
	if err := s.warm(ctx); err != nil {
		return nil, fmt.Errorf("ollamatest: warming %s at %s: %w\nserver log tail:\n%s", o.Model, s.URL, err, s.LogTail(4000))
	}
	return s, nil
}

// Modelfile returns the Modelfile Start creates the model with: the GGUF
// file at path, a plain "user:/assistant:" template, temperature 0 (greedy,
// so every output token is a visible chunk), and the context length and
// thread count given.
func Modelfile(path string, numCtx, numThread int) string {
	return "FROM " + path + "\n" +
		`TEMPLATE """{{ if .System }}system: {{ .System }}` + "\n" +
		`{{ end }}{{ if .Prompt }}user: {{ .Prompt }}` + "\n" +
		`{{ end }}assistant: {{ .Response }}"""` + "\n" +
		"PARAMETER temperature 0\n" +
		"PARAMETER num_ctx " + strconv.Itoa(numCtx) + "\n" +
		"PARAMETER num_thread " + strconv.Itoa(numThread) + "\n"
}

// serve starts `ollama serve` on a free port and waits for it to answer.
func serve(t testing.TB, bin, dir string, o Options) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, fmt.Errorf("ollamatest: %w", err)
	}
	s := &Server{
		URL:    "http://" + addr,
		Binary: bin,
		Dir:    home,
		log:    &logBuffer{max: 64 << 10},
		exited: make(chan struct{}),
	}
	cmd := exec.Command(bin, "serve")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"OLLAMA_MODELS="+filepath.Join(home, "models"),
		"OLLAMA_HOST="+addr,
		"OLLAMA_NUM_PARALLEL="+strconv.Itoa(o.NumParallel),
		"OLLAMA_MAX_LOADED_MODELS=1",
		"OLLAMA_KEEP_ALIVE=24h",
		"OLLAMA_NOPRUNE=1",
		// No GPU probing surprises on a machine that has one: the
		// tests measure the CPU build.
		"CUDA_VISIBLE_DEVICES=",
		"HIP_VISIBLE_DEVICES=",
	)
	cmd.Env = append(cmd.Env, o.Env...)
	cmd.Stdout = s.log
	cmd.Stderr = s.log
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ollamatest: starting %s serve: %w", bin, err)
	}
	s.cmd = cmd
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(s.Stop)

	deadline := time.Now().Add(o.ReadyTimeout)
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get(s.URL + "/api/version")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				client.CloseIdleConnections()
				return s, nil
			}
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("ollamatest: %s serve on %s exited before it was ready (%v); log tail:\n%s", bin, addr, s.waitErr, s.LogTail(4000))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("ollamatest: %s serve on %s not ready after %v (GET /api/version: %v); log tail:\n%s", bin, addr, o.ReadyTimeout, err, s.LogTail(4000))
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("ollamatest: finding a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("ollamatest: finding a free port: %w", err)
	}
	return port, nil
}

// warm sends one short completion, which loads the model into the runner.
func (s *Server) warm(ctx context.Context) error {
	body := fmt.Sprintf(`{"model":%q,"prompt":"warm up","max_tokens":1,"stream":false}`, s.Model)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/v1/completions", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /v1/completions: %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	return nil
}

// PID returns the process id of `ollama serve`, which is also the id of the
// process group holding it and its runners.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// LogTail returns the last n bytes (at most 64 KiB) of the server's
// combined output.
func (s *Server) LogTail(n int) string { return tail(s.log.String(), n) }

// Stop stops the server and every process in its process group (the
// llama.cpp runner included): SIGTERM, then SIGKILL after 5 s. It waits for
// the server to exit, at most 10 s. It is safe to call more than once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		signalGroup(s.cmd, false)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
		}
		// Also when serve exited by itself: a runner may outlive it.
		signalGroup(s.cmd, true)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
		}
	})
}

// Exited reports whether the serve process has exited.
func (s *Server) Exited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// logBuffer keeps the last max bytes written to it.
type logBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	if over := len(l.b) - l.max; over > 0 {
		l.b = append(l.b[:0], l.b[over:]...)
	}
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
