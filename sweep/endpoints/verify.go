package endpoints

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"

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

// Verify checks a written submission directory (<organization>/<submission_id>)
// for what Write puts there: every point directory under results/ with its
// files, their required fields present and not empty, the percentile
// blocks with their P50 and P90, tps_utilization equal to the point's
// system_tps over the curve's highest, and at least one accuracy file. It
// is no replacement for MLCommons' checker; it catches a damaged tree
// without Python. The error names the file and field.
func Verify(root string) error {
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
				errs = append(errs, verifyCurve(filepath.Join(results, sys.Name(), m.Name()))...)
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

func verifyCurve(dir string) []error {
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
