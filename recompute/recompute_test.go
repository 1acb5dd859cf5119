package recompute

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/internal/bundletest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	bundletest.Cleanup()
	os.Exit(code)
}

// rewrite replaces a file of the bundle and makes the manifest agree, as a
// tested party editing its own bundle would.
func rewrite(t *testing.T, dir, name string, edit func([]byte) []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, edit(b), 0o644); err != nil {
		t.Fatal(err)
	}
	fixManifest(t, dir)
}

func fixManifest(t *testing.T, dir string) {
	t.Helper()
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	kept := m.Files[:0]
	for _, e := range m.Files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(e.Name)))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(b)
		e.Bytes, e.SHA256 = int64(len(b)), hex.EncodeToString(s[:])
		kept = append(kept, e)
	}
	m.Files = kept
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, bundle.ManifestFile), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func editJSON(t *testing.T, path []string, v any) func([]byte) []byte {
	return func(b []byte) []byte {
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		m := doc
		for _, k := range path[:len(path)-1] {
			m = m[k].(map[string]any)
		}
		m[path[len(path)-1]] = v
		out, _ := json.MarshalIndent(doc, "", "  ")
		return out
	}
}

func TestUntouchedBundlesStand(t *testing.T) {
	for _, k := range []bundletest.Kind{bundletest.MLPerf, bundletest.GBT} {
		dir := bundletest.Copy(t, k)
		rep, err := Check(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() || !rep.SameVersion || rep.Result == nil {
			t.Fatalf("kind %d: %+v", k, rep)
		}
		want := []string{bundle.ResultFile, bundle.SummaryFile, bundle.DetailFile, bundle.ReportFile}
		if k == bundletest.GBT {
			want = append(want, bundle.GBTResultFile, bundle.GBTLogFile)
		}
		for _, n := range want {
			found := false
			for _, c := range rep.Compared {
				found = found || c == n
			}
			if !found {
				t.Errorf("kind %d: %s not compared (%v)", k, n, rep.Compared)
			}
		}
	}
}

// TestClaimsTheRecordsDoNotSupport: each row edits a derived file and its
// manifest entry consistently, so only the recomputation can tell.
func TestClaimsTheRecordsDoNotSupport(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kind   bundletest.Kind
		file   string
		edit   func(t *testing.T) func([]byte) []byte
		metric string // the Difference's Metric; "" for a whole file
		claim  string
	}{
		{"a better p99 latency in result.json", bundletest.MLPerf, bundle.ResultFile,
			func(t *testing.T) func([]byte) []byte { return editJSON(t, []string{"latency_ns", "p99"}, 1) },
			"latency_ns.p99", "1"},
		{"a verdict turned to VALID", bundletest.MLPerf, bundle.ResultFile,
			func(t *testing.T) func([]byte) []byte { return editJSON(t, []string{"verdict_word"}, "PASS!") },
			"verdict_word", `"PASS!"`},
		{"a headline throughput doubled", bundletest.MLPerf, bundle.ResultFile,
			func(t *testing.T) func([]byte) []byte { return editJSON(t, []string{"headline", "value"}, 1e12) },
			"headline.value", "1e+12"},
		{"an extra metric added", bundletest.MLPerf, bundle.ResultFile,
			func(t *testing.T) func([]byte) []byte { return editJSON(t, []string{"bonus"}, 7) },
			"bonus", "7"},
		{"an edited line in the summary log", bundletest.MLPerf, bundle.SummaryFile,
			func(t *testing.T) func([]byte) []byte {
				return func(b []byte) []byte { return []byte(strings.Replace(string(b), "Result is", "Result was", 1)) }
			}, "", ""},
		{"a GB/T mean T_TI improved", bundletest.GBT, bundle.GBTResultFile,
			func(t *testing.T) func([]byte) []byte {
				return editJSON(t, []string{"metrics", "time", "t_ti_ms", "stat", "mean"}, 0.001)
			}, "metrics.time.t_ti_ms.stat.mean", "0.001"},
		{"a GB/T result that is no longer JSON", bundletest.GBT, bundle.GBTResultFile,
			func(t *testing.T) func([]byte) []byte {
				return func(b []byte) []byte { return b[:len(b)/2] }
			}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := bundletest.Copy(t, tc.kind)
			rewrite(t, dir, tc.file, tc.edit(t))
			rep, err := Check(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() {
				t.Fatal("the edited bundle stands")
			}
			if tc.metric == "" {
				if rep.Differences[0].File != tc.file {
					t.Fatalf("differences %v, want one naming %s", rep.Differences, tc.file)
				}
				return
			}
			found := false
			for _, d := range rep.Differences {
				if d.File == tc.file && d.Metric == tc.metric && d.Claimed == tc.claim {
					found = true
					if d.Recomputed == d.Claimed {
						t.Errorf("difference without a difference: %v", d)
					}
				}
			}
			if !found {
				t.Fatalf("differences %v, want %s %s claimed %s", rep.Differences, tc.file, tc.metric, tc.claim)
			}
		})
	}
}

