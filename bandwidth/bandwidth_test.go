package bandwidth

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"aimeter/loadgen"
)

func dt(t *testing.T, in, out string) DTypes {
	t.Helper()
	d, err := ParseDTypes(in, out)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRequireTable works every row of the rules' tables by hand, both
// directions, with several data type sizes.
func TestRequireTable(t *testing.T) {
	for _, c := range []struct {
		why            string
		bench          string
		tput           float64
		in, out        string
		ingress        float64
		egress         float64
		egressPositive bool
	}{
		{"ResNet-50 fp32: 100 × 150528 × 4", "resnet50", 100, "fp32", "", 60_211_200, 0, true},
		{"ResNet-50 int8: 100 × 150528 × 1", "resnet50", 100, "int8", "", 15_052_800, 0, true},
		{"RetinaNet fp16: 10 × 1920000 × 2", "retinanet", 10, "fp16", "", 38_400_000, 0, true},
		{"RetinaNet fp32 by the rules' name: 1 × 1920000 × 4", "Retinanet", 1, "fp32", "", 7_680_000, 0, true},
		{"3D U-Net fp32 both ways: 2 × 32944795 × 4", "3d-unet", 2, "fp32", "", 263_558_360, 263_558_360, false},
		{"3D U-Net fp32 in, int8 out: egress 2 × 32944795 × 1", "3d-unet-99.9", 2, "fp32", "int8", 263_558_360, 65_889_590, false},
		{"BERT int32: 1000 × 1152 × 4", "bert-99", 1000, "int32", "", 4_608_000, 0, true},
		{"BERT int64: 1000 × 1152 × 8", "bert", 1000, "int64", "", 9_216_000, 0, true},
		{"GPT-J int64: 5 × 2048 × 8", "gptj", 5, "int64", "", 81_920, 0, true},
		{"Llama 2 int32: 10 × 1024 × 4 (egress not in the table: negligible)", "llama2-70b", 10, "int32", "", 40_960, 0, true},
		{"Mixtral int32: 3 × 2048 × 4 (egress negligible)", "mixtral-8x7b", 3, "int32", "", 24_576, 0, true},
		{"DLRMv2 one type fp32 for both: 1000 × 270 × (13·4 + 26·4)", "dlrm-v2", 1000, "fp32", "", 42_120_000, 0, true},
		{"DLRMv2 fp16 numerical, int64 categorical: 1000 × 270 × (13·2 + 26·8)", "dlrm-v2", 1000, "fp16,int64", "", 63_180_000, 0, true},
		{"SDXL int32 prompt in, fp16 image out: 2 × 77 × 4 and 2 × 3145728 × 2", "stable-diffusion-xl", 2, "int32", "fp16", 616, 12_582_912, false},
		{"SDXL fp32 both: 1 × 77 × 4 and 1 × 3145728 × 4", "sdxl", 1, "fp32", "", 308, 12_582_912, false},
		{"no throughput, no bandwidth", "resnet50", 0, "fp32", "", 0, 0, true},
	} {
		r, err := Require(c.bench, c.tput, dt(t, c.in, c.out))
		if err != nil {
			t.Errorf("%s: %v", c.why, err)
			continue
		}
		if r.Ingress != c.ingress || r.Egress != c.egress || r.EgressPositive != c.egressPositive {
			t.Errorf("%s: ingress %v egress %v (> 0 only: %v), want %v %v %v", c.why, r.Ingress, r.Egress, r.EgressPositive, c.ingress, c.egress, c.egressPositive)
		}
		if c.tput > 0 && float64(r.IngressBytesPerSample)*c.tput != r.Ingress {
			t.Errorf("%s: per sample %d × %v ≠ %v", c.why, r.IngressBytesPerSample, c.tput, r.Ingress)
		}
	}
}

func TestRequireErrors(t *testing.T) {
	_, err := Require("whisper", 10, DTypes{Input: 4})
	if !errors.Is(err, ErrUnknownBenchmark) || !strings.Contains(err.Error(), `"whisper"`) || !strings.Contains(err.Error(), "resnet50, retinanet, 3d-unet") {
		t.Errorf("unknown benchmark: %v, want it named with the list", err)
	}
	if _, err := Require("resnet50", 10, DTypes{}); err == nil || !strings.Contains(err.Error(), "--input-dtype") {
		t.Errorf("no data type: %v", err)
	}
	if _, err := Require("resnet50", -1, DTypes{Input: 1}); err == nil {
		t.Error("negative throughput accepted")
	}
}

func TestParseDTypes(t *testing.T) {
	for _, c := range []struct {
		in, out string
		want    DTypes
		err     string
	}{
		{"FP32", "", DTypes{Input: 4, Names: "FP32"}, ""},
		{"fp16,int64", "", DTypes{Input: 2, Input2: 8, Names: "fp16,int64"}, ""},
		{"int8", "bf16", DTypes{Input: 1, Output: 2, Names: "int8 → bf16"}, ""},
		{"", "", DTypes{}, ""},
		{"fp33", "", DTypes{}, `"fp33"`},
		{"fp32,int8,int8", "", DTypes{}, "two separated by a comma"},
		{"fp32", "half", DTypes{}, `"half"`},
	} {
		got, err := ParseDTypes(c.in, c.out)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q %q: error %v, want one with %s", c.in, c.out, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q %q: %+v %v, want %+v", c.in, c.out, got, err, c.want)
		}
	}
}

