package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
)

// note is a part of a test's own: a JSON object with one field.
type note struct {
	Text string `json:"text"`
}

var notePart = PartType[*note]{Name: "note.json",
	Read: func(r io.Reader) (*note, error) {
		var n note
		dec := json.NewDecoder(r)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&n); err != nil {
			return nil, err
		}
		if n.Text == "" {
			return nil, errors.New("no text")
		}
		return &n, nil
	},
	Write: func(w io.Writer, n *note) error { return WriteJSON(w, n) },
}

func smallRun(t *testing.T) *loadgen.Result {
	t.Helper()
	s := loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)
	res, err := loadgen.Run(context.Background(), &loadgentest.StagedSUT{}, &loadgentest.QSL{Total: 16}, s, &loadgen.Options{SpinWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A part is written from its value, read back as bytes, decoded when asked
// for and kept; a part nobody asks for is written back byte for byte, and
// the manifest covers it.
func TestPartRoundTrip(t *testing.T) {
	res := smallRun(t)
	dir := t.TempDir()
	b := &Bundle{Result: res, Version: "test"}
	if notePart.Has(b) || notePart.Value(b) != nil {
		t.Fatal("a new bundle has the part")
	}
	notePart.Set(b, &note{Text: "hello"})
	if err := Write(dir, b, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Manifest.Entry("note.json"); !ok {
		t.Fatal("the manifest does not list the part")
	}
	back, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	n, err := notePart.Get(back)
	if err != nil || n == nil || n.Text != "hello" {
		t.Fatalf("the part read back: %+v, %v", n, err)
	}
	if again := notePart.Value(back); again != n {
		t.Error("the part is decoded again, not kept")
	}
	// Nobody asks for the part: it is written back as read.
	other, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	dir2 := t.TempDir()
	if err := Write(dir2, other, nil); err != nil {
		t.Fatal(err)
	}
	if a, b := readAll(t, filepath.Join(dir, "note.json")), readAll(t, filepath.Join(dir2, "note.json")); !bytes.Equal(a, b) {
		t.Errorf("the part written back: %q, want %q", b, a)
	}
	if a, b := readAll(t, filepath.Join(dir, ManifestFile)), readAll(t, filepath.Join(dir2, ManifestFile)); !bytes.Equal(a, b) {
		t.Errorf("the manifest written back differs:\n%s\nwant\n%s", b, a)
	}
	// A change to the value is written; Remove writes no file.
	n.Text = "changed"
	if err := Write(dir2, back, nil); err != nil {
		t.Fatal(err)
	}
	if got := string(readAll(t, filepath.Join(dir2, "note.json"))); !strings.Contains(got, "changed") {
		t.Errorf("the changed part was written as %q", got)
	}
	notePart.Remove(back)
	if err := Write(dir2, back, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := back.Manifest.Entry("note.json"); ok {
		t.Error("a removed part is still in the bundle's manifest")
	}
	// A change to a part's file is caught by the manifest's digests.
	if err := os.WriteFile(filepath.Join(dir, "note.json"), []byte(`{"text": "forged"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var de *DigestError
	if _, err := Read(dir); !errors.As(err, &de) {
		t.Errorf("Read of a bundle whose part changed: %v, want a *DigestError", err)
	}
}

// A malformed part reads back; Get says why, naming the file, and ReadWith
// given the part fails. Written again, its bytes are kept as they were.
func TestPartMalformed(t *testing.T) {
	dir := t.TempDir()
	b := &Bundle{Result: smallRun(t), Version: "test"}
	notePart.Set(b, &note{Text: "hello"})
	if err := Write(dir, b, nil); err != nil {
		t.Fatal(err)
	}
	bad := []byte(`{"text": ""}`)
	if err := os.WriteFile(filepath.Join(dir, "note.json"), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := ReadWith(dir, ReadOptions{SkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := notePart.Get(back); err == nil || !strings.Contains(err.Error(), "note.json: no text") {
		t.Errorf("Get of a malformed part: %v", err)
	}
	if notePart.Value(back) != nil {
		t.Error("Value of a malformed part is not nil")
	}
	_, err = ReadWith(dir, ReadOptions{SkipVerify: true, Parts: []Part{notePart}})
	if err == nil || !strings.Contains(err.Error(), "note.json: no text") || !strings.Contains(err.Error(), dir) {
		t.Errorf("ReadWith checking the part: %v", err)
	}
	dir2 := t.TempDir()
	if err := Write(dir2, back, nil); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, filepath.Join(dir2, "note.json")); !bytes.Equal(got, bad) {
		t.Errorf("a malformed part written back as %q, want %q", got, bad)
	}
}

// Parts are decoded safely by derived files written at once, and a Copy's
// parts are its own.
func TestPartConcurrentAndCopy(t *testing.T) {
	dir := t.TempDir()
	b := &Bundle{Result: smallRun(t), Version: "test"}
	notePart.Set(b, &note{Text: "hello"})
	if err := Write(dir, b, nil); err != nil {
		t.Fatal(err)
	}
	back, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([]*note, 8)
	for i := range got {
		wg.Go(func() { got[i] = notePart.Value(back) })
	}
	wg.Wait()
	for _, n := range got {
		if n != got[0] || n == nil {
			t.Fatalf("parts decoded at once: %v", got)
		}
	}
	c := back.Copy()
	notePart.Set(c, &note{Text: "copy"})
	if notePart.Value(back).Text != "hello" || notePart.Value(c).Text != "copy" {
		t.Error("setting a copy's part changed the original's")
	}
}
