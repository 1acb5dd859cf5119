//go:build unix

package mllog

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"aimeter/train"
)

// genStream writes about size bytes of a long 8-rank run's output: per
// step, each rank prints a progress line, and every 8th step an MLLOG
// record (epoch, power, utilisation or eval keys in turn), with rank
// prefixes as srun --label writes them.
func genStream(w io.Writer, size int64) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	var n int64
	t := int64(1_700_000_000_000)
	keys := []string{
		`"key": "epoch_start", "value": null, "metadata": {"file": "train.py", "lineno": 210, "epoch_num": %d}`,
		`"key": "power_reading", "value": 412.5, "metadata": {"file": "power.py", "lineno": 30, "node": "node3"}`,
		`"key": "aimeter_utilization", "value": 0.93, "metadata": {"chip": 2}`,
		`"key": "epoch_stop", "value": null, "metadata": {"file": "train.py", "lineno": 250, "epoch_num": %d, "samples_count": 1281167}`,
		`"key": "eval_start", "value": null, "metadata": {"file": "train.py", "lineno": 260, "epoch_num": %d}`,
		`"key": "eval_stop", "value": null, "metadata": {"file": "train.py", "lineno": 270, "epoch_num": %d}`,
		`"key": "eval_accuracy", "value": 0.7432, "metadata": {"file": "train.py", "lineno": 271, "epoch_num": %d}`,
	}
	for step := 0; n < size; step++ {
		t += 7
		rank := step % 8
		var line string
		if step%8 == 7 {
			k := keys[(step/8)%len(keys)]
			if bytes.Contains([]byte(k), []byte("%d")) {
				k = fmt.Sprintf(k, step/64)
			}
			line = strconv.Itoa(rank) + `: :::MLLOG {"namespace": "", "time_ms": ` + strconv.FormatInt(t, 10) + `, "event_type": "POINT_IN_TIME", ` + k + "}\n"
		} else {
			line = fmt.Sprintf("%d: step %d loss %.4f lr 0.0125 throughput 2841.7 img/s\n", rank, step, 1/float64(step+1))
		}
		m, err := bw.WriteString(line)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// BenchmarkParse parses a generated 100 MB multi-rank stream; it reports
// MB/s and allocations per line.
func BenchmarkParse(b *testing.B) {
	var buf bytes.Buffer
	if _, err := genStream(&buf, 100<<20); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	lines := bytes.Count(data, []byte("\n"))
	records := bytes.Count(data, []byte(Marker))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for b.Loop() {
		n := 0
		if _, err := Parse(bytes.NewReader(data), Options{}, func(train.Event) { n++ }); err != nil || n == 0 {
			b.Fatal(err, n)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N)/float64(lines), "allocs/line")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N)/float64(records), "allocs/record")
}

// TestParseGigabyte writes a 1 GB stream to a temporary file and parses
// it back, logging MB/s and the process's peak RSS: the figure for the
// closing note. It runs only when AIMETER_MLLOG_GB is set (it takes
// tens of seconds and a gigabyte of disk).
func TestParseGigabyte(t *testing.T) {
	if os.Getenv("AIMETER_MLLOG_GB") == "" {
		t.Skip("set AIMETER_MLLOG_GB=1 to measure a 1 GB stream")
	}
	p := filepath.Join(t.TempDir(), "big.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	size, err := genStream(f, 1<<30)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	f, err = os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	var events int64
	st, err := Parse(f, Options{}, func(train.Event) { events++ })
	el := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	var ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	if st.Bytes != size || st.Malformed != 0 || events == 0 {
		t.Fatalf("bytes %d of %d, malformed %d, events %d", st.Bytes, size, st.Malformed, events)
	}
	t.Logf("%d MB, %d lines, %d events in %v: %.0f MB/s; peak RSS %d MB (before parsing %d MB)",
		size>>20, st.Lines, events, el.Round(time.Millisecond), float64(size)/1e6/el.Seconds(), ru1.Maxrss>>10, ru0.Maxrss>>10)
}
