package benchmark

import (
	"strings"
	"testing"
)

func TestRedactArgv(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want []string
	}{
		{"a secret option's separate value is hidden", []string{"python", "--api-key", "sk-1", "x"}, []string{"python", "--api-key", "REDACTED", "x"}},
		{"a secret option's joined value is hidden", []string{"--token=abc"}, []string{"--token=REDACTED"}},
		{"other options are kept", []string{"--epochs", "3", "--lr=0.1"}, []string{"--epochs", "3", "--lr=0.1"}},
		{"a secret flag followed by another flag keeps the flag", []string{"--use-auth", "--epochs", "3"}, []string{"--use-auth", "--epochs", "3"}},
	} {
		got := redactArgv(tc.in)
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

