//go:build !(linux || darwin || freebsd)

package sysinfo

import (
	"errors"
	"runtime"
)

// errNoRlimit is getrlimit's error where the OS has no rlimits.
var errNoRlimit = errors.New("rlimits are not supported on " + runtime.GOOS)

func getrlimit(string) (uint64, error) { return 0, errNoRlimit }
