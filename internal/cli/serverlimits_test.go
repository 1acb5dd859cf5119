package cli

import (
	"strings"
	"testing"
)

// TestServerLimitFlags: a bad limit of aimeter server is a usage error
// naming its flag, before the service starts.
func TestServerLimitFlags(t *testing.T) {
	for _, tc := range []struct {
		flag, value, want, why string
	}{
		{"--max-upload-bytes", "lots", "--max-upload-bytes lots", "not a size"},
		{"--max-concurrent-uploads", "0", "--max-concurrent-uploads 0: give 1 or more", "no upload could be received"},
		{"--max-queued-uploads", "-1", "--max-queued-uploads -1", "a queue cannot be negative"},
		{"--upload-timeout", "0s", "--upload-timeout 0s", "every body would be cut"},
		{"--max-queue-wait", "-1s", "--max-queue-wait -1s", "a wait cannot be negative"},
		{"--memory-budget", "tiny", "--memory-budget", "not a size, auto or none"},
		{"--session-lifetime", "0s", "--session-lifetime 0s: give a duration above 0", "every session would end at sign-in"},
		{"--session-idle-timeout", "-1m", "--session-idle-timeout -1m0s", "an idle limit cannot be negative"},
	} {
		r := runCLI(t, "", "server", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0", tc.flag, tc.value)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s %s (%s): %s\nwant exit %d naming %q", tc.flag, tc.value, tc.why, r, ExitUsage, tc.want)
		}
	}
}

// TestRunUploadFlagsNeedServer: aimeter run's upload flags given without
// the service to upload to are refused before the run, naming the flag,
// rather than ignored.
func TestRunUploadFlagsNeedServer(t *testing.T) {
	for _, tc := range []struct {
		args []string
		why  string
	}{
		{[]string{"--retry-for", "1m"}, "retries of an upload that will not happen"},
		{[]string{"--token", "amt_x"}, "a token for no service"},
		{[]string{"--key", "lab.key"}, "a key that signs no upload"},
		{[]string{"--ca", "cert.pem"}, "a certificate of no service"},
	} {
		out := t.TempDir() + "/out"
		r := runCLI(t, "", append([]string{"run", "--no-store", "-q", "--output-dir", out}, tc.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.args[0]+" applies only with --server or --config") {
			t.Errorf("%s (%s): %s\nwant exit %d naming the flag", tc.args[0], tc.why, r, ExitUsage)
		}
	}
}
