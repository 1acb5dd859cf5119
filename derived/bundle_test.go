package derived

import (
	"aimeter/bundle"
	"aimeter/loadgen/loadgentest"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/loadgen"
	"aimeter/sut/null"
	"aimeter/sysinfo"
)

func runBundle(t *testing.T, sut loadgen.SUT, s loadgen.Settings) *bundle.Bundle {
	t.Helper()
	res, err := loadgen.Run(context.Background(), sut, null.QSL{Total: 256}, s, &loadgen.Options{SpinWindow: -1})
	if res == nil {
		t.Fatalf("Run: %v", err)
	}
	return &bundle.Bundle{
		Result:  res,
		Version: "test",
		Name:    "round trip",
		System: sysinfo.System{Hostname: "host", OS: "linux", Arch: "amd64", CPU: "cpu", Cores: 2, MemoryBytes: 1 << 30, GoVersion: "go", AimeterVersion: "test",
			Accelerators: []sysinfo.Accelerator{{Vendor: "NVIDIA", Name: "NVIDIA H200", MemoryBytes: 143771 << 20, DriverVersion: "580.159.04", Source: "nvidia-smi"}}},
		Trace: true,
	}
}

// TestRegenerateByteIdentical writes a live run as a bundle, reads it back
// and regenerates every derived file elsewhere: each must equal the file
// the run wrote, byte for byte (the design's promise that every report is a
// function of the raw parts).
func TestRegenerateByteIdentical(t *testing.T) {
	cases := []struct {
		name string
		sut  loadgen.SUT
		s    loadgen.Settings
	}{
		{"SingleStream", null.SUT{}, loadgentest.SmallSettings(loadgen.SingleStream, loadgen.PerformanceOnly)},
		{"MultiStream", null.SUT{}, loadgentest.SmallSettings(loadgen.MultiStream, loadgen.PerformanceOnly)},
		{"Server", null.SUT{}, loadgentest.SmallSettings(loadgen.Server, loadgen.PerformanceOnly)},
		{"Offline", null.SUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)},
		{"Offline with stages and failures", &loadgentest.StagedSUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)},
		{"Server with stages and failures", &loadgentest.StagedSUT{}, loadgentest.SmallSettings(loadgen.Server, loadgen.PerformanceOnly)},
		{"Offline with bytes, nodes, tokens and failures", &loadgentest.WireSUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)},
		{"accuracy mode", null.SUT{}, loadgentest.SmallSettings(loadgen.SingleStream, loadgen.AccuracyOnly)},
		{"submission", null.SUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.SubmissionRun)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := runBundle(t, c.sut, c.s)
			orig := t.TempDir()
			if err := Write(orig, b); err != nil {
				t.Fatal(err)
			}
			back, err := bundle.Read(orig)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.System, b.System) {
				t.Errorf("system read back as %+v, want %+v", back.System, b.System)
			}
			regen := t.TempDir()
			names, err := Regenerate(regen, back)
			if err != nil {
				t.Fatal(err)
			}
			if len(names) < 3 {
				t.Fatalf("regenerated only %v", names)
			}
			for _, name := range names {
				compareFiles(t, filepath.Join(orig, name), filepath.Join(regen, name))
			}
			// The same run written as a version 1 bundle (every per-sample
			// file CSV) and a version 2 bundle (records.parquet, the other
			// per-sample files CSV) regenerates the same derived files.
			for _, version := range []int{1, 2} {
				old := t.TempDir()
				if err := bundle.WriteWith(old, b, Of(b).Files(), bundle.WriteOptions{FormatVersion: version}); err != nil {
					t.Fatal(err)
				}
				backOld, err := bundle.Read(old)
				if err != nil {
					t.Fatal(err)
				}
				if backOld.Manifest.FormatVersion != version {
					t.Fatalf("format version %d, want %d", backOld.Manifest.FormatVersion, version)
				}
				regenOld := t.TempDir()
				namesOld, err := Regenerate(regenOld, backOld)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(namesOld, names) {
					t.Errorf("version %d regenerates %v, version %d %v", version, namesOld, bundle.FormatVersion, names)
				}
				for _, name := range namesOld {
					compareFiles(t, filepath.Join(orig, name), filepath.Join(regenOld, name))
				}
			}
			// Regenerating in place changes nothing, manifest included.
			before := readAll(t, filepath.Join(orig, bundle.ManifestFile))
			if _, err := Regenerate(orig, back); err != nil {
				t.Fatal(err)
			}
			if after := readAll(t, filepath.Join(orig, bundle.ManifestFile)); !bytes.Equal(before, after) {
				t.Errorf("regenerating in place changed the manifest:\n%s\n---\n%s", before, after)
			}
		})
	}
}

