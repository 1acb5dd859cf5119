package bundle

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
)

// FileMode is the mode of every file a bundle holds: readable by all,
// writable by the owner (a run's files are shared with colleagues and
// tools, and nothing in them is secret).
const FileMode = 0o644

// writtenFile is what writeFile reports of a file it wrote.
type writtenFile struct {
	Name   string
	Bytes  int64
	SHA256 string
}

// countingHasher hashes and counts what is written through it.
type countingHasher struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (c *countingHasher) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}

// writeFile writes name in dir through a temporary file that is renamed into
// place once complete, so a reader never sees half a file and a failed write
// leaves the previous file as it was. It returns the size and SHA-256 of
// what it wrote. This is the only file writer of a bundle.
func writeFile(dir, name string, write func(io.Writer) error) (wf writtenFile, err error) {
	path := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return wf, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return wf, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("%s: %w", path, err)
		}
	}()
	ch := &countingHasher{w: tmp, h: sha256.New()}
	bw := bufio.NewWriterSize(ch, 1<<20)
	if err = write(bw); err != nil {
		return wf, err
	}
	if err = bw.Flush(); err != nil {
		return wf, err
	}
	if err = tmp.Chmod(FileMode); err != nil {
		return wf, err
	}
	if err = tmp.Close(); err != nil {
		return wf, err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return wf, err
	}
	return writtenFile{Name: name, Bytes: ch.n, SHA256: hex.EncodeToString(ch.h.Sum(nil))}, nil
}

// digestFile returns the size and SHA-256 of the file at path.
func digestFile(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", fmt.Errorf("%s: %w", path, err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}
