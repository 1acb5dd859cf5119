package bundle

import (
	"os"
	"syscall"
)

// mapping is a file mapped read-only by mapFile.
type mapping struct{ data []byte }

// mapFile maps the size bytes of f into memory, read-only; an empty file
// maps to nothing.
func mapFile(f *os.File, size int64) ([]byte, *mapping, error) {
	if size == 0 {
		return nil, &mapping{}, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, &mapping{data: data}, nil
}

// drop lets go of the pages of the mapping read so far: they leave the
// process (a later read faults them in again from the page cache).
func (m *mapping) drop() {
	if len(m.data) > 0 {
		_ = syscall.Madvise(m.data, syscall.MADV_DONTNEED)
	}
}

// close unmaps the file.
func (m *mapping) close() {
	if len(m.data) > 0 {
		_ = syscall.Munmap(m.data)
		m.data = nil
	}
}
