//go:build unix

package mllog

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/train"
)

// script writes an sh script into a temp dir and returns its argv.
func script(t *testing.T, body string) []string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "train.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"/bin/sh", p}
}

const mllogScript = `
ms() { echo $(( $(date +%s) * 1000 )); }
echo "0: :::MLLOG {\"time_ms\": $(ms), \"key\": \"run_start\"}"
sleep 0.05
echo "1: :::MLLOG {\"time_ms\": $(ms), \"key\": \"epoch_start\", \"metadata\": {\"epoch_num\": 1}}" >&2
sleep 0.05
echo "plain progress line"
echo "1: :::MLLOG {\"time_ms\": $(ms), \"key\": \"epoch_stop\", \"metadata\": {\"epoch_num\": 1}}" >&2
echo "0: :::MLLOG {\"time_ms\": $(ms), \"key\": \"run_stop\", \"metadata\": {\"status\": \"success\"}}"
`

// TestRunCommand runs real child processes: a well-behaved trainer
// writing to both streams, one that exits 3 mid-run, one killed by a
// signal, one cancelled through ctx, and one printing 10 MB of garbage.
func TestRunCommand(t *testing.T) {
	cases := []struct {
		name      string
		body      string
		cancel    bool
		events    int
		code      int
		signal    string
		cancelled bool
		reason    string
	}{
		{"trainer on both streams", mllogScript, false, 4, 0, "", false, "exited with status 0"},
		{"exits 3 after one record", `echo ':::MLLOG {"time_ms": 1, "key": "run_start"}'; exit 3`, false, 1, 3, "", false, "exited with status 3"},
		{"killed by a signal keeps what was measured", `echo ':::MLLOG {"time_ms": 1, "key": "run_start"}'; kill -KILL $$`, false, 1, -1, "killed", false, "killed by signal killed"},
		{"cancelled child gets SIGTERM", `echo ':::MLLOG {"time_ms": 1, "key": "run_start"}'; sleep 30`, true, 1, -1, "terminated", true, "cancelled"},
		{"cancelled child ignoring SIGTERM gets SIGKILL", `trap '' TERM; echo ':::MLLOG {"time_ms": 1, "key": "run_start"}'; while :; do sleep 0.05; done`, true, 1, -1, "killed", true, "killed by signal killed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A cancelling case cancels once the first event is parsed,
			// so that the record is in whatever the machine's speed.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var onEvent func(train.Event)
			if c.cancel {
				onEvent = func(train.Event) { cancel() }
			}
			var stdout, stderr bytes.Buffer
			res, err := RunCommand(ctx, script(t, c.body), RunOptions{Stdout: &stdout, Stderr: &stderr, Grace: 500 * time.Millisecond, OnEvent: onEvent})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Events) != c.events {
				t.Errorf("events = %d, want %d: %+v", len(res.Events), c.events, res.Events)
			}
			e := res.Exit
			if e.Code != c.code || e.Signal != c.signal || e.Cancelled != c.cancelled || !strings.Contains(e.Reason, c.reason) {
				t.Errorf("exit = %+v, want code %d signal %q cancelled %v reason ~%q", e, c.code, c.signal, c.cancelled, c.reason)
			}
			if !strings.Contains(stdout.String(), ":::MLLOG") {
				t.Errorf("stdout copy = %q", stdout.String())
			}
		})
	}
	// Stream contents of the first case: stderr carries rank 1's epoch.
	var stderr bytes.Buffer
	res, _ := RunCommand(context.Background(), script(t, mllogScript), RunOptions{Stderr: &stderr})
	if !strings.Contains(stderr.String(), "epoch_start") || res.Stats.Lines != 5 {
		t.Errorf("stderr %q, lines %d", stderr.String(), res.Stats.Lines)
	}
}

// TestRunCommandGarbage checks that 10 MB of output without newlines or
// with binary bytes is copied out, counted, and parsed in bounded memory.
func TestRunCommandGarbage(t *testing.T) {
	body := `head -c 10000000 /dev/urandom; echo; echo ':::MLLOG {"time_ms": 1, "key": "run_start"}'`
	var n countWriter
	res, err := RunCommand(context.Background(), script(t, body), RunOptions{Stdout: &n, Parse: Options{MaxLine: 4096}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Exit.OK() || n < 10_000_000 {
		t.Fatalf("exit %+v, copied %d", res.Exit, n)
	}
	// Bytes leaves out the carriage return of CRLF line ends.
	if len(res.Events) != 1 || res.Stats.Bytes < 10_000_000-res.Stats.Lines {
		t.Errorf("events %d bytes %d", len(res.Events), res.Stats.Bytes)
	}
}

// TestRunCommandBadWriter checks that a failing copy writer neither stops
// the child nor the parsing, and is reported.
func TestRunCommandBadWriter(t *testing.T) {
	res, err := RunCommand(context.Background(), script(t, mllogScript), RunOptions{Stdout: failWriter{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Exit.OK() || len(res.Events) != 4 || res.CopyErr == nil {
		t.Errorf("exit %+v events %d copyErr %v", res.Exit, len(res.Events), res.CopyErr)
	}
}

// TestRunCommandStartFails checks the only error path: no such program.
func TestRunCommandStartFails(t *testing.T) {
	for _, argv := range [][]string{nil, {""}, {filepath.Join(t.TempDir(), "missing")}} {
		if _, err := RunCommand(context.Background(), argv, RunOptions{}); err == nil {
			t.Errorf("%q: no error", argv)
		}
	}
}

type countWriter int

func (c *countWriter) Write(b []byte) (int, error) { *c += countWriter(len(b)); return len(b), nil }

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
