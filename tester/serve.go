package tester

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"aimeter/store"
)

// DefaultShutdownTimeout bounds Serve's graceful shutdown when
// ServeOptions.ShutdownTimeout is 0.
const DefaultShutdownTimeout = 10 * time.Second

// ServeOptions configure Serve.
type ServeOptions struct {
	// Listen is the address to serve HTTPS on (host:port).
	Listen string
	// DataDir holds the admin token, the self-signed certificate, the
	// uploads and the result files; "" means DefaultDataDir().
	DataDir string
	// DSN is the database, an SQLite file or a postgres:// DSN; "" means
	// server.db in DataDir.
	DSN string
	// CertFile and KeyFile are the TLS certificate and key (PEM), both or
	// neither; neither uses the self-signed certificate in DataDir, made on
	// first start for localhost, the host's name and Hosts.
	CertFile, KeyFile string
	// Hosts are extra host names or IP addresses of a self-signed
	// certificate.
	Hosts []string
	// StoreFlagged is Options.StoreFlagged.
	StoreFlagged bool
	// Logger is Options.Logger.
	Logger *slog.Logger
	// Ready, if set, is called once the service listens.
	Ready func(Listening)
	// Stopping, if set, is called when ctx ends, before the graceful
	// shutdown.
	Stopping func()
	// ShutdownTimeout bounds the graceful shutdown; 0 means
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration

	// Limits and admission: Options' fields of the same names.
	MaxUploadBytes       int64
	UploadTimeout        time.Duration
	MemoryBudget         int64
	MaxConcurrentUploads int
	MaxQueuedUploads     int
	MaxQueueWait         time.Duration

	// Dashboard sessions: Options' fields of the same names.
	SessionLifetime    time.Duration
	SessionIdleTimeout time.Duration
}

// Timeouts of Serve's HTTP server against clients that hold a connection
// without using it (slowloris): the request's headers must arrive within
// ReadHeaderTimeout, and a kept-alive connection is closed after
// IdleTimeout without a request. An upload's body is bounded by
// Options.UploadTimeout; other bodies are small and bounded in size.
const (
	ReadHeaderTimeout = 10 * time.Second
	IdleTimeout       = 2 * time.Minute
)

// Listening describes a service that Serve started.
type Listening struct {
	// Addr is the address it listens on.
	Addr net.Addr
	// AdminTokenFile is the path of the admin token file.
	AdminTokenFile string
	// SelfSignedCert is the path of the self-signed certificate in use; ""
	// when ServeOptions named a certificate.
	SelfSignedCert string
	// CertCreated says whether the self-signed certificate was made now.
	CertCreated bool
}

// ListenError is Serve's error when it cannot listen on Addr.
type ListenError struct {
	Addr string
	Err  error
}

func (e *ListenError) Error() string { return e.Addr + ": " + e.Err.Error() }
func (e *ListenError) Unwrap() error { return e.Err }

// TLSError is Serve's error when the TLS certificate cannot be used or
// made; its text is the cause's.
type TLSError struct{ Err error }

func (e *TLSError) Error() string { return e.Err.Error() }
func (e *TLSError) Unwrap() error { return e.Err }

// DefaultDataDir is the service's data directory when none is given: the
// "server" folder of the user's aimeter data directory (store.DataDir).
func DefaultDataDir() (string, error) {
	d, err := store.DataDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "server"), nil
}

// Serve runs the tester's service until ctx ends, then shuts it down
// gracefully and returns nil: it makes the data directory, the TLS
// configuration (TLSError), opens the store, makes the Server (New) and
// serves HTTPS on o.Listen (ListenError).
func Serve(ctx context.Context, o ServeOptions) error {
	if o.DataDir == "" {
		d, err := DefaultDataDir()
		if err != nil {
			return err
		}
		o.DataDir = d
	}
	if o.DSN == "" {
		o.DSN = filepath.Join(o.DataDir, "server.db")
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return err
	}
	tlsCfg, created, err := TLSConfig(o.CertFile, o.KeyFile, o.DataDir, o.Hosts)
	if err != nil {
		return &TLSError{err}
	}
	db, err := store.Open(ctx, store.Options{DSN: o.DSN, FilesDir: filepath.Join(o.DataDir, "results")})
	if err != nil {
		return err
	}
	defer db.Close()
	srv, err := New(Options{Store: db, DataDir: o.DataDir, Logger: o.Logger, StoreFlagged: o.StoreFlagged,
		MaxUploadBytes: o.MaxUploadBytes, UploadTimeout: o.UploadTimeout, MemoryBudget: o.MemoryBudget,
		MaxConcurrentUploads: o.MaxConcurrentUploads, MaxQueuedUploads: o.MaxQueuedUploads, MaxQueueWait: o.MaxQueueWait,
		SessionLifetime: o.SessionLifetime, SessionIdleTimeout: o.SessionIdleTimeout})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return &ListenError{Addr: o.Listen, Err: err}
	}
	hs := &http.Server{Handler: srv, TLSConfig: tlsCfg, ReadHeaderTimeout: ReadHeaderTimeout, IdleTimeout: IdleTimeout}
	if o.Ready != nil {
		l := Listening{Addr: ln.Addr(), AdminTokenFile: filepath.Join(o.DataDir, AdminTokenFile), CertCreated: created}
		if o.CertFile == "" {
			l.SelfSignedCert = filepath.Join(o.DataDir, filepath.FromSlash(SelfSignedCertFile))
		}
		o.Ready(l)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.ServeTLS(ln, "", "") }()
	// Sharded tests whose shards were all stored before a stop, but not
	// merged, are merged now (their errors are logged).
	go srv.ResumeShardMerges(ctx)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		if o.Stopping != nil {
			o.Stopping()
		}
		d := o.ShutdownTimeout
		if d == 0 {
			d = DefaultShutdownTimeout
		}
		return Shutdown(hs, d)
	}
}
