package endpoints

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
)

var pointDirRE = regexp.MustCompile(`^r[0-9]+$`)

// Required fields, by file, that Verify looks for: those of Endpoints'
// models that have no default (and the disclosure fields that its checker
// reports missing).
var (
	requiredPoint = []string{"concurrency", "runtime_settings", "warmup", "division", "max_supported_concurrency",
		"model_name", "model_precision", "link_to_model", "dataset_name", "dataset_type", "dataset_link",
		"shared_src", "shared_docs", "seed_set", "target_cohort"}
	requiredSummary = []string{"n_samples_completed", "duration_ns", "ttft", "tpot", "latency", "output_sequence_lengths"}
	requiredDesc    = []string{"system_name", "system_availability_status", "max_supported_concurrency", "system_size",
		"system_node_ensemble_count", "system_node_ensemble_total", "shortened_system_name", "node_types", "division"}
)

// VerifyOptions adjust Verify.
type VerifyOptions struct {
	// SeedSets are seed sets known besides PublishedSeedSets (a set the
	// submission file declares, Submission.Seeds); nil adds none.
	SeedSets []SeedSet
}

// Verify is VerifyWith with no options: the published seed sets only.
func Verify(root string) error { return VerifyWith(root, VerifyOptions{}) }

// VerifyWith checks a written submission directory
// (<organization>/<submission_id>) for what Write puts there, with the
// rules of MLCommons' checker that aimeter can evaluate without Python:
// every point directory under results/ with its files, their required
// fields present and not empty (point-disclosure-complete), the
// percentile blocks with their P50 and P90, the samples accounted for
// (metric-consistency-accounting: completed + failed = issued), the stored
// system_tps equal to output tokens over duration
// (metric-consistency-system-tps), tps_utilization equal to the point's
// system_tps over the curve's highest (tps-utilization), one seed set for
// every point of a curve (seed-set-consistency), a set aimeter knows
// (seed-set-membership), whose seeds are the point's
// runtime_settings.runtime (seed-runtime-match), and at least one accuracy
// file. It is no replacement for MLCommons' checker; it catches what
// aimeter can before exit 0. The error names, one line each, every
// violation: the file, the rule or field, the values.
func VerifyWith(root string, o VerifyOptions) error {
	known := map[string]SeedSet{}
	for _, set := range append(PublishedSeedSets(), o.SeedSets...) {
		known[set.ID] = set
	}
	results := filepath.Join(root, "results")
	systems, err := os.ReadDir(results)
	if err != nil {
		return err
	}
	var errs []error
	curves := 0
	for _, sys := range systems {
		if !sys.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(results, sys.Name(), SystemPowerFile)); err != nil {
			errs = append(errs, fmt.Errorf("results/%s: no %s", sys.Name(), SystemPowerFile))
		}
		models, err := os.ReadDir(filepath.Join(results, sys.Name()))
		if err != nil {
			return err
		}
		for _, m := range models {
			if m.IsDir() {
				curves++
				errs = append(errs, verifyCurve(filepath.Join(results, sys.Name(), m.Name()), known)...)
			}
		}
	}
	if curves == 0 {
		errs = append(errs, fmt.Errorf("%s: no results/<system>/<model> directory", root))
	}
	for _, d := range []string{"src", "docs"} {
		if fi, err := os.Stat(filepath.Join(root, d)); err != nil || !fi.IsDir() {
			errs = append(errs, fmt.Errorf("%s: no %s directory", root, d))
		}
	}
	return errors.Join(errs...)
}

// pointSeeds are the seed fields of point.yaml.
type pointSeeds struct {
	SeedSet         string `yaml:"seed_set"`
	RuntimeSettings struct {
		Runtime struct {
			Scheduler   *uint64 `yaml:"scheduler_rng_seed"`
			SampleIndex *uint64 `yaml:"sample_index_rng_seed"`
			Model       *uint64 `yaml:"model_seed"`
		} `yaml:"runtime"`
	} `yaml:"runtime_settings"`
}

// verifySeeds checks the seeds of a point.yaml against its declared set
// (seed-set-membership, seed-runtime-match), as MLCommons' checker does.
func verifySeeds(path string, known map[string]SeedSet) (string, []error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil // reported with the file
	}
	var ps pointSeeds
	if err := yaml.Unmarshal(data, &ps); err != nil {
		return "", []error{fmt.Errorf("%s: seed-runtime-match: %w", path, err)}
	}
	if ps.SeedSet == "" {
		return "", nil // reported by the required fields
	}
	set, ok := known[ps.SeedSet]
	if !ok {
		ids := slices.Sorted(maps.Keys(known))
		return ps.SeedSet, []error{fmt.Errorf("%s: seed-set-membership: seed_set %q is not a published set (known: %s)", path, ps.SeedSet, strings.Join(ids, ", "))}
	}
	rt := ps.RuntimeSettings.Runtime
	var bad []string
	for _, f := range []struct {
		name string
		got  *uint64
		want uint64
	}{{"scheduler_rng_seed", rt.Scheduler, set.SchedulerRNGSeed}, {"sample_index_rng_seed", rt.SampleIndex, set.SampleIndexRNGSeed}, {"model_seed", rt.Model, set.ModelSeed}} {
		switch {
		case f.got == nil:
			bad = append(bad, fmt.Sprintf("%s missing (expected %d)", f.name, f.want))
		case *f.got != f.want:
			bad = append(bad, fmt.Sprintf("%s=%d (expected %d)", f.name, *f.got, f.want))
		}
	}
	if len(bad) > 0 {
		fix := ""
		if rt.Scheduler == nil || *rt.Scheduler != set.SchedulerRNGSeed || rt.SampleIndex == nil || *rt.SampleIndex != set.SampleIndexRNGSeed {
			fix = "; run the sweep with " + strings.Join(set.SetFlags(false), " ")
		}
		return ps.SeedSet, []error{fmt.Errorf("%s: seed-runtime-match: runtime_settings.runtime does not match seed set %q: %s%s", path, set.ID, strings.Join(bad, "; "), fix)}
	}
	return ps.SeedSet, nil
}

