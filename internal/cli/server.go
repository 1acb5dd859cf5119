package cli

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"aimeter/attest"
	"aimeter/benchmark"
	"aimeter/console"
	"aimeter/loadgen"
	"aimeter/tester"
)

// ExitRefused: the tester's service refused the upload (aimeter submit,
// aimeter run --server); the reasons are printed.
const ExitRefused = 6

func newKeygenCommand(st *State) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Make an Ed25519 key pair that signs the bundles a tested party uploads",
		Long:  helpText("server_keygen"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pub, err := attest.WriteKeyPair(out)
			if err != nil {
				return withCode(ExitFailure, err)
			}
			fmt.Fprintf(st.Stdout, "wrote %s.key and %s.pub (key ID %s)\n", out, out, attest.KeyID(pub))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "aimeter-client", "prefix of the two files written: PREFIX.key and PREFIX.pub")
	return cmd
}

func newServerCommand(st *State) *cobra.Command {
	var dsn, listen, certFile, keyFile, dataDir string
	var hosts []string
	var storeFlagged bool
	var lim serverLimits
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the tester's service of a GB/T 45087 network test (registration, signed uploads, dashboard)",
		Long:  helpText("server"),
		Example: `  aimeter server --listen 127.0.0.1:8443
  aimeter server --db postgres://aimeter@db/aimeter --tls-cert cert.pem --tls-key key.pem`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			budget, err := lim.budget()
			if err != nil {
				return err
			}
			// The Go runtime's soft limit follows the budget, so the
			// collector works within it (unless GOMEMLIMIT is set).
			budget.SetGoMemoryLimit()
			ctx, stop := interruptible(cmd.Context(), st)
			defer stop()
			err = tester.Serve(ctx, tester.ServeOptions{
				Listen: listen, DataDir: dataDir, DSN: dsn, CertFile: certFile, KeyFile: keyFile, Hosts: hosts,
				StoreFlagged: storeFlagged, Logger: slog.New(slog.NewTextHandler(st.Stderr, nil)),
				MaxUploadBytes: lim.maxUploadBytes, UploadTimeout: lim.uploadTimeout, MemoryBudget: budget.Bytes,
				MaxConcurrentUploads: lim.concurrent, MaxQueuedUploads: lim.queued, MaxQueueWait: lim.queueWait,
				SessionLifetime: lim.sessionLife, SessionIdleTimeout: lim.idleOption(),
				Ready: func(l tester.Listening) {
					fmt.Fprintf(st.Stdout, "aimeter server on https://%s/ (dashboard and /api/v1)\n", l.Addr)
					if budget.Bytes > 0 {
						fmt.Fprintf(st.Stdout, "memory budget of recomputations: %s (%s)\n", loadgen.FormatBytes(float64(budget.Bytes)), budget.Source)
					} else {
						fmt.Fprintln(st.Stdout, "memory budget of recomputations: none (--memory-budget none)")
					}
					fmt.Fprintf(st.Stdout, "admin token: %s\n", l.AdminTokenFile)
					if l.SelfSignedCert != "" {
						what := "self-signed certificate"
						if l.CertCreated {
							what = "new self-signed certificate"
						}
						fmt.Fprintf(st.Stdout, "%s: %s\n", what, l.SelfSignedCert)
					}
				},
				Stopping: func() { fmt.Fprintln(st.Stderr, "aimeter server: shutting down") },
			})
			var le *tester.ListenError
			var te *tester.TLSError
			switch {
			case errors.As(err, &le):
				return withCode(ExitUsage, fmt.Errorf("--listen %s: %w", le.Addr, le.Err))
			case errors.As(err, &te):
				return withCode(ExitUsage, err)
			case err != nil:
				return withCode(ExitFailure, err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dsn, "db", "", "the database: an SQLite file, or postgres://… (default: server.db in --data-dir)")
	fl.StringVar(&listen, "listen", "127.0.0.1:8443", "address to serve HTTPS on")
	fl.StringVar(&certFile, "tls-cert", "", "TLS certificate (PEM); without it and --tls-key, a self-signed one is made in --data-dir")
	fl.StringVar(&keyFile, "tls-key", "", "TLS private key (PEM) of --tls-cert")
	fl.StringVar(&dataDir, "data-dir", "", "where the service keeps its admin token, certificate, uploads and result files (default: the user's data directory/aimeter/server)")
	fl.StringSliceVar(&hosts, "host", nil, "extra host name or IP address of a self-signed certificate (repeatable)")
	fl.BoolVar(&storeFlagged, "store-flagged", false, "store a signed bundle whose claimed results the raw records do not support, with status flagged and the differences as its reason, instead of refusing it")
	lim.add(cmd)
	cmd.AddCommand(newServerRegisterCommand(st))
	return cmd
}

// serverLimits are aimeter server's limits and admission flags.
type serverLimits struct {
	maxUpload      string
	maxUploadBytes int64
	memory         benchmark.MemorySetting
	uploadTimeout  time.Duration
	queueWait      time.Duration
	concurrent     int
	queued         int
	sessionLife    time.Duration
	sessionIdle    time.Duration
}

func (l *serverLimits) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&l.maxUpload, "max-upload-bytes", "1GiB", "refuse an upload whose body is larger (413; one that declares a larger Content-Length before it is read), e.g. 2GiB or 500MB")
	fl.Var(&l.memory, "memory-budget", "memory the recomputations of uploads may take at once, by their estimates (e.g. 8GiB; auto = half of the container's memory limit, else half of the machine's memory; none = no memory gate); an upload that needs more than the whole budget is refused (413). Go's soft memory limit is set from it unless GOMEMLIMIT is set")
	fl.DurationVar(&l.uploadTimeout, "upload-timeout", tester.DefaultUploadTimeout, "cut an upload whose body is not received within this time (408) and discard what came")
	fl.IntVar(&l.concurrent, "max-concurrent-uploads", tester.DefaultMaxConcurrentUploads, "uploads received at once; more are answered 503 with Retry-After before their bodies are read")
	fl.IntVar(&l.queued, "max-queued-uploads", tester.DefaultMaxQueuedUploads, "received uploads that may wait for memory to recompute them; more are answered 503 with Retry-After (0 = none wait)")
	fl.DurationVar(&l.queueWait, "max-queue-wait", tester.DefaultMaxQueueWait, "how long a received upload waits for memory before it is answered 503 with Retry-After")
	fl.DurationVar(&l.sessionLife, "session-lifetime", tester.DefaultSessionLifetime, "how long a dashboard session lasts from its sign-in, however it is used")
	fl.DurationVar(&l.sessionIdle, "session-idle-timeout", tester.DefaultSessionIdleTimeout, "end a dashboard session that made no request for this long (0 = no idle limit; --session-lifetime still applies)")
}

