//go:build !linux

package loadgen

import "unsafe"

// populate does nothing where Linux's MADV_POPULATE_WRITE is not to be
// had: the writer faults the pages in (see populate_linux.go).
func populate(p unsafe.Pointer, n uintptr, keep any) {}
