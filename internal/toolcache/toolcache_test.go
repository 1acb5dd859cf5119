package toolcache

import (
	"path/filepath"
	"testing"
)

func TestDir(t *testing.T) {
	t.Setenv("AIMETER_CACHE", "/somewhere/cache")
	if d, err := Dir(); err != nil || d != "/somewhere/cache" {
		t.Errorf("with AIMETER_CACHE: %q, %v", d, err)
	}
	t.Setenv("AIMETER_CACHE", "")
	t.Setenv("HOME", "/home/someone")
	if d, err := Dir(); err != nil || d != filepath.Join("/home/someone", ".cache", "aimeter") {
		t.Errorf("without AIMETER_CACHE: %q, %v", d, err)
	}
	t.Setenv("HOME", "")
	if d, err := Dir(); err == nil {
		t.Errorf("neither set: %q, want an error", d)
	}
}