// idleOption is --session-idle-timeout as Options.SessionIdleTimeout
// takes it: 0 on the command line (no idle limit) is -1 there.
func (l *serverLimits) idleOption() time.Duration {
	if l.sessionIdle == 0 {
		return -1
	}
	return l.sessionIdle
}

// budget checks the flags and returns the memory budget.
func (l *serverLimits) budget() (benchmark.MemoryBudget, error) {
	switch {
	case l.concurrent < 1:
		return benchmark.MemoryBudget{}, usageError("--max-concurrent-uploads %d: give 1 or more", l.concurrent)
	case l.queued < 0:
		return benchmark.MemoryBudget{}, usageError("--max-queued-uploads %d: give 0 or more", l.queued)
	case l.uploadTimeout <= 0:
		return benchmark.MemoryBudget{}, usageError("--upload-timeout %s: give a duration above 0", l.uploadTimeout)
	case l.queueWait <= 0:
		return benchmark.MemoryBudget{}, usageError("--max-queue-wait %s: give a duration above 0", l.queueWait)
	case l.sessionLife <= 0:
		return benchmark.MemoryBudget{}, usageError("--session-lifetime %s: give a duration above 0", l.sessionLife)
	case l.sessionIdle < 0:
		return benchmark.MemoryBudget{}, usageError("--session-idle-timeout %s: give 0 (no idle limit) or a duration above 0", l.sessionIdle)
	}
	n, err := benchmark.ParseMemorySize(l.maxUpload)
	if err != nil {
		return benchmark.MemoryBudget{}, usageError("--max-upload-bytes %s: give a size above 0, e.g. 2GiB or 500MB", l.maxUpload)
	}
	l.maxUploadBytes = n
	if l.queued == 0 {
		l.queued = -1 // tester.Options: -1 is no queue
	}
	switch l.memory.String() {
	case "auto":
		return tester.ProcessMemoryBudget(), nil
	case "none":
		return benchmark.MemoryBudget{Bytes: -1}, nil
	}
	n, _ = strconv.ParseInt(l.memory.String(), 10, 64)
	return benchmark.FixedMemoryBudget(n, "--memory-budget"), nil
}

// clientFlags are how a command reaches the service.
type clientFlags struct {
	server, token, ca, config string
	cfg                       *tester.Config
}

func (c *clientFlags) add(cmd *cobra.Command, tokenHelp string) {
	fl := cmd.Flags()
	fl.StringVar(&c.server, "server", "", "the tester's service, https://HOST:PORT (default: the server of --config)")
	fl.StringVar(&c.token, "token", "", tokenHelp)
	fl.StringVar(&c.ca, "ca", "", "PEM certificate to trust for the service (its self-signed tls/cert.pem); default: the certificate in --config, else the system's roots")
	fl.StringVar(&c.config, "config", "", "the test item's configuration file from 'aimeter server register'")
}

