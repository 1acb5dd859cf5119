package endpoints

import (
	"fmt"
	"slices"
	"strings"
)

// SeedSet is one of Endpoints' published seed sets (section 4.6): the
// seeds a submission's client must run with. MLCommons' checker refuses a
// point whose runtime_settings.runtime seeds differ from its declared
// set's (rule seed-runtime-match).
type SeedSet struct {
	// ID is the set's identifier, point.yaml's seed_set ("A").
	ID string
	// SchedulerRNGSeed is LoadGen's schedule_rng_seed (point.yaml's
	// scheduler_rng_seed); SampleIndexRNGSeed its sample_index_rng_seed.
	SchedulerRNGSeed   uint64
	SampleIndexRNGSeed uint64
	// ModelSeed is the set's model_seed: the server's, and the seed of the
	// per-query salt (--salt-seed).
	ModelSeed uint64
}

// PublishedSeedSets are the seed sets MLCommons published, as the checker
// aimeter is tested against (endpoints-submission-cli 1.5.3.0,
// submission_checker/data/seed_sets.yaml, mirrored from
// mlcommons/endpoints_policies seedset.yaml, cohort 2026-10-C1) bundles
// them. A set published later is declared in the submission file
// (Submission.SchedulerRNGSeed, SampleIndexRNGSeed, ModelSeed).
func PublishedSeedSets() []SeedSet {
	return []SeedSet{
		{ID: "A", SchedulerRNGSeed: 10487924139932647040, SampleIndexRNGSeed: 586478644936801402, ModelSeed: 9315206023656308754},
	}
}

// PublishedSeedSet returns the published set of that id.
func PublishedSeedSet(id string) (SeedSet, bool) {
	sets := PublishedSeedSets()
	i := slices.IndexFunc(sets, func(s SeedSet) bool { return s.ID == id })
	if i < 0 {
		return SeedSet{}, false
	}
	return sets[i], true
}

// publishedIDs lists the ids of the published sets, comma-separated.
func publishedIDs() string {
	var ids []string
	for _, s := range PublishedSeedSets() {
		ids = append(ids, s.ID)
	}
	return strings.Join(ids, ", ")
}

// SetFlags are the aimeter flags that run a sweep with the set's seeds:
// "--set schedule_rng_seed=…", "--set sample_index_rng_seed=…" and, for a
// salted sweep, "--salt-seed …" (the model_seed).
func (s SeedSet) SetFlags(salted bool) []string {
	out := []string{
		fmt.Sprintf("--set schedule_rng_seed=%d", s.SchedulerRNGSeed),
		fmt.Sprintf("--set sample_index_rng_seed=%d", s.SampleIndexRNGSeed),
	}
	if salted {
		out = append(out, fmt.Sprintf("--salt-seed %d", s.ModelSeed))
	}
	return out
}

// RunSeeds are the seeds a run used (or will use): LoadGen's
// schedule_rng_seed and sample_index_rng_seed, and the per-query salt's
// seed (nil for a run without --salt).
type RunSeeds struct {
	Schedule    uint64
	SampleIndex uint64
	Salt        *uint64
}

// Mismatch lists how seeds differ from the set, one phrase per seed
// (e.g. "schedule_rng_seed 0, the set's is 10487924139932647040"); nil
// when they agree.
func (s SeedSet) Mismatch(seeds RunSeeds) []string {
	var out []string
	if seeds.Schedule != s.SchedulerRNGSeed {
		out = append(out, fmt.Sprintf("schedule_rng_seed %d, the set's scheduler_rng_seed is %d", seeds.Schedule, s.SchedulerRNGSeed))
	}
	if seeds.SampleIndex != s.SampleIndexRNGSeed {
		out = append(out, fmt.Sprintf("sample_index_rng_seed %d, the set's is %d", seeds.SampleIndex, s.SampleIndexRNGSeed))
	}
	if seeds.Salt != nil && *seeds.Salt != s.ModelSeed {
		out = append(out, fmt.Sprintf("salt seed %d, the set's model_seed is %d", *seeds.Salt, s.ModelSeed))
	}
	return out
}

// CheckSeeds says, before a sweep runs, whether its seeds are the
// submission's seed set's; the error names each seed that differs and
// the flags that fix them (SetFlags), so that the sweep is not run to be
// refused by Endpoints' checker (seed-runtime-match).
func (s *Submission) CheckSeeds(seeds RunSeeds) error {
	set, err := s.Seeds()
	if err != nil {
		return err
	}
	bad := set.Mismatch(seeds)
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("the sweep would not run with seed set %s's seeds (%s), and MLCommons' checker refuses every such point (seed-runtime-match); run it with\n  %s",
		set.ID, strings.Join(bad, "; "), strings.Join(set.SetFlags(seeds.Salt != nil), "\n  "))
}

// Seeds is the seed set the submission binds: the published set of its
// seed_set, or, for a set aimeter does not know, the seeds the file
// declares (scheduler_rng_seed, sample_index_rng_seed, model_seed).
func (s *Submission) Seeds() (SeedSet, error) {
	if s.ModelSeed == nil {
		return SeedSet{}, fmt.Errorf("model_seed: missing (the seed set's model_seed, section 4.6)")
	}
	if pub, ok := PublishedSeedSet(s.SeedSet); ok {
		for _, f := range []struct {
			name      string
			got       *uint64
			published uint64
		}{
			{"model_seed", s.ModelSeed, pub.ModelSeed},
			{"scheduler_rng_seed", s.SchedulerRNGSeed, pub.SchedulerRNGSeed},
			{"sample_index_rng_seed", s.SampleIndexRNGSeed, pub.SampleIndexRNGSeed},
		} {
			if f.got != nil && *f.got != f.published {
				return SeedSet{}, fmt.Errorf("%s %d: published seed set %s's is %d", f.name, *f.got, pub.ID, f.published)
			}
		}
		return pub, nil
	}
	if s.SchedulerRNGSeed == nil || s.SampleIndexRNGSeed == nil {
		return SeedSet{}, fmt.Errorf("seed_set %q: not a set aimeter knows (published: %s); give its scheduler_rng_seed and sample_index_rng_seed in the file (and MLCommons' checker its seed-set file, --seed-sets)",
			s.SeedSet, publishedIDs())
	}
	return SeedSet{ID: s.SeedSet, SchedulerRNGSeed: *s.SchedulerRNGSeed, SampleIndexRNGSeed: *s.SampleIndexRNGSeed, ModelSeed: *s.ModelSeed}, nil
}
