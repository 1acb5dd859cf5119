package cli

// Exit codes of the aimeter command.
const (
	// ExitOK: the command succeeded; for a run, the result is VALID (or the
	// accuracy run completed).
	ExitOK = 0
	// ExitFailure: an unexpected error (I/O, a SUT or QSL that failed to load).
	ExitFailure = 1
	// ExitUsage: invalid command line, configuration or settings; nothing ran.
	ExitUsage = 2
	// ExitInvalid: the run completed but its result is INVALID.
	ExitInvalid = 3
	// ExitInterrupted: the run was interrupted (Ctrl-C, SIGTERM or --timeout);
	// its logs were written and the result is INVALID.
	ExitInterrupted = 4
	// ExitRegression: aimeter results compare --fail-on-regression found
	// that the newest run regressed.
	ExitRegression = 5
	// ExitNoBaseline: aimeter results compare --fail-on-regression had
	// nothing to compare the run with (no earlier run of its series, and
	// no --baseline), or no threshold judged it (a metric it lacks, too
	// few earlier runs), so it judged nothing; --allow-no-baseline makes
	// that exit 0. (6 is ExitRefused, of aimeter submit.)
	ExitNoBaseline = 7
	// ExitForced: a second Ctrl-C ended the process before logs were written.
	ExitForced = 130
)

// exitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error { return &exitError{code: code, err: err} }
