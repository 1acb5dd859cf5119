package serve

import (
	"context"
	"time"
)

// KServeServeOptions configure ServeKServe.
type KServeServeOptions struct {
	// HTTP and GRPC are the listen addresses (Listen); an empty one serves
	// no such protocol.
	HTTP, GRPC string
	// Ready, if set, is called once the listeners are open.
	Ready func(*Listening)
	// ShutdownTimeout bounds the graceful shutdown; 0 means
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
}

// ServeKServe serves a KServe v2 server with the given options (NewKServe)
// on so's addresses (Listen) until ctx ends or a server fails, then shuts
// it down gracefully and closes it. The error is NewKServe's, a
// *ListenError, or the failed server's; nil when ctx ended.
func ServeKServe(ctx context.Context, opts KServeOptions, so KServeServeOptions) error {
	k, err := NewKServe(opts)
	if err != nil {
		return err
	}
	defer k.Close()
	srv, err := k.Listen(so.HTTP, so.GRPC)
	if err != nil {
		return err
	}
	if so.Ready != nil {
		so.Ready(srv)
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-srv.Err():
	}
	timeout := so.ShutdownTimeout
	if timeout == 0 {
		timeout = DefaultShutdownTimeout
	}
	shut, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	srv.Shutdown(shut)
	return serveErr
}