// TestCompressionRules: the network division's table, per benchmark.
func TestCompressionRules(t *testing.T) {
	for _, c := range []struct {
		bench string
		comp  Compression
		ok    bool
		why   string
	}{
		{"resnet50", Original, true, "JPEG is ImageNet's own compression"},
		{"retinanet", Lossless, true, "options 1–3"},
		{"3d-unet", Original, false, "no original compression for KiTS"},
		{"3d-unet", Lossless, true, "lossless allowed"},
		{"bert", Lossless, true, "lossless allowed"},
		{"gptj", Lossless, false, "no compression allowed"},
		{"mixtral-8x7b", Lossless, false, "no compression allowed"},
		{"llama2-70b", Lossless, false, "the row gives no option"},
		{"dlrm-v2", Lossless, true, "any lossless compression"},
		{"stable-diffusion-xl", Lossless, false, "no compression allowed"},
		{"gptj", None, true, "none is always allowed"},
		{"fashion-mlp", Lossless, true, "not a benchmark of the rules: nothing to forbid"},
	} {
		err := CheckCompression(c.bench, c.comp)
		if (err == nil) != c.ok {
			t.Errorf("%s %s (%s): %v", c.bench, c.comp, c.why, err)
		}
		if err != nil && !strings.Contains(err.Error(), "not allowed for") {
			t.Errorf("%s: error %v does not name the rule", c.bench, err)
		}
	}
	if _, err := ParseCompression("zstd"); err == nil {
		t.Error("zstd accepted as a compression option")
	}
}

func rec(issued, done, req, resp int64, idx uint64) loadgen.Record {
	return loadgen.Record{IssuedNs: issued, CompletedNs: done, RequestBytes: req, ResponseBytes: resp, SampleIndex: idx}
}

