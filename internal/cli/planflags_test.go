package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"aimeter/benchmark"
)

// notPlanCommands are the commands whose flags set no field of a
// benchmark.Plan, each with why: they run no test of a plan.
var notPlanCommands = map[string]string{
	"aimeter accuracy log":          "scores an accuracy log a run already wrote",
	"aimeter accuracy score":        "scores a file of predictions",
	"aimeter check":                 "checks a bundle already written",
	"aimeter ecp":                   "computes an ECP figure from token counts",
	"aimeter export":                "exports bundles already written",
	"aimeter keygen":                "makes a key pair for the tester's service",
	"aimeter merge":                 "merges the bundles shards already wrote",
	"aimeter report":                "regenerates the derived files of bundles",
	"aimeter results":               "reads and writes the results store",
	"aimeter results compare":       "reads the results store",
	"aimeter results export":        "reads the results store",
	"aimeter results list":          "reads the results store",
	"aimeter results show":          "reads the results store",
	"aimeter results threshold":     "writes the results store's thresholds",
	"aimeter serve kserve":          "serves a model to test against",
	"aimeter serve openai":          "serves an OpenAI-compatible simulator to test against",
	"aimeter server":                "runs the tester's service",
	"aimeter server register":       "registers a test item with the tester's service",
	"aimeter submit":                "uploads a bundle to the tester's service",
	"aimeter train":                 "runs a training job (package train), not an inference plan",
	"aimeter video-streams":         "searches stream counts with a benchmark.StreamsPlan, whose RunStreams checks its own fields (planFlags names them for the console)",
	"aimeter accuracy":              "a group of commands",
	"aimeter serve":                 "a group of commands",
	"aimeter results add":           "records a bundle already written",
	"aimeter scenarios":             "lists the GB/T scenarios",
	"aimeter k8s":                   "a group of commands",
	"aimeter k8s job":               "writes a Kubernetes Job; the flags of the run it holds go after -- and are aimeter run's",
	"aimeter":                       "the root: its flags are cobra's own",
	"aimeter completion":            "cobra's shell completion",
	"aimeter help":                  "cobra's help",
	"aimeter completion bash":       "cobra's shell completion",
	"aimeter completion fish":       "cobra's shell completion",
	"aimeter completion powershell": "cobra's shell completion",
	"aimeter completion zsh":        "cobra's shell completion",
}

// cliOnlyFlags are the flags of the commands that build plans (run, audit,
// replay, sessions, sweep, demo) that set no field of a benchmark.Plan
// with a rule, each with why. A key is a flag ("quiet"), or a command's
// flag ("aimeter demo retrain").
var cliOnlyFlags = map[string]string{
	"quiet":     "the console's progress line only",
	"json":      "what the console prints: result.json on stdout",
	"store":     "the results store the finished bundle is recorded into (benchmark.Plan.Done)",
	"no-store":  "the results store the finished bundle is recorded into (benchmark.Plan.Done)",
	"from":      "names the bundle benchmark.PlanFromBundle reads; every other flag is refused with it (fromFlags)",
	"server":    "aimeter run --server: the tester's service the bundle is uploaded to",
	"config":    "aimeter run --server: the test item's configuration",
	"token":     "aimeter run --server: the client token",
	"key":       "aimeter run --server: the key that signs the upload",
	"ca":        "aimeter run --server: the service's certificate",
	"retry-for": "aimeter run --server: how long an upload to a busy service is retried",
	// aimeter run --ais-bench checks an inference package and refuses it,
	// saying why; it builds no plan (internal/cli/aisbench.go).
	"aimeter run ais-bench": "checks an ais-bench inference package and refuses it with the reason; no plan is built",
	// aimeter audit: the compliance test's own options (compliance.Options),
	// around the plan of its runs.
	"aimeter audit accuracy-delta":     "compliance.Options: the audit's accuracy bound",
	"aimeter audit accuracy-threshold": "compliance.Options: the audit's accuracy bound",
	"aimeter audit dtype":              "compliance.Options: how TEST06 reads the outputs",
	"aimeter audit eos-token-id":       "compliance.Options: TEST06's end-of-sequence token",
	"aimeter audit max-output-tokens":  "compliance.Options: TEST06's output bound",
	"aimeter audit min-output-tokens":  "compliance.Options: TEST06's output bound",
	"aimeter audit sampling-target":    "compliance.Options: TEST01's accuracy-log sampling",
	// aimeter demo builds its runs' settings and its SUT (a Custom SUT)
	// itself.
	"aimeter demo retrain":  "the demo trains its model before the runs",
	"aimeter demo duration": "sizes the demo's own settings (Settings.Explicit)",
	// aimeter sweep: the fields of the benchmark.SweepPlan or
	// RateSearchPlan around the base plan, which RunSweep and
	// RunRateSearch check themselves (planFlags names them).
	"aimeter sweep name":            "SweepPlan.Name",
	"aimeter sweep endpoints":       "the Endpoints tree written from the sweep when it ends (sweep_endpoints.go checks its seeds first)",
	"aimeter sweep submission":      "the Endpoints tree's submission file (with --endpoints)",
	"aimeter sweep points":          "SweepPlan.Points",
	"aimeter sweep min-concurrency": "SweepPlan.CMin",
	"aimeter sweep max-concurrency": "SweepPlan.CMax, SweepPlan.Search.Max",
	"aimeter sweep point-count":     "SweepPlan.Count",
	"aimeter sweep offline":         "SweepPlan.Offline",
	"aimeter sweep goodput-target":  "SweepPlan.Search.Target, RateSearchPlan.Search.Target",
	"aimeter sweep min-rate":        "RateSearchPlan.Search.Start",
	"aimeter sweep max-rate":        "RateSearchPlan.Search.Max",
	"aimeter sweep rate-decimals":   "RateSearchPlan.Search.Decimals",
}

