package bundle

import (
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/sut/null"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadBothFormats: a run written in layout 1 (records.csv) and in
// layout 2 (records.parquet) reads back as the same records.
func TestReadBothFormats(t *testing.T) {
	s := loadgentest.SmallSettings(loadgen.Server, loadgen.PerformanceOnly)
	v2 := writeRunDir(t, null.SUT{}, s)
	b2, err := Read(v2)
	if err != nil {
		t.Fatal(err)
	}
	if b2.Manifest.FormatVersion != FormatVersion {
		t.Errorf("format version %d", b2.Manifest.FormatVersion)
	}
	if _, err := os.Stat(filepath.Join(v2, RecordsCSVFile)); err == nil {
		t.Errorf("a version %d bundle holds %s", FormatVersion, RecordsCSVFile)
	}
	v1 := t.TempDir()
	if err := WriteWith(v1, b2, nil, WriteOptions{FormatVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(v1, RecordsFile)); err == nil {
		t.Errorf("a version 1 bundle holds %s", RecordsFile)
	}
	b1, err := Read(v1)
	if err != nil {
		t.Fatal(err)
	}
	if b1.Manifest.FormatVersion != 1 {
		t.Errorf("format version %d, want 1", b1.Manifest.FormatVersion)
	}
	r1, r2 := slices.Collect(b1.Result.Records()), slices.Collect(b2.Result.Records())
	if len(r1) == 0 || !slices.Equal(r1, r2) {
		t.Errorf("%d records from %s, %d from %s, or they differ", len(r1), RecordsCSVFile, len(r2), RecordsFile)
	}
	if err := WriteWith(t.TempDir(), b2, nil, WriteOptions{FormatVersion: FormatVersion + 1}); err == nil {
		t.Error("a layout version from the future was written")
	}
}

// TestReadCorruptRecordsParquet: a truncated or altered records.parquet
// gives an error naming the file and, past the footer, the row group;
// never a panic.
func TestReadCorruptRecordsParquet(t *testing.T) {
	s := loadgentest.SmallSettings(loadgen.Server, loadgen.PerformanceOnly)
	orig := writeRunDir(t, null.SUT{}, s)
	// Rewrite the records with row groups of 16 so there are several.
	b, err := Read(orig)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteRecordsParquet(&buf, slices.Collect(b.Result.Records()), RecordWriterOptions{RowGroupRows: 16}); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	// The first data page starts after the 4-byte magic; flip a byte
	// inside the first column chunk's pages.
	cases := []struct {
		name string
		data []byte
		want []string
	}{
		{"empty", nil, []string{RecordsFile, "not a Parquet file"}},
		{"cut mid-row-group", good[:len(good)/2], []string{RecordsFile, "not a whole Parquet file", "the file ends in row group ", "without its footer"}},
		{"footer gone", good[:len(good)-8], []string{RecordsFile}},
	}
	for i := 4; i < 40; i++ {
		d := slices.Clone(good)
		d[i] ^= 0x5a
		cases = append(cases, struct {
			name string
			data []byte
			want []string
		}{"flipped byte", d, []string{RecordsFile, "row group 0"}})
	}
	for _, c := range cases {
		d := t.TempDir()
		copyDir(t, orig, d)
		if err := os.WriteFile(filepath.Join(d, RecordsFile), c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadWith(d, ReadOptions{SkipVerify: true})
		if err == nil {
			// A flipped byte can land where it changes nothing the
			// checks see (a statistic); the records must then be valid.
			if c.name != "flipped byte" {
				t.Errorf("%s: read without an error", c.name)
			}
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error does not say %q: %v", c.name, w, err)
			}
		}
		var de *DigestError
		if errors.As(err, &de) {
			t.Errorf("%s: a digest error with SkipVerify: %v", c.name, err)
		}
	}
}

// TestReadEveryLayout: runs with stage times, and with bytes, nodes,
// failures and token times, written in layouts 1, 2 and 3 read back the
// same; layout 3 holds the Parquet files and no CSV, layouts 1 and 2 the
// CSV files; WriteTableCSV of every layout gives the CSV of layout 2
// byte for byte.
func TestReadEveryLayout(t *testing.T) {
	for _, sut := range []loadgen.SUT{&loadgentest.StagedSUT{}, &loadgentest.WireSUT{}} {
		t.Run(sut.Name(), func(t *testing.T) {
			v3 := writeRunDir(t, sut, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
			b3, err := Read(v3)
			if err != nil {
				t.Fatal(err)
			}
			dirs := map[int]string{3: v3}
			for _, v := range []int{1, 2} {
				dirs[v] = t.TempDir()
				if err := WriteWith(dirs[v], b3, nil, WriteOptions{FormatVersion: v}); err != nil {
					t.Fatal(err)
				}
			}
			var tables []Table
			for _, tb := range Tables[1:] {
				if b3.HasTable(tb) {
					tables = append(tables, tb)
				}
			}
			if len(tables) == 0 {
				t.Fatal("the run has no stages, samples or tokens")
			}
			for _, tb := range tables {
				parquetName := string(tb) + ".parquet"
				if _, err := os.Stat(filepath.Join(v3, parquetName)); err != nil {
					t.Errorf("layout 3 lacks %s", parquetName)
				}
				if _, err := os.Stat(filepath.Join(v3, tb.csvName())); err == nil {
					t.Errorf("layout 3 holds %s", tb.csvName())
				}
				if _, err := os.Stat(filepath.Join(dirs[2], tb.csvName())); err != nil {
					t.Errorf("layout 2 lacks %s", tb.csvName())
				}
			}
			csv2 := map[Table][]byte{}
			for _, tb := range tables {
				csv2[tb] = readAll(t, filepath.Join(dirs[2], tb.csvName()))
			}
			for v, dir := range dirs {
				b, err := Read(dir)
				if err != nil {
					t.Fatalf("layout %d: %v", v, err)
				}
				if b.Manifest.FormatVersion != v {
					t.Errorf("layout %d read as %d", v, b.Manifest.FormatVersion)
				}
				for _, tb := range tables {
					var out bytes.Buffer
					if err := WriteTableCSV(&out, b, tb); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(out.Bytes(), csv2[tb]) {
						t.Errorf("layout %d: %s exported differs from layout 2's %s", v, tb, tb.csvName())
					}
				}
			}
		})
	}
}

// TestReadCorruptTables: a damaged stages, samples or tokens.parquet in a
// bundle (read without the manifest's digests) is an error naming the
// file and the row group.
func TestReadCorruptTables(t *testing.T) {
	staged := writeRunDir(t, &loadgentest.StagedSUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
	wire := writeRunDir(t, &loadgentest.WireSUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
	for _, c := range []struct{ dir, file string }{{staged, StagesFile}, {wire, SamplesFile}, {wire, TokensFile}} {
		data := readAll(t, filepath.Join(c.dir, c.file))
		for _, d := range []struct {
			name string
			data []byte
			want string
		}{
			{"flipped byte", flipAt(data, 30), "row group 0"},
			{"cut", data[:len(data)-20], "the file ends"},
		} {
			dir := t.TempDir()
			copyDir(t, c.dir, dir)
			if err := os.WriteFile(filepath.Join(dir, c.file), d.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadWith(dir, ReadOptions{SkipVerify: true})
			if err == nil || !strings.Contains(err.Error(), c.file) || !strings.Contains(err.Error(), d.want) {
				t.Errorf("%s %s: %v, want an error naming the file and saying %q", c.file, d.name, err, d.want)
			}
			if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), c.file) {
				t.Errorf("%s %s: the manifest's digest did not name it first: %v", c.file, d.name, err)
			}
		}
	}
}

// TestWriteReplacesOldLayout: writing a version 3 bundle where a version
// 2 bundle of a run with the same data was removes its CSV files, and
// writing version 2 over version 3 removes the Parquet files, so that a
// directory never holds both.
func TestWriteReplacesOldLayout(t *testing.T) {
	dir := writeRunDirVersion(t, &loadgentest.WireSUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly), 2)
	b, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		version      int
		gone, exists []string
	}{
		{3, []string{SamplesCSVFile, TokensCSVFile}, []string{SamplesFile, TokensFile}},
		{2, []string{SamplesFile, TokensFile}, []string{SamplesCSVFile, TokensCSVFile}},
	} {
		if err := WriteWith(dir, b, nil, WriteOptions{FormatVersion: step.version}); err != nil {
			t.Fatal(err)
		}
		for _, name := range step.gone {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				t.Errorf("version %d written over the other: %s left behind", step.version, name)
			}
		}
		for _, name := range step.exists {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("version %d lacks %s", step.version, name)
			}
		}
		if _, err := Read(dir); err != nil {
			t.Errorf("version %d: %v", step.version, err)
		}
	}
}

func flipAt(b []byte, i int) []byte {
	d := slices.Clone(b)
	d[i] ^= 0x5a
	return d
}
