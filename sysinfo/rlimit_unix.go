//go:build linux || darwin || freebsd

package sysinfo

import "syscall"

// getrlimit returns the soft limit of RLIMIT_AS or RLIMIT_DATA.
func getrlimit(resource string) (uint64, error) {
	r := syscall.RLIMIT_AS
	if resource == "RLIMIT_DATA" {
		r = syscall.RLIMIT_DATA
	}
	var l syscall.Rlimit
	if err := syscall.Getrlimit(r, &l); err != nil {
		return 0, err
	}
	// RLIM_INFINITY is -1 on Linux and 1<<63-1 elsewhere.
	inf := int64(syscall.RLIM_INFINITY)
	if uint64(l.Cur) == uint64(inf) {
		return RlimInfinity, nil
	}
	return uint64(l.Cur), nil
}
