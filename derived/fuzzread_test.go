package derived

import (
	"aimeter/bundle"
	"aimeter/loadgen/loadgentest"
	"io"
	"os"
	"path/filepath"
	"testing"

	"aimeter/loadgen"
)

// fuzzBundles writes one small real run per scenario, with stage times,
// failures, bytes on the wire and token times among them, and returns
// their directories and the raw files each holds.
func fuzzBundles(f *testing.F) (dirs []string, raw [][]string) {
	sets := []struct {
		sut loadgen.SUT
		sc  loadgen.Scenario
	}{
		{&loadgentest.StagedSUT{}, loadgen.SingleStream},
		{&loadgentest.StagedSUT{}, loadgen.MultiStream},
		{&loadgentest.WireSUT{}, loadgen.Server},
		{&loadgentest.StagedSUT{}, loadgen.Offline},
	}
	for _, s := range sets {
		st := loadgentest.SmallSettings(s.sc, loadgen.PerformanceOnly)
		if s.sc == loadgen.Server {
			st.UseTokenLatencies = true
			st.ServerTTFTLatencyNs, st.ServerTPOTLatencyNs = 1_000_000, 1_000_000
		}
		dir := writeRunDir(f, s.sut, st)
		if _, err := bundle.Read(dir); err != nil {
			f.Fatalf("the %v seed bundle does not read back: %v", s.sc, err)
		}
		m, err := bundle.ReadManifest(dir)
		if err != nil {
			f.Fatal(err)
		}
		var names []string
		for _, e := range m.Files {
			if e.Role == bundle.Raw {
				names = append(names, e.Name)
			}
		}
		dirs, raw = append(dirs, dir), append(raw, names)
	}
	return dirs, raw
}

// FuzzRead writes fuzzed bytes over one raw file of a real bundle (one per
// scenario); ReadWith(SkipVerify) must return a bundle or an error, never
// panic, and every derived file of a bundle it returns must be written
// without a panic. The seeds are the real files themselves.
func FuzzRead(f *testing.F) {
	dirs, raw := fuzzBundles(f)
	for i, dir := range dirs {
		for j, name := range raw[i] {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), uint8(j), data)
		}
	}
	f.Fuzz(func(t *testing.T, which, file uint8, data []byte) {
		i := int(which) % len(dirs)
		name := raw[i][int(file)%len(raw[i])]
		d := t.TempDir()
		copyDir(t, dirs[i], d)
		if err := os.WriteFile(filepath.Join(d, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := bundle.ReadWith(d, bundle.ReadOptions{SkipVerify: true})
		if err != nil {
			return
		}
		for _, d := range Of(b).Files() {
			if d.For == nil || d.For(b) {
				_ = d.Write(io.Discard, b) // an error is fine; a panic is not
			}
		}
	})
}
