package cli

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"aimeter/benchmark"
	"aimeter/loadgen"
	"aimeter/mlperfconf"
	"aimeter/sweep/endpoints"
)

// endpointsOutput is the MLPerf Endpoints submission tree a sweep or an
// export writes (--endpoints OUT --submission FILE).
type endpointsOutput struct {
	// Out is the directory the tree goes under (<organization>/<submission_id>).
	Out string
	// Submission is the submission file read and checked.
	Submission *endpoints.Submission
}

// endpointsFromFlags reads --endpoints and --submission: nil when neither
// is given, a usage error when only one is or the file fails its check,
// or when the tree's directory already exists.
func endpointsFromFlags(out, file string) (*endpointsOutput, error) {
	switch {
	case out == "" && file == "":
		return nil, nil
	case out == "":
		return nil, usageError("--submission needs --endpoints OUT")
	case file == "":
		return nil, usageError("--endpoints needs --submission FILE (see docs/endpoints.md)")
	}
	s, err := endpoints.ReadSubmission(file)
	if err != nil {
		return nil, usageError("--submission %v", err)
	}
	root := filepath.Join(out, s.Organization, s.SubmissionID)
	if _, err := os.Stat(root); err == nil {
		return nil, usageError("--endpoints: %s already exists: choose another output directory or submission_id", root)
	}
	return &endpointsOutput{Out: out, Submission: s}, nil
}

// checkSweepSeeds says, before a sweep runs, whether its points will run
// with the submission's seed set: the seeds the settings cascade gives its
// plan (mlperf.conf, user.conf, --set, as each point resolves them) and
// its salt seed. The usage error names each seed that differs and the
// flags that fix it.
func (e *endpointsOutput) checkSweepSeeds(p *benchmark.Plan) error {
	var s loadgen.Settings
	if p.Settings.Explicit != nil {
		s = *p.Settings.Explicit
	} else {
		c, err := mlperfconf.Cascade(mlperfconf.CascadeOptions{
			Model: p.Settings.Model, Scenario: loadgen.SingleStream, Mode: loadgen.PerformanceOnly, ModeSet: true,
			MLPerfConfPath: p.Settings.MLPerfConf, UserConfPath: p.Settings.UserConf, AuditConfigPath: p.Settings.AuditConfig,
			SelfTest: benchmark.SelfTestConf, Set: p.Settings.Set,
		})
		if err != nil {
			return usageError("%v", err)
		}
		s = c.Settings
	}
	seeds := endpoints.RunSeeds{Schedule: s.ScheduleRNGSeed, SampleIndex: s.SampleIndexRNGSeed}
	if oc := p.SUT.OpenAI; oc != nil {
		seeds.Salt = oc.SaltSeed
	}
	if err := e.Submission.CheckSeeds(seeds); err != nil {
		return usageError("--endpoints: %v", err)
	}
	return nil
}

// write writes the tree of the sweep in dir (endpoints.Write: the seeds
// checked, the tree verified by the checker's rules aimeter evaluates)
// and says where; the error (ExitFailure) names every violation.
func (e *endpointsOutput) write(st *State, dir, command string) error {
	names, err := endpoints.Write(e.Out, dir, e.Submission)
	if err != nil {
		return withCode(ExitFailure, fmt.Errorf("%s --endpoints: %w", command, err))
	}
	points := 0
	for _, n := range names {
		if path.Base(n) == endpoints.PointFile {
			points++
		}
	}
	fmt.Fprintf(st.Stdout, "Endpoints submission written to %s: %d points, %d files, checked by the rules of Endpoints' checker that aimeter evaluates (run MLCommons' endpoints-submission-cli check-submission for all of them)\n",
		filepath.Join(e.Out, e.Submission.Organization, e.Submission.SubmissionID), points, len(names))
	return nil
}
