package version

import (
	"runtime/debug"
	"testing"
)

func TestWithRevision(t *testing.T) {
	for _, c := range []struct {
		why      string
		settings []debug.BuildSetting
		want     string
	}{
		{"no VCS stamp (go run, go test): the base alone", nil, "1.2.3"},
		{"a clean revision is cut to 12 characters",
			[]debug.BuildSetting{{Key: "vcs.revision", Value: "6114149abcdef0123456789"}, {Key: "vcs.modified", Value: "false"}},
			"1.2.3 (6114149abcde)"},
		{"a modified work tree is marked dirty",
			[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}},
			"1.2.3 (abc+dirty)"},
		{"modified without a revision says nothing",
			[]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, "1.2.3"},
	} {
		if got := withRevision("1.2.3", &debug.BuildInfo{Settings: c.settings}); got != c.want {
			t.Errorf("%s: got %q, want %q", c.why, got, c.want)
		}
	}
}

func TestStringStartsWithBase(t *testing.T) {
	if s := String(); len(s) < len(Base) || s[:len(Base)] != Base {
		t.Errorf("String() = %q, want it to start with %q", s, Base)
	}
}
