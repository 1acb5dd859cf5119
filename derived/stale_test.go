package derived

import (
	"aimeter/bundle"
	"aimeter/loadgen/loadgentest"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"aimeter/loadgen"
	"aimeter/sut/null"
)

// TestWriteRemovesStaleFiles writes a rich bundle (trace, stages, errors, a
// foreign run) and then a plain one into the same directory: the directory
// must then hold exactly the plain bundle's files, plus a file of the
// user's that no bundle holds.
func TestWriteRemovesStaleFiles(t *testing.T) {
	dir := t.TempDir()
	rich := runBundle(t, &loadgentest.StagedSUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
	foreign := runBundle(t, null.SUT{}, loadgentest.SmallSettings(loadgen.Server, loadgen.PerformanceOnly))
	foreign.NoReport = true
	rich.Foreign = foreign
	if err := Write(dir, rich); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{bundle.TraceFile, bundle.StagesFile, bundle.ErrorsFile, bundle.ForeignDir + "/" + bundle.RecordsFile} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Fatalf("the first bundle lacks %s, so the test proves nothing: %v", name, err)
		}
	}
	userFile := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(userFile, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	plain := runBundle(t, null.SUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
	plain.Trace = false
	if err := Write(dir, plain); err != nil {
		t.Fatal(err)
	}
	want := []string{bundle.ManifestFile, "notes.txt"}
	for _, e := range plain.Manifest.Files {
		want = append(want, e.Name)
	}
	var got []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		got = append(got, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("files after the second Write:\n got %v\nwant %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, bundle.ForeignDir)); err == nil {
		t.Errorf("%s/ of the first run survived", bundle.ForeignDir)
	}
	if _, err := bundle.Read(dir); err != nil {
		t.Errorf("bundle.Read of the second bundle: %v", err)
	}
}
