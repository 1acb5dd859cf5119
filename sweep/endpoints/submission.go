// Package endpoints writes an aimeter sweep as an MLPerf Endpoints v1.0
// submission tree, the layout that MLCommons' submission checker
// (PyPI endpoints-submission-cli 1.5.3.0, `endpoints-submission-cli
// check-submission`) reads:
//
//	<organization>/<submission_id>/
//	  src/<implementation>/README.md
//	  docs/README.md
//	  results/<system>/<model>/r<N>/
//	    point.yaml            the point's disclosure (Endpoints section 8.3)
//	    config.yaml           the configuration the client ran
//	    result_summary.json   counts and percentile blocks, in ns and tokens
//	    accuracy_results.json the submitter's accuracy scores (AccuracyPoints)
//	    system_desc.json      the system description (section 8.2)
//	  results/<system>/system_power.json  the provisioned power (section 4.5.2)
//
// Every number is computed from the sweep's point bundles, with the same
// definitions as package sweep (latency from the scheduled time, LoadGen's
// percentile index): nothing is measured again. What aimeter cannot know
// (the organisation, the model's precision and links, the data set, the
// seed set, the availability of the system, its memory configuration, the
// accuracy scores) comes from a Submission, read from a small YAML or JSON
// file (ReadSubmission); a missing field is an error that names it.
package endpoints

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
)

// Submission is what the submitter supplies: the names of the tree and the
// disclosure fields that a benchmark client cannot measure. Field names are
// Endpoints' own where the value is copied verbatim into point.yaml or
// system_desc.json.
type Submission struct {
	// Organization, SubmissionID, System and Model name the tree's
	// directories: <organization>/<submission_id>/results/<system>/<model>.
	// Model is also point.yaml's model_name and must be one of the
	// benchmark models Endpoints accepts, in canonical spelling
	// (llama3_1-8b, gpt-oss-120b, …); the checker refuses other names.
	Organization string `json:"organization"`
	SubmissionID string `json:"submission_id"`
	System       string `json:"system"`
	Model        string `json:"model"`
	// Implementation names src/<implementation>/ ("aimeter" when empty).
	Implementation string `json:"implementation"`
	// Division is Standardized, Serviced or RDI (Endpoints section 2).
	Division string `json:"division"`
	// ModelPrecision, LinkToModel: point.yaml's disclosure of the model.
	ModelPrecision string `json:"model_precision"`
	LinkToModel    string `json:"link_to_model"`
	// DatasetName, DatasetType, DatasetLink: the data set disclosed.
	DatasetName string `json:"dataset_name"`
	DatasetType string `json:"dataset_type"`
	DatasetLink string `json:"dataset_link"`
	// SeedSet is the id of the published seed set the run used (section
	// 4.6); TargetCohort its cohort, YYYY-MM-C0 or YYYY-MM-C1. The
	// scheduler and sample-index seeds written are the bundles' own
	// (schedule_rng_seed, sample_index_rng_seed), which must be the set's
	// (Submission.Seeds): run the sweep with --set to the set's values
	// (SeedSet.SetFlags).
	SeedSet      string `json:"seed_set"`
	TargetCohort string `json:"target_cohort"`
	// ModelSeed is the seed set's model_seed, which the server uses, and
	// which seeds the per-query salt (the checker's reading of section
	// 2.1.1): a point whose run salted its queries (--salt) must have
	// been run with --salt-seed equal to it.
	ModelSeed *uint64 `json:"model_seed"`
	// SchedulerRNGSeed and SampleIndexRNGSeed are the set's scheduler and
	// sample-index seeds. Nil takes those of the published set of that id
	// (PublishedSeedSets), which they must equal when given; a set aimeter
	// does not know needs both.
	SchedulerRNGSeed   *uint64 `json:"scheduler_rng_seed"`
	SampleIndexRNGSeed *uint64 `json:"sample_index_rng_seed"`
	// MaxSupportedConcurrency is the declared Cmax; 0 takes the sweep's
	// own (its regions' Cmax, else its highest point).
	MaxSupportedConcurrency int `json:"max_supported_concurrency"`
	// SystemDesc holds section 8.2 fields that aimeter cannot know
	// (system_availability_status, availability_url, system_size,
	// system_node_ensemble_count, system_node_ensemble_total,
	// shortened_system_name, …); they are written over the fields derived
	// from the bundles' recorded system.
	SystemDesc map[string]any `json:"system_desc"`
	// Node holds the node-type fields that aimeter cannot know
	// (host_memory_configuration, host_network_card_count, driver,
	// filesystem, …), written over those derived from the recorded host.
	Node map[string]any `json:"node"`
	// SystemPower is results/<system>/system_power.json, the provisioned
	// power of the system (Endpoints section 4.5.2), written as given.
	SystemPower map[string]any `json:"system_power"`
	// Accuracy is accuracy_results.json: one entry per evaluated data set,
	// as Endpoints' accuracy harness writes it. aimeter does not score an
	// Endpoints data set; the submitter supplies the scores.
	Accuracy map[string]any `json:"accuracy"`
}

