package recompute

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/bundle"
	"aimeter/internal/bundletest"
)

// offlineBundle runs the null SUT's Offline scenario with min_query_count q
// (2,200 samples per query) into a directory of t's.
func offlineBundle(t *testing.T, q int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "offline")
	p := benchmark.Plan{OutputDir: dir, Settings: benchmark.Settings{Scenario: "Offline", Set: []string{
		"min_duration=100", "min_query_count=" + itoa(q),
	}}}
	if _, err := benchmark.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return dir
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestEstimateNeedCountsRows(t *testing.T) {
	dir := bundletest.Copy(t, bundletest.MLPerf)
	n, err := EstimateNeed(dir)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := os.ReadFile(filepath.Join(dir, bundle.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Samples struct {
			Issued int64 `json:"issued"`
		} `json:"samples"`
	}
	if err := json.Unmarshal(rb, &res); err != nil {
		t.Fatal(err)
	}
	if want := res.Samples.Issued; want == 0 || n.Records != want {
		t.Errorf("Records = %d, want the bundle's %d", n.Records, want)
	}
	if n.GBT || n.RecordsBytes == 0 {
		t.Errorf("GBT = %v, RecordsBytes = %d: an MLPerf bundle with its records file", n.GBT, n.RecordsBytes)
	}
	if want := NeedBaseBytes + n.Records*NeedBytesPerRecord + n.RecordsBytes*NeedBytesPerRecordsFileByte + n.TableRows*NeedBytesPerTableRow + n.TokenTimes*NeedBytesPerToken + n.FileBytes*NeedBytesPerFileByte; n.Bytes != want {
		t.Errorf("Bytes = %d, want %d", n.Bytes, want)
	}
}

// TestEstimateNeedBadInput: a manifest or footer that lies is an error or
// counts what is on disk, never what it claims.
func TestEstimateNeedBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		edit      func(t *testing.T, dir string)
		wantErr   string
	}{
		{"huge claimed size", "the manifest's byte counts are ignored: sizes come from the files", func(t *testing.T, dir string) {
			p := filepath.Join(dir, bundle.ManifestFile)
			b, _ := os.ReadFile(p)
			var m map[string]any
			json.Unmarshal(b, &m)
			for _, f := range m["files"].([]any) {
				f.(map[string]any)["bytes"] = int64(1) << 62
			}
			b, _ = json.Marshal(m)
			os.WriteFile(p, b, 0o644)
		}, ""},
		{"footer length beyond the file", "a footer length is checked before anything is allocated", func(t *testing.T, dir string) {
			p := filepath.Join(dir, bundle.RecordsFile)
			b, _ := os.ReadFile(p)
			copy(b[len(b)-8:], []byte{0xff, 0xff, 0xff, 0x7f})
			os.WriteFile(p, b, 0o644)
		}, "footer of 2147483647 bytes"},
		{"not Parquet", "a file without PAR1 at its end is refused", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, bundle.RecordsFile), []byte("seq_id,issued\n1,2\n3,4\n"), 0o644)
		}, "does not end in PAR1"},
		{"garbage footer", "a footer that is not Thrift is an error, not a panic", func(t *testing.T, dir string) {
			p := filepath.Join(dir, bundle.RecordsFile)
			b, _ := os.ReadFile(p)
			n := int(b[len(b)-8]) | int(b[len(b)-7])<<8
			for i := len(b) - 8 - n; i < len(b)-8; i++ {
				b[i] = 0xff
			}
			os.WriteFile(p, b, 0o644)
		}, "footer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := bundletest.Copy(t, bundletest.MLPerf)
			tc.edit(t, dir)
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			n, err := EstimateNeed(dir)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
				t.Errorf("%s: EstimateNeed allocated %d bytes", tc.why, got)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("%s: %v", tc.why, err)
				}
				if n.Bytes > 1<<30 {
					t.Errorf("%s: Bytes = %d", tc.why, n.Bytes)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v, want one saying %q", tc.why, err, tc.wantErr)
			}
		})
	}
}

// TestNeedIsNotAnUnderestimate measures the peak of the Go heap while
// Check recomputes an Offline bundle of about 2.2 million records and checks
// that EstimateNeed's figure is at least that. It logs the measured bytes
// per record, from which NeedBytesPerRecord was set.
func TestNeedIsNotAnUnderestimate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs and recomputes a bundle of 2.2 million records")
	}
	dir := offlineBundle(t, 250)
	n, err := EstimateNeed(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n.Records < 100000 {
		t.Fatalf("the bundle has %d records, want a large one", n.Records)
	}
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tk := time.NewTicker(200 * time.Microsecond)
		defer tk.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	rep, err := Check(dir, Options{})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("differences: %v", rep.Differences)
	}
	used := int64(peak - min(base, peak))
	t.Logf("%d records: peak heap %d bytes above the %d before, %.0f bytes per record; estimate %d bytes (%.0f per record)",
		n.Records, used, base, float64(used)/float64(n.Records), n.Bytes, float64(n.Bytes)/float64(n.Records))
	if n.Bytes < used {
		t.Errorf("EstimateNeed says %d bytes, but Check's heap peaked %d bytes above its start", n.Bytes, used)
	}
	runtime.KeepAlive(rep)
}

// TestEstimateNeedGBT: a GB/T test's evaluation copies its records, so
// its estimate carries NeedBytesPerGBTRecord more per record.
func TestEstimateNeedGBT(t *testing.T) {
	n, err := EstimateNeed(bundletest.Copy(t, bundletest.GBT))
	if err != nil {
		t.Fatal(err)
	}
	if !n.GBT || n.Records == 0 {
		t.Fatalf("%+v: want a GB/T bundle with records", n)
	}
	if n.Bytes < NeedBaseBytes+n.Records*(NeedBytesPerRecord+NeedBytesPerGBTRecord) {
		t.Errorf("Bytes = %d leaves out the GB/T copy of %d records", n.Bytes, n.Records)
	}
}
