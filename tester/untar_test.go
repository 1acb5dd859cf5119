package tester

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tarOf(t testing.TB, entries ...*tar.Header) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range entries {
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(h.Name))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(h.Name))
		}
	}
	tw.Close()
	return b.Bytes()
}

func TestUntarRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []*tar.Header
	}{
		{"a path that climbs out", []*tar.Header{{Name: "../evil", Typeflag: tar.TypeReg}}},
		{"an absolute path", []*tar.Header{{Name: "/etc/evil", Typeflag: tar.TypeReg}}},
		{"a path that is not clean", []*tar.Header{{Name: "a/../../evil", Typeflag: tar.TypeReg}}},
		{"a symbolic link", []*tar.Header{{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}},
		{"a hard link", []*tar.Header{{Name: "link", Typeflag: tar.TypeLink, Linkname: "x"}}},
		{"a file given twice", []*tar.Header{{Name: "a", Typeflag: tar.TypeReg}, {Name: "a", Typeflag: tar.TypeReg}}},
		{"a backslash", []*tar.Header{{Name: `a\..\b`, Typeflag: tar.TypeReg}}},
		{"nothing at all", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := untar(bytes.NewReader(tarOf(t, tc.entries...)), dir); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	dir := t.TempDir()
	if err := untar(bytes.NewReader(tarOf(t, &tar.Header{Name: "d/", Typeflag: tar.TypeDir}, &tar.Header{Name: "d/f.txt", Typeflag: tar.TypeReg}, &tar.Header{Name: "g", Typeflag: tar.TypeReg})), dir); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "d", "f.txt")); err != nil || string(b) != "d/f.txt" {
		t.Fatalf("d/f.txt = %q, %v", b, err)
	}
}

// FuzzUntar: whatever the stream, untar writes nothing outside its
// directory and nothing but regular files and directories.
func FuzzUntar(f *testing.F) {
	f.Add(tarOf(f, &tar.Header{Name: "a", Typeflag: tar.TypeReg}))
	f.Add(tarOf(f, &tar.Header{Name: "../a", Typeflag: tar.TypeReg}))
	f.Add(tarOf(f, &tar.Header{Name: "d/", Typeflag: tar.TypeDir}, &tar.Header{Name: "d/b", Typeflag: tar.TypeReg}))
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "in")
		os.Mkdir(dir, 0o755)
		untar(bytes.NewReader(data), dir)
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != root && p != dir && !strings.HasPrefix(p, dir+string(filepath.Separator)) {
				t.Fatalf("wrote %s outside %s", p, dir)
			}
			if !d.IsDir() && !d.Type().IsRegular() {
				t.Fatalf("wrote %s of type %v", p, d.Type())
			}
			return nil
		})
	})
}