var (
	cohortRE = regexp.MustCompile(`^\d{4}-\d{2}-C[01]$`)
	// nameRE is what a directory name of the tree may hold.
	nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	// modelRE is Endpoints' canonical model spelling (letters, digits,
	// _ and -).
	modelRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
)

// Divisions are the divisions of Endpoints v1.0.
var Divisions = []string{"Standardized", "Serviced", "RDI"}

// Check reports the first missing or malformed field, naming it.
func (s *Submission) Check() error {
	required := []struct{ name, value string }{
		{"organization", s.Organization}, {"submission_id", s.SubmissionID}, {"system", s.System}, {"model", s.Model},
		{"division", s.Division}, {"model_precision", s.ModelPrecision}, {"link_to_model", s.LinkToModel},
		{"dataset_name", s.DatasetName}, {"dataset_type", s.DatasetType}, {"dataset_link", s.DatasetLink},
		{"seed_set", s.SeedSet}, {"target_cohort", s.TargetCohort},
	}
	for _, f := range required {
		if strings.TrimSpace(f.value) == "" {
			return fmt.Errorf("%s: missing (Endpoints' checker requires it)", f.name)
		}
	}
	for _, f := range []struct{ name, value string }{
		{"organization", s.Organization}, {"submission_id", s.SubmissionID}, {"system", s.System}, {"implementation", s.Implementation},
	} {
		if f.value != "" && !nameRE.MatchString(f.value) {
			return fmt.Errorf("%s %q: a directory name of letters, digits, '_', '.' and '-'", f.name, f.value)
		}
	}
	if !modelRE.MatchString(s.Model) {
		return fmt.Errorf("model %q: Endpoints' canonical spelling has only letters, digits, '_' and '-' (llama3_1-8b, not llama3.1-8b)", s.Model)
	}
	ok := false
	for _, d := range Divisions {
		ok = ok || s.Division == d
	}
	if !ok {
		return fmt.Errorf("division %q: want one of %s", s.Division, strings.Join(Divisions, ", "))
	}
	if !cohortRE.MatchString(s.TargetCohort) {
		return fmt.Errorf("target_cohort %q: want YYYY-MM-C0 or YYYY-MM-C1", s.TargetCohort)
	}
	if _, err := s.Seeds(); err != nil {
		return err
	}
	if s.MaxSupportedConcurrency < 0 {
		return fmt.Errorf("max_supported_concurrency %d: must be ≥ 1 (or 0 for the sweep's own)", s.MaxSupportedConcurrency)
	}
	for _, k := range []string{"system_availability_status", "system_size", "system_node_ensemble_count", "system_node_ensemble_total"} {
		if _, ok := s.SystemDesc[k]; !ok {
			return fmt.Errorf("system_desc.%s: missing (Endpoints section 8.2 requires it and aimeter cannot know it)", k)
		}
	}
	for _, k := range []string{"host_memory_configuration", "host_network_card_count", "driver", "filesystem"} {
		if _, ok := s.Node[k]; !ok {
			return fmt.Errorf("node.%s: missing (Endpoints section 8.2.1 requires it and aimeter cannot know it)", k)
		}
	}
	if len(s.SystemPower) == 0 {
		return errors.New("system_power: missing (the provisioned-power descriptor of section 4.5.2; aimeter cannot know it)")
	}
	if len(s.Accuracy) == 0 {
		return errors.New("accuracy: missing (the accuracy scores of the model on the Endpoints data set; aimeter does not score them)")
	}
	return nil
}

// ReadSubmission reads a Submission from a YAML (or JSON) file, refusing
// unknown fields, and checks it.
func ReadSubmission(path string) (*Submission, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := DecodeSubmission(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// DecodeSubmission decodes and checks a Submission's YAML or JSON.
func DecodeSubmission(data []byte) (*Submission, error) {
	var s Submission
	if err := yaml.NewDecoder(bytes.NewReader(data), yaml.DisallowUnknownField(), yaml.UseJSONUnmarshaler()).Decode(&s); err != nil {
		return nil, err
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	return &s, nil
}
