package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc"
)

// Listening is a KServe server serving on its listeners: what Listen
// started. Its methods are safe for concurrent use.
type Listening struct {
	// HTTPAddr and GRPCAddr are the addresses served, nil for a protocol
	// not served (an empty address given to Listen).
	HTTPAddr, GRPCAddr net.Addr

	hs   *http.Server
	gs   *grpc.Server
	errc chan error
}

// Listen serves k over HTTP/REST on httpAddr and over gRPC on grpcAddr
// (host:port; port 0 picks a free port; an empty address serves no such
// protocol, and both empty is an error). The HTTP server bounds the time
// to read a request's headers. It returns once both listeners are open; a
// failure to open one closes the other and is a *ListenError.
// End it with Shutdown or Close; k itself is the caller's to close after.
func (k *KServe) Listen(httpAddr, grpcAddr string) (*Listening, error) {
	if httpAddr == "" && grpcAddr == "" {
		return nil, errors.New("serve: no HTTP nor gRPC address: nothing to serve")
	}
	s := &Listening{errc: make(chan error, 2)}
	var hl net.Listener
	if httpAddr != "" {
		l, err := net.Listen("tcp", httpAddr)
		if err != nil {
			return nil, &ListenError{Protocol: "HTTP/REST", Addr: httpAddr, Err: err}
		}
		hl, s.HTTPAddr = l, l.Addr()
		s.hs = &http.Server{Handler: k, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := s.hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
				s.errc <- fmt.Errorf("HTTP server: %w", err)
			}
		}()
	}
	if grpcAddr != "" {
		l, err := net.Listen("tcp", grpcAddr)
		if err != nil {
			if s.hs != nil {
				// Closed here too: Serve, in its goroutine, may not have
				// taken the listener yet.
				_ = s.hs.Close()
				_ = hl.Close()
			}
			return nil, &ListenError{Protocol: "gRPC", Addr: grpcAddr, Err: err}
		}
		s.GRPCAddr = l.Addr()
		s.gs = grpc.NewServer()
		k.RegisterGRPC(s.gs)
		go func() {
			if err := s.gs.Serve(l); err != nil { // nil after Stop or GracefulStop
				s.errc <- fmt.Errorf("gRPC server: %w", err)
			}
		}()
	}
	return s, nil
}

// ListenError is Listen's failure to open one listener.
type ListenError struct {
	// Protocol is "HTTP/REST" or "gRPC"; Addr the address asked for.
	Protocol, Addr string
	Err            error
}

func (e *ListenError) Error() string {
	return fmt.Sprintf("%s listener on %s: %v", e.Protocol, e.Addr, e.Err)
}

func (e *ListenError) Unwrap() error { return e.Err }

// HTTPURL is the base URL of the HTTP/REST server ("http://host:port"),
// or "" when HTTP is not served.
func (s *Listening) HTTPURL() string {
	if s.HTTPAddr == nil {
		return ""
	}
	return "http://" + s.HTTPAddr.String()
}

// Err delivers the error of a server that stopped serving by itself (its
// listener failed); Shutdown and Close send nothing on it.
func (s *Listening) Err() <-chan error { return s.errc }

// Shutdown stops accepting requests and waits for those in progress until
// ctx ends, then closes every connection.
func (s *Listening) Shutdown(ctx context.Context) {
	if s.hs != nil {
		_ = s.hs.Shutdown(ctx)
	}
	if s.gs != nil {
		done := make(chan struct{})
		go func() { s.gs.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			s.gs.Stop()
		}
	}
}

// Close stops both servers at once, closing every connection.
func (s *Listening) Close() {
	if s.hs != nil {
		_ = s.hs.Close()
	}
	if s.gs != nil {
		s.gs.Stop()
	}
}