func verifyCurve(dir string, known map[string]SeedSet) []error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []error{err}
	}
	var errs []error
	type util struct {
		path      string
		tps, util float64
	}
	var utils []util
	accuracy := 0
	declared := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() || !pointDirRE.MatchString(e.Name()) {
			continue
		}
		pd := filepath.Join(dir, e.Name())
		var point map[string]any
		if err := readYAML(filepath.Join(pd, PointFile), &point); err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, missing(filepath.Join(pd, PointFile), point, requiredPoint)...)
			id, serrs := verifySeeds(filepath.Join(pd, PointFile), known)
			errs = append(errs, serrs...)
			if id != "" {
				declared[id] = true
			}
		}
		var config map[string]any
		if err := readYAML(filepath.Join(pd, ConfigFile), &config); err != nil {
			errs = append(errs, err)
		}
		var sum map[string]any
		sumPath := filepath.Join(pd, ResultFile)
		if err := readJSON(sumPath, &sum); err != nil {
			errs = append(errs, err)
		} else if m := missing(sumPath, sum, requiredSummary); len(m) > 0 {
			errs = append(errs, m...)
		} else {
			errs = append(errs, verifyCounts(sumPath, sum)...)
			for _, block := range requiredSummary[2:] {
				b, _ := sum[block].(map[string]any)
				pc, _ := b["percentiles"].(map[string]any)
				for _, k := range []string{"50", "90"} {
					if _, ok := pc[k].(float64); !ok {
						errs = append(errs, fmt.Errorf("%s: %s.percentiles[%q]: missing", sumPath, block, k))
					}
				}
			}
		}
		var desc map[string]any
		descPath := filepath.Join(pd, SystemDescFile)
		if err := readJSON(descPath, &desc); err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, missing(descPath, desc, requiredDesc)...)
			u, uok := desc["tps_utilization"].(float64)
			d, dok := sum["duration_ns"].(float64)
			osl, _ := sum["output_sequence_lengths"].(map[string]any)
			total, tok := osl["total"].(float64)
			if uok && dok && tok && d > 0 {
				utils = append(utils, util{descPath, total / (d / 1e9), u})
			}
		}
		if _, err := os.Stat(filepath.Join(pd, AccuracyFile)); err == nil {
			accuracy++
		}
	}
	if len(utils) == 0 && len(errs) == 0 {
		return []error{fmt.Errorf("%s: no point directory r<N>", dir)}
	}
	top := 0.0
	for _, u := range utils {
		top = max(top, u.tps)
	}
	for _, u := range utils {
		// Endpoints' checker allows 0.1; Write makes it exact.
		if want := u.tps / top; top > 0 && math.Abs(u.util-want) > 1e-6 {
			errs = append(errs, fmt.Errorf("%s: tps_utilization %g, want %g (system_tps %g over the curve's highest %g)", u.path, u.util, want, u.tps, top))
		}
	}
	if accuracy == 0 {
		errs = append(errs, fmt.Errorf("%s: no point has %s", dir, AccuracyFile))
	}
	if len(declared) > 1 {
		errs = append(errs, fmt.Errorf("%s: seed-set-consistency: the points declare %d seed sets (%s); a submission binds exactly one",
			dir, len(declared), strings.Join(slices.Sorted(maps.Keys(declared)), ", ")))
	}
	return errs
}

// verifyCounts checks result_summary.json's accounting
// (metric-consistency-accounting) and its stored system_tps against
// output tokens over duration (metric-consistency-system-tps).
func verifyCounts(path string, sum map[string]any) []error {
	var errs []error
	num := func(k string) (float64, bool) { v, ok := sum[k].(float64); return v, ok }
	issued, iok := num("n_samples_issued")
	done, dok := num("n_samples_completed")
	failed, fok := num("n_samples_failed")
	if iok && dok && fok && done+failed != issued {
		errs = append(errs, fmt.Errorf("%s: metric-consistency-accounting: completed (%g) + failed (%g) = %g ≠ issued (%g)", path, done, failed, done+failed, issued))
	}
	osl, _ := sum["output_sequence_lengths"].(map[string]any)
	total, tok := osl["total"].(float64)
	d, durOK := num("duration_ns")
	stored, sok := num("system_tps")
	if tok && durOK && sok && d > 0 {
		if derived := total / (d / 1e9); math.Abs(stored-derived) > 1e-6*math.Max(derived, 1e-9) {
			errs = append(errs, fmt.Errorf("%s: metric-consistency-system-tps: stored system_tps %g ≠ derived %g (%g tokens / %g s)", path, stored, derived, total, d/1e9))
		}
	}
	return errs
}

func missing(path string, m map[string]any, keys []string) []error {
	var errs []error
	for _, k := range keys {
		v, ok := m[k]
		if s, isStr := v.(string); !ok || v == nil || (isStr && s == "") {
			errs = append(errs, fmt.Errorf("%s: %s: missing", path, k))
		}
	}
	return errs
}

func readYAML(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if v, ok := v.(*map[string]any); ok && *v == nil {
		return fmt.Errorf("%s: not a YAML mapping", path)
	}
	return nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