// TestCarriedOf: mean over the span and the busiest 1 s window, by hand.
func TestCarriedOf(t *testing.T) {
	recs := []loadgen.Record{
		rec(0, 100e6, 1000, 10, 0),
		rec(500e6, 600e6, 1000, 10, 1),
		rec(900e6, 1_000e6, 1000, 10, 2),        // ingress window [0,1s) holds 3000
		rec(1_500e6, 2_500e6, 4000, 10, 3),      // ingress window [0.9s,1.9s) holds 5000: the peak
		rec(3_000e6, loadgen.NoTime, 500, 0, 4), // lost: its request counts, span ends at its issue
	}
	raw := func(i uint64) int64 { return 2 * int64(i+1) }
	c := CarriedOf(slices.Values(recs), CarriedOptions{Uncompressed: raw})
	if !c.Measured || c.SpanNs != 3e9 {
		t.Fatalf("measured %v span %d", c.Measured, c.SpanNs)
	}
	if c.Ingress.TotalBytes != 7500 || c.Ingress.Samples != 5 || c.Ingress.Mean != 2500 {
		t.Errorf("ingress %+v, want 7500 bytes, 5 samples, 2500 B/s over 3 s", c.Ingress)
	}
	if c.Ingress.Peak != 5000 || c.Ingress.PeakStartNs != 900e6 {
		t.Errorf("ingress peak %v at %d, want 5000 at 0.9 s", c.Ingress.Peak, c.Ingress.PeakStartNs)
	}
	if c.Ingress.UncompressedBytes != 2+4+6+8+10 {
		t.Errorf("uncompressed %d", c.Ingress.UncompressedBytes)
	}
	if c.Egress.TotalBytes != 40 || c.Egress.Samples != 4 || c.Egress.Peak != 30 {
		t.Errorf("egress %+v, want 40 bytes over 4 samples, peak 30 (0.1–1.0 s)", c.Egress)
	}
	// Offline: every sample issued at 0; placed at their completions, the
	// requests spread over the run.
	off := []loadgen.Record{rec(0, 500e6, 1000, 1, 0), rec(0, 1_400e6, 1000, 1, 1), rec(0, 2_500e6, 1000, 1, 2)}
	if c := CarriedOf(slices.Values(off), CarriedOptions{}); c.Ingress.Peak != 3000 {
		t.Errorf("Offline at issue: peak %v, want all 3000 bytes in the first window", c.Ingress.Peak)
	}
	if c := CarriedOf(slices.Values(off), CarriedOptions{RequestsAtCompletion: true}); c.Ingress.Peak != 2000 || c.Ingress.PeakStartNs != 500e6 {
		t.Errorf("Offline at completion: peak %v at %d, want 2000 from 0.5 s", c.Ingress.Peak, c.Ingress.PeakStartNs)
	}
	// A run shorter than a window: the peak is its mean, not its bytes
	// over a whole second.
	short := []loadgen.Record{rec(0, 100e6, 1000, 0, 0), rec(200e6, 250e6, 1000, 0, 1)}
	if c := CarriedOf(slices.Values(short), CarriedOptions{}); c.Ingress.Peak != 8000 || c.Ingress.Mean != 8000 {
		t.Errorf("a 0.25 s run: peak %v mean %v, want 8000 B/s both", c.Ingress.Peak, c.Ingress.Mean)
	}
	if c := CarriedOf(slices.Values([]loadgen.Record{rec(0, 10, 0, 0, 0)}), CarriedOptions{}); c.Measured {
		t.Error("an in-process run measured a wire")
	}
}

