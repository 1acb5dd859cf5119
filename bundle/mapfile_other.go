//go:build !linux

package bundle

import (
	"io"
	"os"
)

// mapping is a file read whole by mapFile (no mapping off Linux).
type mapping struct{}

// mapFile reads the size bytes of f.
func mapFile(f *os.File, size int64) ([]byte, *mapping, error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, err
	}
	return data, &mapping{}, nil
}

func (m *mapping) drop()  {}
func (m *mapping) close() {}
