package loadgen

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (5.14 and later): fault
// a range's pages in, writable, without changing a byte of them.
const madvPopulateWrite = 23

// populateChunk is how much populate faults in with one system call: small
// enough that it keeps ahead of a writer that starts where it does.
const populateChunk = 1 << 20

// populateRange faults in the pages of the n bytes at p, a chunk at a time, as
// the first writes to them would, but with no trap per page: on this
// development machine a first write to a page costs about 2.7 µs, so the
// issuer of an Offline pass of 4.4 M samples spent 40 ms of its loop
// faulting in the pages of its completion times, states and token counts,
// and the generator as much for the query's samples. loadgen runs it on
// another goroutine ahead of the writer (populate). It changes no byte, so
// it may run beside goroutines writing the memory, which its caller keeps
// alive. It gives up quietly where the kernel lacks the call (before
// 5.14): the writer then faults the pages in as before.
func populateRange(p unsafe.Pointer, n uintptr) {
	const pageSize = 4096
	start := uintptr(p) &^ (pageSize - 1)
	end := (uintptr(p) + n + pageSize - 1) &^ (pageSize - 1)
	for a := start; a < end; a += populateChunk {
		size := min(populateChunk, end-a)
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, a, size, madvPopulateWrite); errno != 0 {
			break
		}
	}
}
