//go:build !linux

package loadgen

import "unsafe"

// populateRange does nothing where Linux's MADV_POPULATE_WRITE is not to
// be had: the writer faults the pages in (see populate_linux.go).
func populateRange(p unsafe.Pointer, n uintptr) {}
