package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"aimeter/benchmark"
	"aimeter/console"
	"aimeter/gbt"
	"aimeter/sut"
)

// Defaults of the video-stream search.
const (
	// defaultStreamsBudget bounds the wall time of a search.
	defaultStreamsBudget = 3 * time.Minute
	// defaultStreamsResolution stops the bisection once the bracket is
	// within 5 % of its lower end.
	defaultStreamsResolution = 0.05
)

type videoFlags struct {
	sut        string
	fps        float64
	duration   time.Duration
	limit      int
	linear     bool
	timeout    time.Duration
	quiet      bool
	budget     time.Duration
	resolution float64
	streams    int
	jsonFile   string
}

func newVideoStreamsCommand(st *State) *cobra.Command {
	var v videoFlags
	cmd := &cobra.Command{
		Use:   "video-streams",
		Short: "Find the maximum number of video-analysis streams (GB/T 45087 Table 21)",
		Long:  helpText("video_streams"),
		Args:  cobra.NoArgs,
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
	fl.DurationVar(&v.budget, "budget", defaultStreamsBudget, "wall-time budget of the search; when it runs out the best bracket found is reported (0: none)")
	fl.Float64Var(&v.resolution, "resolution", defaultStreamsResolution, "stop bisecting when the bracket is within this fraction of its lower end (0: one stream)")
	fl.IntVar(&v.streams, "streams", 0, "run one probe with this many streams on a fresh SUT instead of searching")
	fl.StringVar(&v.jsonFile, "json", "", "write the result and every probe to this JSON file")
	return cmd
}

// openSUT starts a new instance of the SUT under test.
type openSUT = benchmark.OpenFunc

func videoStreams(parent context.Context, st *State, v *videoFlags) error {
	if err := checkVideoFlags(v); err != nil {
		return err
	}
	ctx, stop := interruptible(parent, st)
	defer stop()
	open := benchmark.OpenConfig(sut.Config{Kind: sut.Kind(v.sut)}, func(n benchmark.Notice) { printNotice(st, n, v.quiet) })
	err := searchStreams(ctx, st, v, open, 0)
	var ee *exitError
	if err == nil || errors.As(err, &ee) {
		return err
	}
	return notRunCode(ctx, err)
}

func checkVideoFlags(v *videoFlags) error {
	switch {
	case !(v.fps > 0) || v.duration <= 0 || v.limit < 1:
		return usageError("--fps, --duration and --max-streams must be > 0")
	case v.budget < 0 || v.streams < 0:
		return usageError("--budget and --streams must be ≥ 0")
	case !(v.resolution >= 0 && v.resolution < 1):
		return usageError("--resolution %g: want a fraction in [0, 1)", v.resolution)
	}
	return nil // the library defaults --job-timeout and checks it against the frame period
}

// searchStreams runs the search (or the single probe of --streams) on
// instances from open. spin is loadgen's SpinWindow (0: its default).
func searchStreams(ctx context.Context, st *State, v *videoFlags, open openSUT, spin time.Duration) error {
	plan := benchmark.StreamsPlan{Open: open, FPS: v.fps, Duration: v.duration, Timeout: v.timeout, SpinWindow: spin, Streams: v.streams,
		Search: gbt.StreamsOptions{Limit: v.limit, Linear: v.linear, Resolution: v.resolution, Budget: v.budget}}
	if !v.quiet {
		plan.Log = st.Stderr
	}
	out, err := benchmark.RunStreams(ctx, plan)
	if out == nil {
		return err
	}
	console.WriteStreamProbes(st.Stdout, out.Result.Probes)
	switch {
	case err != nil && ctx.Err() != nil:
		return withCode(ExitInterrupted, err)
	case err != nil:
		return withCode(ExitFailure, err)
	}
	if v.jsonFile != "" {
		if err := out.WriteJSON(v.jsonFile); err != nil {
			return withCode(ExitFailure, fmt.Errorf("--json: %w", err))
		}
	}
	if v.streams > 0 {
		probe := out.Result.Probes[0]
		fmt.Fprintln(st.Stdout, console.StreamsProbeVerdict(v.streams, v.fps, probe))
		if !probe.OK {
			return withCode(ExitInvalid, fmt.Errorf("video-streams: %d streams failed", v.streams))
		}
		return nil
	}
	fmt.Fprintln(st.Stdout, flagText(console.StreamsVerdict(out.Result, v.fps, v.linear)))
	if !out.Result.Answered(v.linear) {
		return withCode(ExitInvalid, errors.New("video-streams: no confirmed answer"))
	}
	return nil
}
