package train

import (
	"maps"
	"slices"
)

// MLPerfBenchmark is what MLPerf Training's rules fix for one benchmark:
// how many result files (runs) a submission needs, how many of the fastest
// and slowest the olympic average drops, and the closed division's quality
// target. The figures are those of MLCommons' mlperf-logging 4.1.68
// (benchmark_meta.py's result file counts, result_summarizer's
// max_dropped_scores, and the eval_accuracy ATLEAST_ONE_CHECK of the latest
// training ruleset that has the benchmark).
type MLPerfBenchmark struct {
	// Name is the submission_benchmark value, such as "resnet".
	Name string `json:"name"`
	// Runs is the number of runs a submission needs.
	Runs int `json:"runs"`
	// Drop is how many of the fastest and of the slowest runs the olympic
	// average drops: 4 for unet3d, 1 for the others.
	Drop int `json:"drop"`
	// Target is the quality target the closed division checks (met at
	// equality: Inclusive); nil where it is not one number (maskrcnn's
	// BBOX and SEGM, stable_diffusion's FID and CLIP, and the benchmarks
	// whose target the log itself sets).
	Target *Target `json:"target,omitempty"`
	// Ruleset is the training ruleset the target is taken from.
	Ruleset string `json:"ruleset,omitempty"`
}

// mlperfBenchmarks is the table LookupMLPerf reads.
var mlperfBenchmarks = map[string]MLPerfBenchmark{
	"bert":             {Runs: 10, Target: &Target{Metric: "masked LM accuracy", Value: 0.720}, Ruleset: "5.1.0"},
	"deepseekv3_671b":  {Runs: 3, Target: &Target{Metric: "log perplexity", Value: 3.6, LowerIsBetter: true}, Ruleset: "6.1.0"},
	"dlrm":             {Runs: 5, Target: &Target{Metric: "AUC", Value: 0.8025}, Ruleset: "3.1.0"},
	"dlrm_dcnv2":       {Runs: 10, Target: &Target{Metric: "AUC", Value: 0.80275}, Ruleset: "6.0.0"},
	"dlrmv4":           {Runs: 10, Ruleset: "6.1.0"},
	"flux1":            {Runs: 10, Target: &Target{Metric: "validation loss", Value: 0.586, LowerIsBetter: true}, Ruleset: "6.1.0"},
	"gnmt":             {Runs: 10, Target: &Target{Metric: "BLEU", Value: 0.240}, Ruleset: "0.7.0"},
	"gnn":              {Runs: 10, Target: &Target{Metric: "accuracy", Value: 0.72}, Ruleset: "4.1.0"},
	"gpt3":             {Runs: 3, Target: &Target{Metric: "log perplexity", Value: 2.69, LowerIsBetter: true}, Ruleset: "4.1.0"},
	"gpt_oss_20b":      {Runs: 10, Target: &Target{Metric: "log perplexity", Value: 3.34, LowerIsBetter: true}, Ruleset: "6.1.0"},
	"llama2_70b_lora":  {Runs: 10, Target: &Target{Metric: "eval loss", Value: 0.925, LowerIsBetter: true}, Ruleset: "6.1.0"},
	"llama31_405b":     {Runs: 3, Target: &Target{Metric: "log perplexity", Value: 5.6, LowerIsBetter: true}, Ruleset: "6.0.0"},
	"llama31_8b":       {Runs: 10, Target: &Target{Metric: "log perplexity", Value: 3.3, LowerIsBetter: true}, Ruleset: "6.1.0"},
	"maskrcnn":         {Runs: 5, Ruleset: "3.1.0"},
	"minigo":           {Runs: 10, Target: &Target{Metric: "win rate", Value: 0.5}, Ruleset: "3.1.0"},
	"ncf":              {Runs: 10},
	"qwen35_397b_grpo": {Runs: 3, Ruleset: "6.1.0"},
	"resnet":           {Runs: 5, Target: &Target{Metric: "top-1 accuracy", Value: 0.7590}, Ruleset: "4.0.0"},
	"retinanet":        {Runs: 5, Target: &Target{Metric: "mAP", Value: 0.340}, Ruleset: "5.1.0"},
	"rgat":             {Runs: 10, Target: &Target{Metric: "accuracy", Value: 0.72}, Ruleset: "5.1.0"},
	"rnnt":             {Runs: 10, Target: &Target{Metric: "WER", Value: 0.058, LowerIsBetter: true}, Ruleset: "3.1.0"},
	"ssd":              {Runs: 5, Target: &Target{Metric: "mAP", Value: 0.340}, Ruleset: "4.1.0"},
	"stable_diffusion": {Runs: 10, Ruleset: "5.0.0"},
	"transformer":      {Runs: 10},
	"unet3d":           {Runs: 40, Drop: 4, Target: &Target{Metric: "mean DICE", Value: 0.908}, Ruleset: "4.0.0"},
}

// LookupMLPerf returns the rules of the MLPerf Training benchmark that an
// MLLOG submission_benchmark names, such as "resnet" or "llama2_70b_lora".
func LookupMLPerf(name string) (MLPerfBenchmark, bool) {
	b, ok := mlperfBenchmarks[name]
	if !ok {
		return MLPerfBenchmark{}, false
	}
	b.Name = name
	if b.Drop == 0 {
		b.Drop = 1
	}
	if b.Target != nil {
		t := *b.Target
		t.Inclusive = true
		b.Target = &t
	}
	return b, true
}

// MLPerfBenchmarks lists the benchmark names LookupMLPerf knows, sorted.
func MLPerfBenchmarks() []string {
	return slices.Sorted(maps.Keys(mlperfBenchmarks))
}
