package netsut

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"aimeter/loadgen"
)

// closedAddr returns the address of a port nobody listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// resetServer accepts connections and resets them at once (SO_LINGER 0).
func resetServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			// Wait for the request, so that the reset comes after it.
			buf := make([]byte, 4096)
			_, _ = c.Read(buf)
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
	}()
	return l.Addr().String()
}

// TestClassOfRealErrors: the category of errors that real clients return.
func TestClassOfRealErrors(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hang.Close()
	reset := resetServer(t)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(ctx context.Context, url string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		res, err := client.Do(req)
		if err == nil {
			res.Body.Close()
			return errors.New("no error")
		}
		return err
	}
	for _, tc := range []struct {
		name    string
		err     func(ctx context.Context) error
		started bool
		want    string
	}{
		{"dial a closed port", func(ctx context.Context) error { return get(ctx, "http://"+closedAddr(t)+"/") }, false, CategoryConnectionRefused},
		{"net.Dial a closed port", func(ctx context.Context) error {
			_, err := net.Dial("tcp", closedAddr(t))
			return err
		}, false, CategoryConnectionRefused},
		{"a server that resets", func(ctx context.Context) error { return get(ctx, "http://"+reset+"/") }, false, CategoryConnectionReset},
		{"a TLS handshake with a plain server", func(ctx context.Context) error { return get(ctx, "https://"+plain.Listener.Addr().String()+"/") }, false, CategoryTLS},
		{"tls.Dial a plain server", func(ctx context.Context) error {
			c, err := tls.Dial("tcp", plain.Listener.Addr().String(), &tls.Config{InsecureSkipVerify: true})
			if err == nil {
				c.Close()
			}
			return err
		}, false, CategoryTLS},
		{"an untrusted certificate", func(ctx context.Context) error {
			s := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			defer s.Close()
			return get(ctx, s.URL)
		}, false, CategoryTLS},
		{"a request past its deadline", func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			err := get(ctx, hang.URL)
			return &ctxErr{ctx, err}
		}, false, CategoryRequestTimeout},
		{"a response that stopped before the deadline", func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			err := get(ctx, hang.URL)
			return &ctxErr{ctx, err}
		}, true, CategoryStreamStalled},
		{"a dial past the dialer's timeout", func(ctx context.Context) error {
			// 1ns: the dial times out before it starts, without a network.
			_, err := (&net.Dialer{Timeout: time.Nanosecond}).Dial("tcp", "192.0.2.1:80")
			return err
		}, false, CategoryConnectTimeout},
		{"a DNS failure", func(ctx context.Context) error {
			return &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}}
		}, false, CategoryConnect},
		{"an EOF before any response", func(ctx context.Context) error { return fmt.Errorf("read: %w", io.EOF) }, false, CategoryConnectionReset},
		{"an EOF in the body", func(ctx context.Context) error { return fmt.Errorf("read: %w", io.ErrUnexpectedEOF) }, true, CategoryStreamTruncated},
		{"anything else", func(ctx context.Context) error { return errors.New("net/http: malformed HTTP response") }, false, CategoryProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err(context.Background())
			ctx := context.Background()
			if ce, ok := err.(*ctxErr); ok {
				ctx, err = ce.ctx, ce.err
			}
			if got := ClassOf(ctx, err, tc.started); got != tc.want {
				t.Errorf("ClassOf(%v) = %q, want %q", err, got, tc.want)
			}
			var c *loadgen.CategoryError
			if !errors.As(Classify(ctx, err, tc.started), &c) || c.Kind != tc.want {
				t.Errorf("Classify(%v) = %v", err, c)
			}
		})
	}
}

// ctxErr carries an error with the context it happened under.
type ctxErr struct {
	ctx context.Context
	err error
}

func (e *ctxErr) Error() string { return e.err.Error() }

// TestClassifyKeepsACategory: an error that has a category keeps it, and
// a cancelled request is the client's.
func TestClassifyKeepsACategory(t *testing.T) {
	err := HTTPError(503, errors.New("HTTP 503"))
	if got := Classify(context.Background(), err, false); got != err {
		t.Errorf("Classify changed %v to %v", err, got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := ClassOf(ctx, errors.New("x"), false); got != CategoryClient {
		t.Errorf("cancelled: %q", got)
	}
	for status, want := range map[int]string{404: CategoryHTTP4xx, 429: CategoryHTTP4xx, 500: CategoryHTTP5xx, 503: CategoryHTTP5xx, 302: CategoryHTTPStatus} {
		var c *loadgen.CategoryError
		if !errors.As(HTTPError(status, errors.New("x")), &c) || c.Kind != want || c.Code != status {
			t.Errorf("HTTPError(%d) = %+v, want %s", status, c, want)
		}
	}
	var c *loadgen.CategoryError
	if !errors.As(GRPCError(14, "Unavailable", errors.New("x")), &c) || c.Kind != CategoryGRPC || c.Code != 14 || c.CodeName != "Unavailable" {
		t.Errorf("GRPCError = %+v", c)
	}
}