func readAll(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func compareFiles(t *testing.T, a, b string) {
	t.Helper()
	x, y := readAll(t, a), readAll(t, b)
	if bytes.Equal(x, y) {
		return
	}
	xl, yl := strings.Split(string(x), "\n"), strings.Split(string(y), "\n")
	for i := 0; i < min(len(xl), len(yl)); i++ {
		if xl[i] != yl[i] {
			t.Errorf("%s: regenerated file differs at line %d:\n run: %.300s\n got: %.300s", filepath.Base(a), i+1, xl[i], yl[i])
			return
		}
	}
	t.Errorf("%s: regenerated file has %d lines, the run's %d", filepath.Base(a), len(yl), len(xl))
}

// TestReadNamesChangedFile: a bundle whose file no longer matches its
// manifest is refused, and the error names the file.
func TestReadNamesChangedFile(t *testing.T) {
	b := runBundle(t, null.SUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
	dir := t.TempDir()
	if err := Write(dir, b); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		file   string
		edit   func(path string) error
		reason string
	}{
		{"edited records", bundle.RecordsFile, func(p string) error {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			recs, err := bundle.ReadRecordsParquet(f)
			f.Close()
			if err != nil {
				return err
			}
			recs[0].Status = loadgen.StatusError
			var buf bytes.Buffer
			if err := bundle.WriteRecordsParquet(&buf, recs, bundle.RecordWriterOptions{}); err != nil {
				return err
			}
			return os.WriteFile(p, buf.Bytes(), 0o644)
		}, "a changed status must not pass as the run's own"},
		{"truncated summary", bundle.SummaryFile, func(p string) error { return os.Truncate(p, 10) }, "derived files are checked too"},
		{"removed events", bundle.EventsFile, os.Remove, "a missing raw part is named"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			copyDir(t, dir, d)
			if err := c.edit(filepath.Join(d, c.file)); err != nil {
				t.Fatal(err)
			}
			_, err := bundle.Read(d)
			var de *bundle.DigestError
			if !errors.As(err, &de) || de.Name != c.file || !strings.Contains(err.Error(), c.file) {
				t.Fatalf("%s: bundle.Read = %v, want a bundle.DigestError naming %s", c.reason, err, c.file)
			}
			if _, err := bundle.ReadWith(d, bundle.ReadOptions{SkipVerify: true}); c.file != bundle.EventsFile && err != nil {
				t.Errorf("SkipVerify: %v", err)
			}
		})
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		data := readAll(t, filepath.Join(from, e.Name()))
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadLegacyDirectory: a run directory written before bundles existed
// says which version wrote it and what is missing.
func TestReadLegacyDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, bundle.SettingsFile), []byte(`{"version": "0.3.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := bundle.Read(dir)
	if err == nil || !strings.Contains(err.Error(), "aimeter 0.3.0") || !strings.Contains(err.Error(), bundle.EventsFile) {
		t.Fatalf("bundle.Read = %v, want the writing version and the missing files named", err)
	}
	_, err = bundle.Read(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "not a run bundle") {
		t.Fatalf("bundle.Read of an empty directory = %v", err)
	}
}

// TestFileModes: every file of a bundle is 0644, whatever the umask's
// CreateTemp default (0600).
func TestFileModes(t *testing.T) {
	b := runBundle(t, null.SUT{}, loadgentest.SmallSettings(loadgen.SingleStream, loadgen.PerformanceOnly))
	dir := t.TempDir()
	if err := Write(dir, b); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != bundle.FileMode {
			t.Errorf("%s: mode %v, want %v", e.Name(), fi.Mode().Perm(), os.FileMode(bundle.FileMode))
		}
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
	_ = fmt.Sprint
	_ = time.Second
}

// TestSampleDataRoundTrip: bytes, nodes, the error table and token times
// survive Write and bundle.Read, and a run without them writes none of their
// files.
func TestSampleDataRoundTrip(t *testing.T) {
	b := runBundle(t, &loadgentest.WireSUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
	dir := t.TempDir()
	if err := Write(dir, b); err != nil {
		t.Fatal(err)
	}
	back, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Collect(b.Result.Records())
	got := slices.Collect(back.Result.Records())
	if !slices.Equal(want, got) {
		t.Fatalf("records differ after the round trip (%d and %d)", len(want), len(got))
	}
	if !reflect.DeepEqual(b.Result.Errors, back.Result.Errors) || len(back.Result.Errors) != 3 {
		t.Errorf("error table %v, want %v (three distinct failures)", back.Result.Errors, b.Result.Errors)
	}
	type trace struct {
		seq   uint64
		times string
	}
	collect := func(r *loadgen.Result) []trace {
		var out []trace
		for seq, times := range r.TokenTimes() {
			out = append(out, trace{seq, fmt.Sprint(times)})
		}
		return out
	}
	if w, g := collect(b.Result), collect(back.Result); !slices.Equal(w, g) || len(w) == 0 {
		t.Errorf("token times: %d traces read, %d written", len(g), len(w))
	}
	if e, ok := back.Result.ErrorOf(got[10]); !ok || e.Category != "http_5xx" || e.Code != 501 {
		t.Errorf("the 11th sample's error = %v, want category http_5xx, code 501", e)
	}

	plain := runBundle(t, null.SUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
	pdir := t.TempDir()
	if err := Write(pdir, plain); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{bundle.SamplesFile, bundle.ErrorsFile, bundle.TokensFile} {
		if _, err := os.Stat(filepath.Join(pdir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a run without per-sample data wrote %s", name)
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("a run with per-sample data lacks %s", name)
		}
	}
}

// TestHostLoadRoundTrip writes a bundle with the machine's load and reads
// it back: the load survives, and a bundle without one reads back without.
func TestHostLoadRoundTrip(t *testing.T) {
	for _, load := range []*sysinfo.Load{
		{CPUs: 2, WallSeconds: 20.5, SelfCPUSeconds: 30.1, OtherCPUSeconds: 19.2, StealSeconds: 0.3},
		nil,
	} {
		b := runBundle(t, null.SUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
		b.HostLoad = load
		dir := t.TempDir()
		if err := Write(dir, b); err != nil {
			t.Fatal(err)
		}
		back, err := bundle.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.HostLoad, load) {
			t.Errorf("host load %+v read back as %+v", load, back.HostLoad)
		}
		if meta := string(readAll(t, filepath.Join(dir, bundle.RunFile))); (load != nil) != strings.Contains(meta, `"host_load"`) {
			t.Errorf("run.json of a bundle with host load %v:\n%s", load, meta)
		}
		// report.html tells the load, and regenerating it from the bundle
		// read back gives the same bytes.
		if html := string(readAll(t, filepath.Join(dir, bundle.ReportFile))); (load != nil) != strings.Contains(html, "other processes used") {
			t.Errorf("report.html of a bundle with host load %v does not say so", load)
		}
		regen := t.TempDir()
		if _, err := Regenerate(regen, back); err != nil {
			t.Fatal(err)
		}
		compareFiles(t, filepath.Join(dir, bundle.ReportFile), filepath.Join(regen, bundle.ReportFile))
	}
}

// TestReadInterruptedRunWithoutRecords: a run interrupted before it issued
// anything is a correct bundle: it reads back, regenerates byte for byte,
// and its summary labels the target percentile (it printed "0.0th").
func TestReadInterruptedRunWithoutRecords(t *testing.T) {
	for _, sc := range []loadgen.Scenario{loadgen.SingleStream, loadgen.MultiStream, loadgen.Server, loadgen.Offline} {
		t.Run(sc.String(), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			res, _ := loadgen.Run(ctx, null.SUT{}, null.QSL{Total: 256}, loadgentest.SmallSettings(sc, loadgen.PerformanceOnly), &loadgen.Options{SpinWindow: -1})
			if res == nil || res.RecordCount() != 0 {
				t.Fatalf("want a result without records, got %v", res)
			}
			orig := t.TempDir()
			if err := Write(orig, &bundle.Bundle{Result: res, Version: "test"}); err != nil {
				t.Fatal(err)
			}
			back, err := bundle.Read(orig)
			if err != nil {
				t.Fatalf("an interrupted run must be re-reported: %v", err)
			}
			regen := t.TempDir()
			names, err := Regenerate(regen, back)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range names {
				compareFiles(t, filepath.Join(orig, name), filepath.Join(regen, name))
			}
			summary := string(readAll(t, filepath.Join(orig, bundle.SummaryFile)))
			if unlabelled.MatchString(summary) {
				t.Errorf("the summary of an empty pass has unlabelled percentiles:\n%s", summary)
			}
			if name, _ := back.Result.Summary.Metric(); strings.HasPrefix(name, "0.0th") {
				t.Errorf("Metric() = %q", name)
			}
		})
	}
}

// unlabelled matches a summary line of a percentile labelled 0.
var unlabelled = regexp.MustCompile(`(?m)^0\.0+(th)? percentile`)
