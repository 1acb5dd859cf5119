package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/loadgen"
)

type videoFlags struct {
	sut      string
	fps      float64
	duration time.Duration
	limit    int
	linear   bool
	timeout  time.Duration
	quiet    bool
}

func newVideoStreamsCommand(st *State) *cobra.Command {
	var v videoFlags
	cmd := &cobra.Command{
		Use:   "video-streams",
		Short: "Find the maximum number of video-analysis streams (GB/T 45087 Table 21)",
		Long: `Find the largest number n of video streams the SUT serves at a frame rate
with no frame lost (GB-7.6.7-T21-MVS, IN-78): each probe runs arrival mode 1
(fixed period T = 1/fps, n jobs of one frame per period) for --duration, and
passes when every frame of every stream returns within the mode-1 timeout
threshold 1 (4 s). The search doubles n until a probe fails, bisects, then
confirms that n passes and n + 1 fails, as the standard's linear procedure
would end (--linear runs that procedure literally).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return videoStreams(cmd.Context(), st, &v)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&v.sut, "sut", "reference", "system under test: reference, null or null-async")
	fl.Float64Var(&v.fps, "fps", 25, "frames per second of each stream (T = 1/fps; GB-7.6.7-T21-FNb)")
	fl.DurationVar(&v.duration, "duration", 10*time.Second, "length of each probe, the same for every n (IN-78 (4): longer is stricter; the standard suggests ≥ 60 s)")
	fl.IntVar(&v.limit, "max-streams", 4096, "largest n tried")
	fl.BoolVar(&v.linear, "linear", false, "run the literal procedure: n = 1, 2, 3, … until the first failure")
	fl.DurationVar(&v.timeout, "job-timeout", 0, "override the mode-1 timeout (default 4 s, Table 10 threshold 1)")
	fl.BoolVarP(&v.quiet, "quiet", "q", false, "no progress")
	return cmd
}

func videoStreams(parent context.Context, st *State, v *videoFlags) error {
	if !(v.fps > 0) || v.duration <= 0 || v.limit < 1 {
		return usageError("--fps, --duration and --max-streams must be > 0")
	}
	timeout := v.timeout
	if timeout == 0 {
		timeout, _ = gbt.Timeout(gbt.ModeFixedPeriod, gbt.Threshold1)
	}
	period := time.Duration(float64(time.Second) / v.fps)
	if timeout < period {
		return usageError("--job-timeout %v is shorter than the frame period %v", timeout, period)
	}
	ctx, stop := interruptible(parent, st)
	defer stop()
	sut, qsl, closeSUT, err := chooseSUT(ctx, st, &runFlags{sut: v.sut, qslSize: 1024, quiet: v.quiet})
	if err != nil {
		return err
	}
	defer closeSUT()

	probe := func(ctx context.Context, n int) (bool, error) {
		p, err := gbt.Plan(gbt.StreamPlanInput(v.fps, n, v.duration, timeout), loadgen.DefaultSettings(), nil)
		if err != nil {
			return false, err
		}
		opts := p.Options()
		opts.StallTimeout = 2 * timeout
		res, err := loadgen.Run(ctx, sut, qsl, p.Settings, &opts)
		if err != nil {
			return false, err
		}
		test := p.Test
		m, err := gbt.Evaluate((&bundle.Bundle{Result: res, GBT: &test}).GBTRun())
		if err != nil {
			return false, err
		}
		ok := gbt.StreamProbePassed(m)
		if !v.quiet {
			verdict := "pass"
			if !ok {
				verdict = fmt.Sprintf("fail (%d lost, %d failed)", m.Loss.Lost, m.Throughput.Errors)
			}
			fmt.Fprintf(st.Stderr, "  %5d streams at %g fps: %d frames, %s\n", n, v.fps, res.RecordCount(), verdict)
		}
		return ok, nil
	}
	result, err := gbt.MaxStreams(ctx, probe, gbt.StreamsOptions{Limit: v.limit, Linear: v.linear})
	switch {
	case errors.Is(err, gbt.ErrStreamsLimit):
		fmt.Fprintf(st.Stdout, "Maximum video streams: at least %d (every probe up to --max-streams passed)\n", result.MaxStreams)
		return nil
	case err != nil && ctx.Err() != nil:
		return withCode(ExitInterrupted, err)
	case err != nil:
		return withCode(ExitFailure, err)
	}
	fmt.Fprintf(st.Stdout, "Maximum video streams: %d at %g fps (%d probes; n = %d passed, n + 1 failed)\n",
		result.MaxStreams, v.fps, len(result.Probes), result.MaxStreams)
	return nil
}
