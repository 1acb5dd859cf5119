package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/sut/null"
)

// TestExportTables: aimeter export --table stages, samples and tokens
// writes, from a format version 3 bundle (Parquet files), the stages.csv,
// samples.csv and tokens.csv that the same run holds as a version 2
// bundle, byte for byte, and as JSON Lines one object a row; a table the
// run has no data for is an error (exit 1), an unknown table a usage
// error (exit 2).
func TestExportTables(t *testing.T) {
	for _, c := range []struct {
		sut    loadgen.SUT
		tables []string
		absent string
	}{
		{&loadgentest.StagedSUT{}, []string{"stages"}, "tokens"},
		{&loadgentest.WireSUT{}, []string{"samples", "tokens"}, "stages"},
	} {
		t.Run(c.sut.Name(), func(t *testing.T) {
			res, err := loadgen.Run(context.Background(), c.sut, null.QSL{Total: 64},
				loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly), &loadgen.Options{SpinWindow: -1})
			if res == nil {
				t.Fatal(err)
			}
			b := &bundle.Bundle{Result: res, Version: "test"}
			v3, v2 := filepath.Join(t.TempDir(), "v3"), filepath.Join(t.TempDir(), "v2")
			if err := bundle.WriteWith(v3, b, derived.Of(b).Files(), bundle.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := bundle.WriteWith(v2, b, derived.Of(b).Files(), bundle.WriteOptions{FormatVersion: 2}); err != nil {
				t.Fatal(err)
			}
			for _, table := range c.tables {
				want := readFileT(t, filepath.Join(v2, table+".csv"))
				got := runCLI(t, "", "export", v3, "--table", table)
				if got.code != ExitOK || got.stdout != want {
					t.Errorf("export --table %s: exit %d, %d bytes, want %s's %d: %s", table, got.code, len(got.stdout), table+".csv", len(want), got.stderr)
				}
				if again := runCLI(t, "", "export", v2, "--table", table); again.stdout != want {
					t.Errorf("export --table %s of the version 2 bundle differs from its own CSV", table)
				}
				js := runCLI(t, "", "export", v3, "--table", table, "--format", "jsonl")
				lines := strings.Split(strings.TrimSuffix(js.stdout, "\n"), "\n")
				rows := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
				if js.code != ExitOK || len(lines) != len(rows)-1 {
					t.Fatalf("export --table %s --format jsonl: exit %d, %d lines for %d rows: %s", table, js.code, len(lines), len(rows)-1, js.stderr)
				}
				keys := strings.Split(rows[0], ",")
				for i, l := range lines {
					var o map[string]any
					if err := json.Unmarshal([]byte(l), &o); err != nil || len(o) != len(keys) {
						t.Fatalf("line %d %q: %v, want the keys %v", i+1, l, err, keys)
					}
					for k, f := range strings.Split(rows[i+1], ",") {
						v := o[keys[k]]
						switch {
						case f == "" && v != nil:
							t.Fatalf("line %d: %s is %v for an empty field", i+1, keys[k], v)
						case f != "" && v == nil:
							t.Fatalf("line %d: %s is null for %q", i+1, keys[k], f)
						}
					}
				}
			}
			if res := runCLI(t, "", "export", v3, "--table", c.absent); res.code != ExitFailure || !strings.Contains(res.stderr, "has no "+c.absent) {
				t.Errorf("export --table %s of a run without any: %s", c.absent, res)
			}
			if res := runCLI(t, "", "export", v3, "--table", "record"); res.code != ExitUsage || !strings.Contains(res.stderr, "unknown table") {
				t.Errorf("export --table record: %s", res)
			}
		})
	}
}

// TestReportNamesDamagedTable: aimeter report of a bundle whose
// stages.parquet was damaged names the file first by its digest and,
// with --ignore-digests, by the row group and column of the damage.
func TestReportNamesDamagedTable(t *testing.T) {
	res, err := loadgen.Run(context.Background(), &loadgentest.StagedSUT{}, null.QSL{Total: 64},
		loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly), &loadgen.Options{SpinWindow: -1})
	if res == nil {
		t.Fatal(err)
	}
	b := &bundle.Bundle{Result: res, Version: "test"}
	dir := filepath.Join(t.TempDir(), "run")
	if err := bundle.WriteWith(dir, b, derived.Of(b).Files(), bundle.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, bundle.StagesFile)
	data := []byte(readFileT(t, path))
	data[len(data)/3] ^= 0x5a // inside a page of row group 0: its CRC no longer matches
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "re")
	if res := runCLI(t, "", "report", dir, "--output-dir", out); res.code != ExitFailure || !strings.Contains(res.stderr, path) {
		t.Errorf("report: want exit %d naming %s: %s", ExitFailure, path, res)
	}
	res2 := runCLI(t, "", "report", dir, "--output-dir", out, "--ignore-digests")
	if res2.code != ExitFailure || !strings.Contains(res2.stderr, path) || !strings.Contains(res2.stderr, "row group 0: column ") {
		t.Errorf("report --ignore-digests: want exit %d naming %s and the row group: %s", ExitFailure, path, res2)
	}
}