// client checks the flags and makes the service's client.
func (c *clientFlags) client(what string) (*tester.Client, error) {
	cl, cfg, err := tester.NewClient(tester.ClientOptions{Server: c.server, Token: c.token, CAFile: c.ca, ConfigFile: c.config})
	c.cfg = cfg
	return cl, optionError(what, err)
}

// optionError maps the tester's option errors to the flags of the same
// names (usage errors); what names the command.
func optionError(what string, err error) error {
	var oe *tester.OptionError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &oe):
		return withCode(ExitFailure, err)
	case oe.Missing && oe.Field == "server":
		return usageError("%s needs --server URL (or --config FILE)", what)
	case oe.Missing && oe.Err != nil:
		return usageError("%s needs --%s (%v)", what, oe.Field, oe.Err)
	case oe.Missing:
		return usageError("%s needs --%s", what, oe.Field)
	case oe.Value != "":
		return usageError("--%s %s: %v", oe.Field, oe.Value, oe.Err)
	}
	return usageError("--%s: %v", oe.Field, oe.Err)
}

func newServerRegisterCommand(st *State) *cobra.Command {
	var cf clientFlags
	var reg tester.Registration
	var pubFile, infoFile, out, tokenOut string
	cmd := &cobra.Command{
		Use:   "register",
		Short: "Register a test item with the service: prints its test ID and client token, writes its configuration file",
		Long:  helpText("server_register"),
		Example: `  aimeter server register --server https://127.0.0.1:8443 --ca ~/.local/share/aimeter/server/tls/cert.pem \
    --token "$(cat ~/.local/share/aimeter/server/admin.token)" --party "Example Lab" --public-key lab.pub --retests 2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cf.token == "" {
				cf.token = os.Getenv("AIMETER_ADMIN_TOKEN")
			}
			cl, err := cf.client("aimeter server register")
			if err != nil {
				return err
			}
			if err := tester.LoadRegistration(&reg, pubFile, infoFile); err != nil {
				return optionError("aimeter server register", err)
			}
			got, err := cl.Register(cmd.Context(), reg)
			if err != nil {
				return refusedCode(err)
			}
			if out, err = tester.WriteConfig(out, got.Config); err != nil {
				return withCode(ExitFailure, err)
			}
			if tokenOut != "" {
				// The token is a secret: readable by its owner only.
				if err := os.WriteFile(tokenOut, []byte(got.Token+"\n"), 0o600); err != nil {
					return withCode(ExitFailure, fmt.Errorf("--token-out: %w", err))
				}
			}
			fmt.Fprintf(st.Stdout, "test ID:  %s\ntoken:    %s\nexpires:  %s\nconfig:   %s\n", got.TestID, got.Token, got.ExpiresAt.Format(time.RFC3339), out)
			return nil
		},
	}
	cf.add(cmd, "the admin token (the service's admin.token; default $AIMETER_ADMIN_TOKEN)")
	fl := cmd.Flags()
	fl.StringVar(&reg.Party, "party", "", "the tested party's name (required)")
	fl.StringVar(&pubFile, "public-key", "", "the tested party's public key, PEM, that signs its uploads (required)")
	fl.IntVar(&reg.RetestAllowance, "retests", 0, "retests allowed after the first attempt")
	fl.StringVar(&reg.ExpiresIn, "expires", "", "how long the client token works, e.g. 720h (default 30 days)")
	fl.StringVar(&reg.TestID, "test-id", "", "the test ID (default: made by the service)")
	fl.StringVar(&infoFile, "info", "", "JSON file of the test information (clauses 6.1/7.1) to register")
	fl.StringVar(&out, "out", "", "where to write the configuration file (default TESTID.json)")
	fl.StringVar(&tokenOut, "token-out", "", "also write the client token to this file (mode 0600), for --token \"$(cat FILE)\"; the configuration file never holds it")
	return cmd
}

// refusedCode gives a refusal of the service the exit code ExitRefused.
func refusedCode(err error) error {
	var re *tester.RefusedError
	if errors.As(err, &re) {
		return withCode(ExitRefused, err)
	}
	return withCode(ExitFailure, err)
}

// uploadFlags are those of the commands that upload: the service, the
// token and the signing key.
type uploadFlags struct {
	clientFlags
	key      string
	retryFor time.Duration
}

func (u *uploadFlags) add(cmd *cobra.Command) {
	u.clientFlags.add(cmd, "the test item's client token (from 'aimeter server register')")
	cmd.Flags().StringVar(&u.key, "key", "", "the Ed25519 private key (PEM) registered with the test item, that signs the bundle (default: aimeter-client.key when it exists)")
	cmd.Flags().DurationVar(&u.retryFor, "retry-for", tester.DefaultRetryFor, "while the service answers that it is busy (503), retry the upload with capped exponential backoff (the service's Retry-After first, doubling up to 1m, with jitter) for at most this long; 0 does not retry")
}

// onlyWithServer refuses, for aimeter run, the upload's flags given
// without the service to upload to (--server or --config): they would be
// silently ignored.
func (u *uploadFlags) onlyWithServer(cmd *cobra.Command) error {
	if u.server != "" || u.config != "" {
		return nil
	}
	for _, name := range []string{"token", "key", "ca", "retry-for"} {
		if cmd.Flags().Changed(name) {
			return usageError("--%s applies only with --server or --config (an upload to the tester's service): drop it, or name the service", name)
		}
	}
	return nil
}

// retries sets cl's retries of a busy service: --retry-for, and one line
// on stderr per wait.
func (u *uploadFlags) retries(st *State, cl *tester.Client) {
	cl.RetryFor = u.retryFor
	if u.retryFor <= 0 {
		cl.RetryFor = -1
	}
	cl.Waiting = func(w tester.RetryWait) { fmt.Fprintln(st.Stderr, w.String()) }
}

// prepare checks the flags before anything runs: the service's client and
// the signing key.
func (u *uploadFlags) prepare(what string) (*tester.Client, ed25519.PrivateKey, error) {
	cl, err := u.client(what)
	if err != nil {
		return nil, nil, err
	}
	key, err := tester.SigningKey(u.key)
	if err != nil {
		return nil, nil, optionError(what, err)
	}
	return cl, key, nil
}

// testID returns the test item the token belongs to.
func (u *uploadFlags) testID(ctx context.Context, cl *tester.Client) (string, error) {
	id, err := cl.TestItemOf(ctx, u.cfg)
	var oe *tester.OptionError
	switch {
	case errors.As(err, &oe):
		return "", optionError("", err)
	case err != nil:
		return "", refusedCode(err)
	}
	return id, nil
}

// printUpload prints a stored upload; for a run stored flagged it returns
// an ExitRefused error.
func printUpload(st *State, rep *tester.UploadReply) error {
	if console.WriteUpload(st.Stdout, st.Stderr, rep) {
		return withCode(ExitRefused, fmt.Errorf("the service stored run %d flagged: the raw records do not support %d claim(s) of the bundle", rep.RunID, len(rep.Differences)))
	}
	return nil
}

func newSubmitCommand(st *State) *cobra.Command {
	var uf uploadFlags
	cmd := &cobra.Command{
		Use:     "submit DIR",
		Short:   "Sign a run bundle and upload it to the tester's service",
		Long:    helpText("server_submit"),
		Example: `  aimeter submit aimeter-results --config T20261127-080000-abcdef.json --token amt_… --key lab.key`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, key, err := uf.prepare("aimeter submit")
			if err != nil {
				return err
			}
			uf.retries(st, cl)
			id, err := uf.testID(cmd.Context(), cl)
			if err != nil {
				return err
			}
			rep, err := cl.Submit(cmd.Context(), id, args[0], key)
			if err != nil {
				return refusedCode(err)
			}
			return printUpload(st, rep)
		},
	}
	uf.add(cmd)
	return cmd
}

// runAndSubmit is aimeter run --server: it reports test_start, runs the
// plan (whose data loading phase reports data_download_start and
// data_download_end through the hook it is given, for Plan.Phase), reports
// test_end and uploads the signed bundle. The exit code is the run's, or
// ExitRefused when the service refuses the upload.
func runAndSubmit(ctx context.Context, st *State, uf *uploadFlags, run func(phase func(benchmark.Phase)) error, outputDir string, sh *benchmark.Shard) error {
	cl, key, err := uf.prepare("aimeter run --server")
	if err != nil {
		return err
	}
	uf.retries(st, cl)
	id, err := uf.testID(ctx, cl)
	if err != nil {
		return err
	}
	o, err := cl.RunAttempt(ctx, id, run, tester.AttemptOptions{
		Dir: outputDir, Key: key,
		// The shards of one test share one attempt (docs/server.md).
		Shard: sh,
		// An invalid result completed the run: it is uploaded.
		Completed: func(err error) bool {
			var xe *exitError
			return errors.As(err, &xe) && (xe.code == ExitInvalid || xe.code == ExitOK)
		},
		Started: func(at *tester.Attempt) { fmt.Fprintf(st.Stderr, "test item %s: attempt %d started\n", id, at.Number) },
		EventFailed: func(kind benchmark.PhaseKind, err error) {
			fmt.Fprintf(st.Stderr, "warning: test item %s: the service did not take %s: %v\n", id, kind, err)
		},
	})
	if err != nil {
		return refusedCode(err)
	}
	if o.Reply == nil {
		return o.RunErr
	}
	if err := printUpload(st, o.Reply); err != nil {
		return err
	}
	return o.RunErr
}
