package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// DefaultShutdownTimeout bounds ServeOpenAI's graceful shutdown when
// OpenAIServeOptions.ShutdownTimeout is 0.
const DefaultShutdownTimeout = 5 * time.Second

// OpenAIServeOptions configure ServeOpenAI.
type OpenAIServeOptions struct {
	// Addr is the listen address (host:port; port 0 picks a free one).
	Addr string
	// SendLog, if set, is the file the send log is written to
	// (OpenAIOptions.SendLog), buffered.
	SendLog string
	// Ready, if set, is called once the simulator listens.
	Ready func(addr net.Addr)
	// ShutdownFailed, if set, is called when the graceful shutdown did not
	// end within the timeout; the connections were closed.
	ShutdownFailed func(timeout time.Duration, err error)
	// ShutdownTimeout bounds the graceful shutdown; 0 means
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
}

// SendLogError is ServeOpenAI's failure to create (Create) or write the
// send log at Path.
type SendLogError struct {
	Path   string
	Create bool
	Err    error
}

func (e *SendLogError) Error() string { return "send log " + e.Path + ": " + e.Err.Error() }
func (e *SendLogError) Unwrap() error { return e.Err }

// OptionsError is ServeOpenAI's error when NewOpenAI refuses the options;
// its text is NewOpenAI's, and it wraps NewOpenAI's *FieldError.
type OptionsError struct{ Err error }

func (e *OptionsError) Error() string { return e.Err.Error() }
func (e *OptionsError) Unwrap() error { return e.Err }

// ServeOpenAI serves the OpenAI-compatible simulator over HTTP/1.1 and
// unencrypted HTTP/2 on so.Addr until ctx ends, then ends its stalls and
// streams, shuts the server down gracefully and flushes the send log. It
// returns what the simulator did, nil when it never served; the error is a
// *SendLogError, an *OptionsError, a *ListenError or the server's.
func ServeOpenAI(ctx context.Context, opts OpenAIOptions, so OpenAIServeOptions) (*OpenAIStats, error) {
	if err := opts.Check(); err != nil {
		return nil, &OptionsError{err} // before the send log is created
	}
	var logFile *os.File
	var logBuf *bufio.Writer
	if so.SendLog != "" {
		var err error
		if logFile, err = os.Create(so.SendLog); err != nil {
			return nil, &SendLogError{Path: so.SendLog, Create: true, Err: err}
		}
		defer logFile.Close()
		logBuf = bufio.NewWriterSize(logFile, 64<<10)
		opts.SendLog = logBuf
	}
	sim, err := NewOpenAI(opts)
	if err != nil {
		return nil, &OptionsError{err}
	}
	ln, err := net.Listen("tcp", so.Addr)
	if err != nil {
		return nil, &ListenError{Protocol: "HTTP", Addr: so.Addr, Err: err}
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 30 * time.Second, Protocols: &protocols}
	if so.Ready != nil {
		so.Ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	sim.Close() // ends stalls and streams, so that Shutdown is prompt
	timeout := so.ShutdownTimeout
	if timeout == 0 {
		timeout = DefaultShutdownTimeout
	}
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		if so.ShutdownFailed != nil {
			so.ShutdownFailed(timeout, err)
		}
	}
	if serveErr == nil {
		serveErr = <-errc
	}
	stats := sim.Stats()
	if logBuf != nil {
		if err := errors.Join(sim.SendLogErr(), logBuf.Flush(), logFile.Close()); err != nil {
			return &stats, &SendLogError{Path: so.SendLog, Err: err}
		}
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return &stats, fmt.Errorf("serving on %s: %w", ln.Addr(), serveErr)
	}
	return &stats, nil
}