func TestMissingAndUnreadable(t *testing.T) {
	t.Run("a derived file left out", func(t *testing.T) {
		dir := bundletest.Copy(t, bundletest.MLPerf)
		os.Remove(filepath.Join(dir, bundle.SummaryFile))
		fixManifest(t, dir)
		rep, err := Check(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK() || rep.Differences[0].File != bundle.SummaryFile || rep.Differences[0].Claimed != "absent" {
			t.Fatalf("differences %v", rep.Differences)
		}
	})
	t.Run("a flipped byte in the records", func(t *testing.T) {
		dir := bundletest.Copy(t, bundletest.MLPerf)
		p := filepath.Join(dir, "records.parquet")
		b, _ := os.ReadFile(p)
		b[len(b)/2] ^= 1
		os.WriteFile(p, b, 0o644)
		var de *bundle.DigestError
		if _, err := Check(dir, Options{}); !errors.As(err, &de) {
			t.Fatalf("Check = %v, want a *bundle.DigestError", err)
		}
	})
	t.Run("the work directory is the bundle", func(t *testing.T) {
		dir := bundletest.Copy(t, bundletest.MLPerf)
		if _, err := Check(dir, Options{WorkDir: dir}); err == nil {
			t.Fatal("regenerated over the bundle itself")
		}
	})
	t.Run("another generator compares JSON results only", func(t *testing.T) {
		dir := bundletest.Copy(t, bundletest.MLPerf)
		rep, err := Check(dir, Options{Version: "9.9.9"})
		if err != nil {
			t.Fatal(err)
		}
		if rep.SameVersion || len(rep.Compared) != 1 || rep.Compared[0] != bundle.ResultFile {
			t.Fatalf("%+v", rep)
		}
	})
}

// TestOtherGeneratorUnclaimed: a metric that this version derives but an
// older aimeter did not write is no claim of the bundle (an upload of an
// older version must not be flagged for it), while a claimed metric that
// differs stays a difference whatever the generator.
func TestOtherGeneratorUnclaimed(t *testing.T) {
	edit := func(t *testing.T, f func(doc map[string]any)) string {
		dir := bundletest.Copy(t, bundletest.MLPerf)
		p := filepath.Join(dir, bundle.ResultFile)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		f(doc)
		data, _ = json.MarshalIndent(doc, "", "  ")
		os.WriteFile(p, data, 0o644)
		fixManifest(t, dir)
		return dir
	}
	dropped := func(doc map[string]any) { delete(doc["latency_ns"].(map[string]any), "p99") }
	for _, tc := range []struct {
		name, version string
		edit          func(map[string]any)
		ok            bool
		why           string
	}{
		{"older generator, metric missing", "9.9.9", dropped, true, "the older version did not derive it: not a claim"},
		{"same generator, metric missing", "", dropped, false, "this version writes it, so leaving it out is a difference"},
		{"older generator, metric edited", "9.9.9", func(doc map[string]any) { doc["latency_ns"].(map[string]any)["p99"] = 1 }, false, "a claimed value the records do not support"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Check(edit(t, tc.edit), Options{Version: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() != tc.ok {
				t.Fatalf("OK = %v, want %v (%s); differences %v", rep.OK(), tc.ok, tc.why, rep.Differences)
			}
			if tc.ok && !slices.Contains(rep.Unclaimed, bundle.ResultFile+": latency_ns.p99") {
				t.Fatalf("Unclaimed = %v, want it to name latency_ns.p99", rep.Unclaimed)
			}
		})
	}
}
