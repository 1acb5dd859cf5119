package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The README's quick start "Upload to a tester's service" works as written:
// its two shell blocks run, unchanged but for the port, in bash with the
// built aimeter on PATH and a fresh HOME (a fresh machine): the service
// started in the background by the first block writes its admin token and
// certificate, the second makes a key, registers a test item and runs a
// test that uploads, and the service says it verified the upload.
// TestReadmeCommandsRun checks the same commands' flags; this runs them.
func TestReadmeUploadQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the tester's service and runs a test (about 15 s)")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section, ok := markdownSection(string(readme), "### Upload to a tester's service")
	if !ok {
		t.Fatal(`README.md has no section "### Upload to a tester's service"`)
	}
	blocks := shellBlocks(section)
	if len(blocks) != 2 || !strings.Contains(blocks[0], "aimeter server --listen 127.0.0.1:8443 &") {
		t.Fatalf("the upload quick start's shell blocks changed (want the service's block, then the client's): %q", blocks)
	}
	bin := buildAimeter(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	// The README's port, 8443, may be taken on a test machine.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	local := func(s string) string {
		return strings.ReplaceAll(s, "127.0.0.1:8443", fmt.Sprintf("127.0.0.1:%d", port))
	}
	env := append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=", "XDG_CONFIG_HOME=", "XDG_CACHE_HOME=",
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))

	// The service's block, in its own process group, stopped at the end.
	server := exec.Command("bash", "-c", local(blocks[0])+"\nwait")
	server.Dir, server.Env = dir, env
	server.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var serverOut bytes.Buffer
	server.Stdout, server.Stderr = &serverOut, &serverOut
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-server.Process.Pid, syscall.SIGTERM)
		server.Wait()
	})
	// A user waits for the service to be up before the next block.
	token := filepath.Join(home, ".local", "share", "aimeter", "server", "admin.token")
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if _, terr := os.Stat(token); err == nil && terr == nil {
			c.Close()
			break
		} else if err == nil {
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service did not come up in 60 s (%s): %s", token, serverOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	client := exec.CommandContext(ctx, "bash", "-e", "-c", local(blocks[1]))
	client.Dir, client.Env = dir, env
	out, err := client.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's upload block failed: %v\n%s\nservice: %s", err, out, serverOut.String())
	}
	for _, want := range []string{"token:    amt_", "uploaded: run 1 of test item ", ", attempt 1, verified (signature with key ", "verdict VALID"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the upload block printed no %q:\n%s", want, out)
		}
	}
	// The README quotes what the upload prints.
	if !strings.Contains(section, "uploaded: run 1 of test item ") {
		t.Errorf("the README no longer shows the upload's line")
	}
	if fi, err := os.Stat(filepath.Join(dir, "item.token")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("item.token: %v, mode %v; want the client token readable by its owner only", err, fi.Mode().Perm())
	}
}

// markdownSection is the text of md from the heading line to the next
// heading of the same or a higher level.
func markdownSection(md, heading string) (string, bool) {
	i := strings.Index(md, "\n"+heading+"\n")
	if i < 0 {
		return "", false
	}
	rest := md[i+1+len(heading)+1:]
	level := strings.Repeat("#", strings.Count(strings.Fields(heading)[0], "#"))
	for _, prefix := range []string{"\n" + level + " ", "\n" + level[:len(level)-1] + " "} {
		if len(prefix) > 2 {
			if j := strings.Index(rest, prefix); j >= 0 {
				rest = rest[:j]
			}
		}
	}
	return rest, true
}

// shellBlocks are the bodies of md's fenced blocks marked sh.
func shellBlocks(md string) []string {
	var out []string
	var cur []string
	in := false
	for _, line := range strings.Split(md, "\n") {
		switch t := strings.TrimSpace(line); {
		case !in && t == "```sh":
			in, cur = true, nil
		case in && t == "```":
			in = false
			out = append(out, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, line)
		}
	}
	return out
}
