package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"aimeter/version"
)

// Version is aimeter's one version string (package version: set the
// release with -ldflags "-X aimeter/version.Base=…").
var Version = version.String()

// Main runs the command line in st and returns the exit code.
func Main(st *State) int {
	root := newRootCommand(st)
	root.SetArgs(st.Args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			// Package benchmark names plan fields by their paths; the
			// console names their flags (planFlags).
			fmt.Fprintln(st.Stderr, "aimeter:", flagText(ee.err.Error()))
		}
		return ee.code
	}
	// Errors from cobra itself: unknown flags, missing arguments.
	fmt.Fprintln(st.Stderr, "aimeter:", err)
	fmt.Fprintln(st.Stderr, "Run 'aimeter --help' for usage.")
	return ExitUsage
}

func newRootCommand(st *State) *cobra.Command {
	root := &cobra.Command{
		Use:           "aimeter",
		Short:         "Benchmark AI inference systems the MLPerf LoadGen way (and by GB/T 45087-2024)",
		Long:          helpText("aimeter"),
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.AddCommand(newSweepCommand(st)) // aimeter sweep (sweep.go)
	root.AddCommand(newK8sCommand(st))   // aimeter k8s job (k8s.go)
	root.AddCommand(newMergeCommand(st)) // aimeter merge (merge.go)
	// aimeter server, submit, keygen (server.go)
	root.AddCommand(newServerCommand(st), newSubmitCommand(st), newKeygenCommand(st))
	root.SetOut(st.Stdout)
	root.SetErr(st.Stderr)
	root.AddCommand(newRunCommand(st), newReportCommand(st), newExportCommand(st), newDemoCommand(st), newScenariosCommand(st), newVideoStreamsCommand(st), newECPCommand(st), newServeCommand(st), newTrainCommand(st), newAccuracyCommand(st), newAuditCommand(st), newCheckCommand(st), newReplayCommand(st), newSessionsCommand(st), newResultsCommand(st))
	return root
}
