// Package bandwidth is the MLPerf Inference rules' datacenter I/O
// requirement: the minimum ingress and egress bandwidth of each benchmark
// as a function of the achieved throughput and the declared data types
// ("Datacenter Bandwidth Requirements"), the compression each benchmark
// allows on the network (the network division's QSL-side compression
// table), what a run's wire actually carried (from the bytes every sample
// put on the wire, loadgen.Record.RequestBytes and ResponseBytes), and the
// check of one against the other and against the NIC's capacity.
//
// Ingress is towards the SUT (the requests: LoadGen's inputs), egress from
// it (the responses). The rules' formulas assume inputs that are not
// pre-processed; a run whose wire carried fewer bytes per sample than the
// formula sent smaller inputs, which the check fails unless the run
// compressed them (then it says so, with the ratio).
package bandwidth

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Compression is a QSL-side compression of the samples sent over the
// network (the rules' options 1–3).
type Compression string

// The compressions of the rules' table. The empty Compression is None.
const (
	// None sends the samples as the QSL holds them.
	None Compression = "none"
	// Lossless sends them through a standard lossless codec (gzip).
	Lossless Compression = "lossless"
	// Original sends the data set's own compressed form (JPEG for the
	// image sets).
	Original Compression = "original"
)

// ParseCompression reads none, lossless or original; "" is None.
func ParseCompression(s string) (Compression, error) {
	switch c := Compression(strings.ToLower(strings.TrimSpace(s))); c {
	case "", None:
		return None, nil
	case Lossless, Original:
		return c, nil
	}
	return "", fmt.Errorf("compression %q: want none, lossless or original", s)
}

// Benchmark is one row of the rules' bandwidth tables.
type Benchmark struct {
	// Name is the row's model as the rules write it ("ResNet50-v1.5").
	Name string
	// Keys are the model keys that name it: mlperf.conf's ("resnet50"),
	// the submission's ("bert-99") and the GB/T catalogue's
	// ("resnet50-v1.5"). The first is the canonical key.
	Keys []string
	// Dataset is the row's data set.
	Dataset string
	// InputElements is the numeric input size without the data type:
	// 150528 for ResNet-50 (3·224·224). For DLRMv2 it is 0 and
	// NumericalElements and CategoricalElements hold the two parts.
	InputElements int64
	// NumericalElements and CategoricalElements are DLRMv2's
	// 270·13 numerical and 270·26 categorical inputs a sample, each with
	// its own data type; 0 for the other rows.
	NumericalElements, CategoricalElements int64
	// OutputElements is the numeric output size without the data type
	// (3D U-Net 32944795, SDXL 3145728); 0 where the rules call the output
	// negligible and ask only for an egress bandwidth above 0.
	OutputElements int64
	// InputFormula and OutputFormula are the rules' minimum bandwidth
	// formulas as they write them.
	InputFormula, OutputFormula string
	// Compressions are the QSL-side compressions the network division
	// allows for it; None is always among them.
	Compressions []Compression
}

