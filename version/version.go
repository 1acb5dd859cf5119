// Package version holds aimeter's one version string, the same in every
// run bundle, report, log and on the console.
package version

import "runtime/debug"

// Base is aimeter's release version, set at build time with
// -ldflags "-X aimeter/version.Base=…".
var Base = "0.1.0-dev"

// String returns Base, followed by the VCS revision the binary was built
// from when the build recorded one ("0.1.0-dev (6114149abcde+dirty)").
// go run and go test record none, so there it is Base alone.
func String() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Base
	}
	return withRevision(Base, bi)
}

// withRevision appends the build's VCS revision, cut to 12 characters, and
// "+dirty" for a modified work tree, to v.
func withRevision(v string, bi *debug.BuildInfo) string {
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return v + " (" + rev + modified + ")"
}
