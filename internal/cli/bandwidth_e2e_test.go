package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"aimeter/bandwidth"
	"aimeter/derived"
	"aimeter/serve"
)

// bodyTap is aimeter serve kserve behind a handler that counts the bytes of
// every inference request as it came over the wire and as decoded from its
// Content-Encoding.
type bodyTap struct {
	mu            sync.Mutex
	wire, decoded int64
	gzipped, n    int
}

func (b *bodyTap) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.wire, b.decoded, b.gzipped, b.n = 0, 0, 0, 0
}

func (b *bodyTap) handler(k http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			k.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		plain := body
		gz := r.Header.Get("Content-Encoding") == "gzip"
		if gz {
			if zr, err := gzip.NewReader(bytes.NewReader(body)); err == nil {
				plain, _ = io.ReadAll(zr)
			}
		}
		b.mu.Lock()
		b.n++
		b.wire += int64(len(body))
		b.decoded += int64(len(plain))
		if gz {
			b.gzipped++
		}
		b.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		k.ServeHTTP(w, r)
	})
}

// TestBandwidthDocCommands runs every command of docs/bandwidth.md, as
// written but for the server's address, against aimeter serve kserve (its
// null model: every request decoded and checked, answered at once) behind
// a tap that measures the request bodies: each run's bundle must say the
// bytes the server received (the records' wire sizes, bandwidth.json's
// carried ingress), and with lossless compression the payload sizes before
// compression must sum to what the server decoded. The console, aimeter
// check and the refusals must say what the doc shows.
func TestBandwidthDocCommands(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "bandwidth.md"))
	if err != nil {
		t.Fatal(err)
	}
	useUntrainedWeights(t, t.TempDir())
	k, err := serve.NewKServe(serve.KServeOptions{NullModel: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	tap := &bodyTap{}
	hs := httptest.NewServer(tap.handler(k))
	defer hs.Close()
	dir := t.TempDir()
	t.Chdir(dir) // the doc's --output-dir are relative
	cmds := markdownCommands(string(md))
	if len(cmds) != 7 {
		t.Fatalf("%d commands in docs/bandwidth.md; this test knows 7", len(cmds))
	}
	written := map[string][]byte{} // bandwidth.json of each run, by --output-dir
	for _, c := range cmds {
		key := c.key()
		if c.args[0] == "serve" {
			continue // this test's own server stands in for it
		}
		args := slices.Clone(c.args)
		for i, a := range args {
			if a == "http://127.0.0.1:8000" {
				args[i] = hs.URL
			}
		}
		if args[0] == "run" {
			args = append(args, "-q")
		}
		tap.reset()
		res := runCLI(t, dir, args...)
		switch {
		case args[0] == "run" && slices.Contains(args, "--output-dir"):
			if res.code != ExitOK && res.code != ExitInvalid {
				t.Fatalf("%s: %s", key, res)
			}
			out := filepath.Join(dir, args[slices.Index(args, "--output-dir")+1])
			lossless := slices.Contains(args, "lossless")
			checkCarried(t, key, out, tap, lossless)
			written[filepath.Base(out)], _ = os.ReadFile(filepath.Join(out, bandwidth.File))
			for _, want := range []string{"Bandwidth (ResNet50-v1.5 at ", "fp32; NIC speed unknown): FAIL", "the inputs sent are smaller than the benchmark's", "Egress  : required > 0"} {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("%s: the console lacks %q:\n%s", key, want, res.stdout)
				}
			}
			if got := strings.Contains(res.stdout, "Compression lossless (gzip): "); got != lossless {
				t.Errorf("%s: compression line %v:\n%s", key, got, res.stdout)
			}
		case args[0] == "run":
			if res.code != ExitUsage {
				t.Errorf("%s: %s, want a refusal (exit 2)", key, res)
			}
			want := "no original compressed form"
			if slices.Contains(args, "gptj") {
				want = "aimeter: --compression: compression lossless is not allowed for GPT-J: the network division's rules allow none (--model gptj)"
			}
			if !strings.Contains(res.stderr, want) || !strings.Contains(string(md), strings.SplitN(want, "\n", 2)[0]) && slices.Contains(args, "gptj") {
				t.Errorf("%s: stderr lacks %q (or the doc does):\n%s", key, want, res.stderr)
			}
		case args[0] == "check":
			if res.code != ExitInvalid || !strings.Contains(res.stdout, "bandwidth ingress of ResNet50-v1.5") || !strings.Contains(res.stdout, "(bandwidth)") {
				t.Errorf("%s: %s, want the bandwidth failure flagged (exit 3)", key, res)
			}
		case args[0] == "report":
			if res.code != ExitOK && res.code != ExitInvalid || !strings.Contains(res.stderr, "bandwidth.json, report.html") {
				t.Errorf("%s: %s", key, res)
			}
			// Derived from the bundle alone: regenerated, the same bytes.
			again, err := os.ReadFile(filepath.Join(dir, args[1], bandwidth.File))
			if err != nil || !bytes.Equal(again, written[args[1]]) {
				t.Errorf("%s: bandwidth.json regenerated differs from the run's (%v)", key, err)
			}
		default:
			t.Errorf("%s: a command this test does not know", key)
		}
	}
}

// checkCarried compares a run's bundle with what the tap measured.
func checkCarried(t *testing.T, key, dir string, tap *bodyTap, lossless bool) {
	t.Helper()
	b, err := derived.Read(dir)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	var sent int64
	n := 0
	for r := range b.Result.Records() {
		sent += r.RequestBytes
		n++
	}
	raw, err := os.ReadFile(filepath.Join(dir, bandwidth.File))
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	var rep bandwidth.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	tap.mu.Lock()
	defer tap.mu.Unlock()
	if tap.n != n || tap.wire != sent || rep.Carried.Ingress.TotalBytes != sent {
		t.Errorf("%s: the server received %d requests of %d bytes; the records hold %d samples of %d bytes; bandwidth.json says %d",
			key, tap.n, tap.wire, n, sent, rep.Carried.Ingress.TotalBytes)
	}
	decl := bandwidth.Part.Value(b)
	if decl == nil {
		t.Fatalf("%s: no %s", key, bandwidth.InputFile)
	}
	if !lossless {
		if tap.gzipped != 0 || rep.Compression != bandwidth.None || rep.Carried.Ingress.UncompressedBytes != 0 || decl.PayloadBytes != nil {
			t.Errorf("%s: no compression, yet %d gzipped requests, %+v", key, tap.gzipped, rep.Carried.Ingress)
		}
		if rep.Check == nil || rep.Check.Ingress.Wire != bandwidth.Fail {
			t.Errorf("%s: 3.3 kB samples as ResNet-50's 602 kB: %+v", key, rep.Check)
		}
		return
	}
	if tap.gzipped != n || rep.Codec != "gzip" {
		t.Errorf("%s: %d of %d requests gzipped, codec %q", key, tap.gzipped, n, rep.Codec)
	}
	if rep.Carried.Ingress.UncompressedBytes != tap.decoded {
		t.Errorf("%s: payloads before compression sum to %d; the server decoded %d", key, rep.Carried.Ingress.UncompressedBytes, tap.decoded)
	}
	var before, after int64
	for r := range b.Result.Records() {
		before += decl.PayloadBytes[r.SampleIndex]
		after += decl.WireBytes[r.SampleIndex]
	}
	if before != tap.decoded || after != tap.wire || after >= before {
		t.Errorf("%s: the recorded payloads %d → %d bytes; the server got %d decoding to %d", key, before, after, tap.wire, tap.decoded)
	}
}