// benchmarks is the rules' table (MLPerf Inference rules, "Datacenter
// Bandwidth Requirements", ingress and egress; the network division's
// QSL-side compression table).
//
// Two readings of the rules' text are ours. The egress table has no row
// for Llama 2 and Mixtral-8x7B; the text above it says the output of every
// model but 3D U-Net and SDXL is negligible, so their egress is "> 0". The
// compression table gives Llama 2 no option at all (its row only says
// which tensors make the input), so no compression is taken as allowed.
var benchmarks = []Benchmark{
	{Name: "ResNet50-v1.5", Keys: []string{"resnet50", "resnet50-v1.5", "resnet"}, Dataset: "ImageNet (224x224)",
		InputElements: 150528, InputFormula: "throughput*150528*dtype_size", OutputFormula: "> 0",
		Compressions: []Compression{None, Lossless, Original}},
	{Name: "Retinanet", Keys: []string{"retinanet"}, Dataset: "OpenImages (800x800)",
		InputElements: 1920000, InputFormula: "throughput*1920000*dtype_size", OutputFormula: "> 0",
		Compressions: []Compression{None, Lossless, Original}},
	{Name: "3D UNET", Keys: []string{"3d-unet", "3d-unet-99", "3d-unet-99.9", "unet3d"}, Dataset: "KiTS 2019",
		InputElements: 32944795, OutputElements: 32944795,
		InputFormula: "throughput*32944795*dtype_size", OutputFormula: "throughput*32944795*dtype_size",
		Compressions: []Compression{None, Lossless}},
	{Name: "BERT", Keys: []string{"bert", "bert-99", "bert-99.9", "bert-large"}, Dataset: "SQuAD v1.1 (max_seq_len=384)",
		InputElements: 1152, InputFormula: "throughput*1152*dtype_size", OutputFormula: "> 0",
		Compressions: []Compression{None, Lossless}},
	{Name: "GPT-J", Keys: []string{"gptj", "gptj-99", "gptj-99.9", "gpt-j"}, Dataset: "CNN Dailymail (v3.0.0, max_seq_len=2048)",
		InputElements: 2048, InputFormula: "throughput*2048*dtype_size", OutputFormula: "> 0",
		Compressions: []Compression{None}},
	{Name: "Llama2", Keys: []string{"llama2-70b", "llama2-70b-99", "llama2-70b-99.9", "llama2-70b-interactive", "llama2"}, Dataset: "OpenOrca (max_seq_len=1024)",
		InputElements: 1024, InputFormula: "throughput*1024*dtype_size", OutputFormula: "> 0",
		Compressions: []Compression{None}},
	{Name: "Mixtral-8x7B", Keys: []string{"mixtral-8x7b", "mixtral"}, Dataset: "OpenOrca, GSM8K, MBXP (max_seq_len=2048)",
		InputElements: 2048, InputFormula: "throughput*2048*dtype_size", OutputFormula: "> 0",
		Compressions: []Compression{None}},
	{Name: "DLRMv2", Keys: []string{"dlrm-v2", "dlrm-v2-99", "dlrm-v2-99.9", "dlrmv2"}, Dataset: "1TB Click Logs",
		NumericalElements: 270 * 13, CategoricalElements: 270 * 26,
		InputFormula: "throughput*270*(13*dtype_size1+26*dtype_size2)", OutputFormula: "> 0",
		Compressions: []Compression{None, Lossless}},
	{Name: "SDXL", Keys: []string{"stable-diffusion-xl", "sdxl"}, Dataset: "Subset of coco-2014 val captions (max_prompt_len=77)",
		InputElements: 77, OutputElements: 3145728,
		InputFormula: "throughput*77*dtype_size", OutputFormula: "throughput*3,145,728*dtype_size",
		Compressions: []Compression{None}},
}

// Benchmarks returns the rows of the rules' table, in its order.
func Benchmarks() []Benchmark { return slices.Clone(benchmarks) }

// Keys returns the canonical key of every row, in the table's order, for
// messages that list them.
func Keys() []string {
	out := make([]string, len(benchmarks))
	for i, b := range benchmarks {
		out[i] = b.Keys[0]
	}
	return out
}

// ErrUnknownBenchmark is wrapped by Lookup's error for a name no row has.
var ErrUnknownBenchmark = errors.New("not a benchmark of the MLPerf datacenter bandwidth table")

// Lookup returns the row a model key names (any of Benchmark.Keys, or the
// rules' name, case-insensitively). An unknown name is an error naming it
// and listing the keys.
func Lookup(name string) (Benchmark, error) {
	k := strings.ToLower(strings.TrimSpace(name))
	for _, b := range benchmarks {
		if strings.ToLower(b.Name) == k || slices.Contains(b.Keys, k) {
			return b, nil
		}
	}
	return Benchmark{}, fmt.Errorf("benchmark %q: %w (known: %s)", name, ErrUnknownBenchmark, strings.Join(Keys(), ", "))
}

// Allows reports whether the network division lets the benchmark's QSL
// compress its samples so.
func (b Benchmark) Allows(c Compression) bool {
	if c == "" {
		c = None
	}
	return slices.Contains(b.Compressions, c)
}

// CheckCompression returns an error naming the benchmark and what it
// allows when its rules forbid c (an unknown benchmark allows anything:
// the rules do not cover it).
func CheckCompression(benchmark string, c Compression) error {
	if c == "" || c == None || benchmark == "" {
		return nil
	}
	b, err := Lookup(benchmark)
	if err != nil {
		return nil
	}
	if b.Allows(c) {
		return nil
	}
	allowed := make([]string, len(b.Compressions))
	for i, a := range b.Compressions {
		allowed[i] = string(a)
	}
	return fmt.Errorf("compression %s is not allowed for %s: the network division's rules allow %s", c, b.Name, strings.Join(allowed, ", "))
}
