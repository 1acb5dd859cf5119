package dataset

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"strings"
	"testing"
)

func idxBytes(typ byte, dims []uint32, data []byte) []byte {
	b := []byte{0, 0, typ, byte(len(dims))}
	for _, d := range dims {
		b = append(b, byte(d>>24), byte(d>>16), byte(d>>8), byte(d))
	}
	return append(b, data...)
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func TestReadIDX(t *testing.T) {
	good := idxBytes(8, []uint32{2, 3}, []byte{1, 2, 3, 4, 5, 6})
	tests := []struct {
		name, reason string
		in           []byte
		wantErr      string // "" = success
	}{
		{"plain", "a 2×3 array of bytes", good, ""},
		{"gzip", "the Debian files are gzip-compressed", gz(good), ""},
		{"bad magic", "the first two bytes must be zero", append([]byte{1}, good[1:]...), "magic"},
		{"float type", "only unsigned bytes (0x08) are read", idxBytes(0x0D, []uint32{2}, make([]byte, 8)), "element type"},
		{"no dims", "zero dimensions is not an array", idxBytes(8, nil, nil), "dimensions"},
		{"zero dim", "a zero dimension announces nothing", idxBytes(8, []uint32{0}, nil), "implausible"},
		{"huge dims", "the header must not make us allocate 2^64 bytes", idxBytes(8, []uint32{1 << 31, 1 << 31}, nil), "implausible"},
		{"truncated", "fewer data bytes than the header says", good[:len(good)-2], "truncated"},
		{"trailing", "more data bytes than the header says", append(good, 9), "trailing"},
		{"empty", "no header at all", nil, "header"},
		{"broken gzip", "a gzip stream cut short", gz(good)[:20], ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx, err := ReadIDX(bytes.NewReader(tc.in))
			if tc.name == "broken gzip" {
				if err == nil {
					t.Fatal("a cut gzip stream must fail")
				}
				return
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("%s: %v", tc.reason, err)
				}
				if len(idx.Dims) != 2 || idx.Dims[0] != 2 || idx.Dims[1] != 3 || !bytes.Equal(idx.Data, good[12:]) {
					t.Fatalf("%s: got %+v", tc.reason, idx)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("%s: error %v, want one mentioning %q", tc.reason, err, tc.wantErr)
			}
		})
	}
}

func FuzzReadIDX(f *testing.F) {
	f.Add(idxBytes(8, []uint32{2, 3}, []byte{1, 2, 3, 4, 5, 6}))
	f.Add(gz(idxBytes(8, []uint32{4}, []byte{1, 2, 3, 4})))
	f.Add([]byte{0, 0, 8, 3, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		idx, err := ReadIDX(bytes.NewReader(b))
		if err != nil {
			return
		}
		n := 1
		for _, d := range idx.Dims {
			n *= d
		}
		if n != len(idx.Data) {
			t.Fatalf("dims %v but %d bytes", idx.Dims, len(idx.Data))
		}
	})
}

func TestLoadFashionMNISTMissing(t *testing.T) {
	_, err := LoadFashionMNIST(t.TempDir(), Test)
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "apt-get install dataset-fashion-mnist") ||
		!strings.Contains(err.Error(), "t10k-images-idx3-ubyte.gz") {
		t.Fatalf("a missing data set must name the file and the fix: %v", err)
	}
}

func TestLoadFashionMNISTCorrupt(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/t10k-images-idx3-ubyte.gz", gz(idxBytes(8, []uint32{2, 28, 28}, make([]byte, 100))), 0o644)
	_, err := LoadFashionMNIST(dir, Test)
	if err == nil || errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "t10k-images-idx3-ubyte.gz") || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("a truncated file must be reported as corrupt, naming it: %v", err)
	}
}

func TestLoadFashionMNIST(t *testing.T) {
	if _, err := os.Stat(FashionMNISTDir); err != nil {
		t.Skip("dataset-fashion-mnist is not installed (.ci/run installs it)")
	}
	for _, tc := range []struct {
		split Split
		n     int
		first uint8
	}{{Train, 60000, 9}, {Test, 10000, 9}} {
		s, err := LoadFashionMNIST(FashionMNISTDir, tc.split)
		if err != nil {
			t.Fatal(err)
		}
		// Both splits of Fashion-MNIST start with an ankle boot (label 9).
		if s.Len() != tc.n || s.Rows != 28 || s.Cols != 28 || s.Labels[0] != tc.first {
			t.Errorf("%s: %d images %d×%d, first label %d", tc.split, s.Len(), s.Rows, s.Cols, s.Labels[0])
		}
	}
}

func TestSyntheticIsDeterministicAndBalanced(t *testing.T) {
	a, b, c := Synthetic(2000, 7), Synthetic(2000, 7), Synthetic(2000, 8)
	if !bytes.Equal(a.Pixels, b.Pixels) || !bytes.Equal(a.Labels, b.Labels) {
		t.Fatal("the same seed must give the same set")
	}
	if bytes.Equal(a.Pixels, c.Pixels) {
		t.Fatal("another seed must give another set")
	}
	counts := make([]int, len(SyntheticClasses))
	for i, l := range a.Labels {
		counts[l]++
		if !strings.Contains(a.Captions[i], SyntheticClasses[l]) || len(strings.Fields(a.Captions[i])) <= 3 {
			t.Fatalf("caption %q must contain the class keyword and more words than keywords (GB-7.4.4.1-b)", a.Captions[i])
		}
	}
	for k, n := range counts {
		if n < 150 || n > 250 {
			t.Errorf("class %d has %d of 2000 samples", k, n)
		}
	}
	// Each class must draw something: the mean ink of a class differs from the background.
	for i := 0; i < 10; i++ {
		var ink int
		for _, p := range a.Image(i) {
			if p > 128 {
				ink++
			}
		}
		if ink < 10 {
			t.Errorf("image %d (%s) has only %d bright pixels", i, SyntheticClasses[a.Labels[i]], ink)
		}
	}
}

func TestQSLLoadsAndUnloads(t *testing.T) {
	set := Synthetic(10, 1)
	q := NewQSL(set, 0)
	if q.TotalSampleCount() != 10 || q.PerformanceSampleCount() != 10 {
		t.Fatalf("counts %d %d", q.TotalSampleCount(), q.PerformanceSampleCount())
	}
	if _, ok := q.Sample(3); ok {
		t.Fatal("a sample is not available before it is loaded")
	}
	// A MultiStream set may list a sample twice (padding).
	if err := q.LoadSamples([]uint64{3, 5, 3}); err != nil {
		t.Fatal(err)
	}
	px, ok := q.Sample(3)
	if !ok || len(px) != 784 || px[0] != float32(set.Image(3)[0])/255 {
		t.Fatalf("sample 3: ok=%v len=%d", ok, len(px))
	}
	if err := q.UnloadSamples([]uint64{3}); err != nil {
		t.Fatal(err)
	}
	if _, ok := q.Sample(3); !ok {
		t.Fatal("loaded twice, unloaded once: still loaded")
	}
	q.UnloadSamples([]uint64{3, 5})
	if _, ok := q.Sample(3); ok {
		t.Fatal("unloaded samples are gone")
	}
	if err := q.UnloadSamples([]uint64{3}); err == nil {
		t.Fatal("unloading a sample that is not loaded is an error")
	}
	if err := q.LoadSamples([]uint64{10}); err == nil {
		t.Fatal("an index past the set is an error")
	}
}
