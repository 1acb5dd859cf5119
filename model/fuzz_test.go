package model

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to Load. It must never panic, every error
// must wrap one of the documented sentinel errors, and whatever loads must
// save back to exactly the bytes it was read from.
func FuzzLoad(f *testing.F) {
	var buf bytes.Buffer
	New([]int{3, 2}, 1).Save(&buf)
	f.Add(buf.Bytes())
	buf.Reset()
	New([]int{4, 9, 3}, 2).Save(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte("AIMW"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Load(bytes.NewReader(data))
		if err != nil {
			for _, want := range []error{ErrBadMagic, ErrVersion, ErrTruncated, ErrChecksum, ErrLayerSizes, ErrNonFinite} {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("error %q wraps no documented error", err)
		}
		var out bytes.Buffer
		if err := m.Save(&out); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, out.Bytes()) {
			t.Fatalf("loaded %v but saving it gives different bytes", m.Layers())
		}
	})
}
