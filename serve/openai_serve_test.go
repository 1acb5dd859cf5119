package serve

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeOpenAI serves the simulator, answers a request, stops on the
// context's end, and returns its counts with the send log written.
func TestServeOpenAI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	logPath := filepath.Join(t.TempDir(), "send.jsonl")
	ready := make(chan net.Addr, 1)
	type result struct {
		stats *OpenAIStats
		err   error
	}
	done := make(chan result, 1)
	go func() {
		st, err := ServeOpenAI(ctx, OpenAIOptions{}, OpenAIServeOptions{Addr: "127.0.0.1:0", SendLog: logPath, Ready: func(a net.Addr) { ready <- a }})
		done <- result{st, err}
	}()
	addr := <-ready
	res, err := http.Post("http://"+addr.String()+"/v1/completions", "application/json", strings.NewReader(`{"model":"sim","prompt":"a b","max_tokens":3}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	cancel()
	r := <-done
	if r.err != nil || r.stats == nil || r.stats.Requests != 1 {
		t.Fatalf("stats %+v, err %v", r.stats, r.err)
	}
	if b, err := os.ReadFile(logPath); err != nil || len(b) == 0 {
		t.Errorf("send log: %v, %d bytes", err, len(b))
	}
}

// TestServeOpenAIErrors: each failure before serving has its own type, and
// nothing was served.
func TestServeOpenAIErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var le *ListenError
	st, err := ServeOpenAI(context.Background(), OpenAIOptions{}, OpenAIServeOptions{Addr: ln.Addr().String()})
	if !errors.As(err, &le) || le.Addr != ln.Addr().String() || st != nil {
		t.Errorf("address in use: %v (%T), stats %v", err, err, st)
	}
	var se *SendLogError
	st, err = ServeOpenAI(context.Background(), OpenAIOptions{}, OpenAIServeOptions{Addr: "127.0.0.1:0", SendLog: filepath.Join(t.TempDir(), "no", "such", "dir")})
	if !errors.As(err, &se) || !se.Create || st != nil {
		t.Errorf("send log in a missing folder: %v (%T)", err, err)
	}
	var oe *OptionsError
	_, err = ServeOpenAI(context.Background(), OpenAIOptions{DefaultMaxTokens: -1}, OpenAIServeOptions{Addr: "127.0.0.1:0"})
	if !errors.As(err, &oe) {
		t.Errorf("bad options: %v (%T)", err, err)
	}
	// Options are checked before the send log is created.
	logPath := filepath.Join(t.TempDir(), "send.jsonl")
	var fe *FieldError
	_, err = ServeOpenAI(context.Background(), OpenAIOptions{Faults: Faults{Reset: 2}}, OpenAIServeOptions{Addr: "127.0.0.1:0", SendLog: logPath})
	if !errors.As(err, &oe) || !errors.As(err, &fe) || fe.Field != "Faults.Reset" {
		t.Errorf("bad fault: %v (%T), want an OptionsError wrapping a FieldError", err, err)
	}
	if _, err := os.Stat(logPath); !os.IsNotExist(err) {
		t.Errorf("send log created for refused options: %v", err)
	}
}