// TestEveryFlagMapsToAPlanFieldWithARule walks every command's flags: a
// flag of a command that builds a plan sets a field of benchmark.Plan
// whose applicability the library's table (benchmark.Rules) declares, or
// is listed above with why it does not. A new flag with neither fails
// here, so that no flag is silently ignored where it does not apply.
func TestEveryFlagMapsToAPlanFieldWithARule(t *testing.T) {
	root := newRootCommand(&State{})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	defined := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := c.CommandPath()
		_, notPlan := notPlanCommands[path]
		check := func(f *pflag.Flag) {
			defined[f.Name] = true
			if notPlan {
				return
			}
			if _, ok := cliOnlyFlags[path+" "+f.Name]; ok {
				return
			}
			if _, ok := cliOnlyFlags[f.Name]; ok {
				return
			}
			fields := fieldsOf(f.Name)
			if len(fields) == 0 {
				t.Errorf("%s --%s sets no field of benchmark.Plan in planFlags, and is not listed in cliOnlyFlags with why", path, f.Name)
				return
			}
			for _, field := range fields {
				if _, ok := benchmark.RuleOf(field); ok {
					return
				}
			}
			t.Errorf("%s --%s sets %v, which no rule of benchmark.Rules names: say where it applies", path, f.Name, fields)
		}
		c.LocalFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
		if !notPlan && len(c.Commands()) == 0 && c.RunE == nil && c.Run == nil {
			t.Errorf("%s: a command without a run, not in notPlanCommands", path)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	// The table names flags that exist, and fields the library knows (a
	// Plan's with a rule, or a study plan's, or PlanFromBundle's bundle, or
	// an audit's compliance.Options).
	for _, e := range planFlags {
		if !defined[e.flag] {
			t.Errorf("planFlags: %s maps to --%s, which no command defines", e.field, e.flag)
		}
		study := strings.HasPrefix(e.field, "SweepPlan.") || strings.HasPrefix(e.field, "RateSearchPlan.") || strings.HasPrefix(e.field, "StreamsPlan.") || strings.HasPrefix(e.field, "Options.")
		if _, ok := benchmark.RuleOf(e.field); !ok && !study && e.field != "GBT" && e.field != "PlanFromBundle" {
			t.Errorf("planFlags: %s (--%s) has no rule in benchmark.Rules", e.field, e.flag)
		}
	}
	for key := range cliOnlyFlags {
		if f := key[strings.LastIndex(key, " ")+1:]; !defined[f] {
			t.Errorf("cliOnlyFlags lists --%s, which no command defines", f)
		}
	}
}

// TestFlagText: the console names the plan fields of the library's
// messages by their flags, and leaves other words alone.
func TestFlagText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SpinWindow applies only to runs issued on a schedule; drop it", "--spin-window applies only to runs issued on a schedule; drop it"},
		{"add Settings.Set min_query_count=10.", "add --set min_query_count=10."},
		{"SUT.Kind openai, or SUT.Kind dispatch with SUT.Dispatch.Backend openai", "--sut openai, or --sut dispatch with --backend openai"},
		{"SweepPlan.Base.SpinWindow and RateSearchPlan.Base.GBT", "--spin-window and --arrival-mode"},
		{"GBT.Input.Arrival.Mode 4 (IN-51), e.g. a GB/T test; SUT.OpenAI.PromptsSHA256", "--arrival-mode 4 (IN-51), e.g. a GB/T test; SUT.OpenAI.PromptsSHA256"},
		{"PlanFromBundle dir: not a run bundle", "--from dir: not a run bundle"},
	} {
		if got := flagText(c.in); got != c.want {
			t.Errorf("flagText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