// TestCheck: each verdict of each comparison.
func TestCheck(t *testing.T) {
	req, err := Require("resnet50", 100, DTypes{Input: 1}) // 150528 B a sample, 15.05 MB/s
	if err != nil {
		t.Fatal(err)
	}
	full := Carried{Measured: true, Ingress: Direction{TotalBytes: 150528 * 10, Samples: 10}, Egress: Direction{TotalBytes: 10, Samples: 10}}
	half := Carried{Measured: true, Ingress: Direction{TotalBytes: 75264 * 10, Samples: 10}, Egress: Direction{TotalBytes: 10, Samples: 10}}
	// Compressed to half from full-size payloads, and from payloads
	// already under the formula's size.
	halfOfFull, halfOfSmall := half, half
	halfOfFull.Ingress.UncompressedBytes = 150528 * 10
	halfOfSmall.Ingress.UncompressedBytes = 100000 * 10
	gbe := NIC{Name: "eth0", BitsPerSecond: 1e9}    // 125 MB/s: enough
	slow := NIC{Name: "eth1", BitsPerSecond: 100e6} // 12.5 MB/s: not enough
	for _, c := range []struct {
		why        string
		carried    Carried
		nic        NIC
		comp       Compression
		nicV, wire Verdict
		pass       bool
	}{
		{"full-size inputs on a 1 GbE link", full, gbe, None, Pass, Pass, true},
		{"a 100 Mbit/s link is under 15 MB/s", full, slow, None, Fail, Pass, false},
		{"unknown link speed: unknown, not failed", full, NIC{}, None, Unknown, Pass, true},
		{"half-size inputs without compression", half, gbe, None, Pass, Fail, false},
		{"half-size inputs because compressed", halfOfFull, gbe, Lossless, Pass, Compressed, true},
		{"compressed, sizes before not recorded: taken as compression", half, gbe, Lossless, Pass, Compressed, true},
		{"compressed, but the payloads were already smaller than the formula", halfOfSmall, gbe, Lossless, Pass, Fail, false},
		{"no wire sizes", Carried{}, gbe, None, Pass, Unknown, true},
	} {
		r := Check(req, c.carried, c.nic, c.comp)
		if r.Ingress.NIC != c.nicV || r.Ingress.Wire != c.wire || r.Ingress.Pass != c.pass {
			t.Errorf("%s: nic %s wire %s pass %v (%s), want %s %s %v", c.why, r.Ingress.NIC, r.Ingress.Wire, r.Ingress.Pass, r.Ingress.Note, c.nicV, c.wire, c.pass)
		}
		if c.wire == Compressed && !strings.Contains(r.Ingress.Note, "50.0% of the formula's 150528, because the samples were compressed (lossless") {
			t.Errorf("%s: note %q does not say compression made it so", c.why, r.Ingress.Note)
		}
	}
	// Egress "> 0": any bytes back pass; none fail.
	r := Check(req, full, slow, None)
	if !r.Egress.Pass || r.Egress.NIC != Pass {
		t.Errorf("egress > 0 with bytes back: %+v", r.Egress)
	}
	none := full
	none.Egress = Direction{}
	if r := Check(req, none, gbe, None); r.Egress.Pass || r.Egress.Wire != Fail || r.Pass {
		t.Errorf("egress with nothing back: %+v", r.Egress)
	}
}

func TestRate(t *testing.T) {
	if got := Rate(60_211_200); got != "60.2 MB/s (482 Mbit/s)" {
		t.Errorf("Rate: %q", got)
	}
	if got := Rate(12); got != "12 B/s (96 bit/s)" {
		t.Errorf("Rate: %q", got)
	}
}

func FuzzParseDTypes(f *testing.F) {
	for _, s := range []string{"fp32", "fp16,int64", "", ",", "int8,"} {
		f.Add(s, "fp16")
	}
	f.Fuzz(func(t *testing.T, in, out string) {
		d, err := ParseDTypes(in, out)
		if err != nil {
			return
		}
		if d.Input < 0 || d.Input > 8 || d.Input2 > 8 || d.Output > 8 {
			t.Fatalf("%q %q: %+v", in, out, d)
		}
		if strings.TrimSpace(in) != "" && d.Input == 0 {
			t.Fatalf("%q: accepted without a size", in)
		}
	})
}

func FuzzReadDeclaration(f *testing.F) {
	f.Add([]byte(`{"benchmark":"resnet50","dtypes":{"input_bytes":4},"compression":"lossless","payload_bytes":[1,2]}`))
	f.Add([]byte(`{"compression":"zstd"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := readDeclaration(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		if _, err := ParseCompression(string(d.Compression)); err != nil {
			t.Fatalf("accepted compression %q", d.Compression)
		}
	})
}
