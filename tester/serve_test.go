package tester

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestServe starts the service in a fresh data directory, reports where it
// listens, its admin token and the new self-signed certificate, and stops
// gracefully when the context ends.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan Listening, 1)
	stopping := false
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{Listen: "127.0.0.1:0", DataDir: dir, Ready: func(l Listening) { ready <- l }, Stopping: func() { stopping = true }})
	}()
	l := <-ready
	if l.Addr == nil || !l.CertCreated || l.AdminTokenFile != filepath.Join(dir, AdminTokenFile) || l.SelfSignedCert != filepath.Join(dir, filepath.FromSlash(SelfSignedCertFile)) {
		t.Errorf("listening %+v", l)
	}
	for _, f := range []string{l.AdminTokenFile, l.SelfSignedCert, filepath.Join(dir, "server.db")} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	cancel()
	if err := <-done; err != nil || !stopping {
		t.Errorf("stop: %v, Stopping called %v", err, stopping)
	}
}

// TestServeErrors: a certificate without its key is a TLSError, an address
// in use a ListenError.
func TestServeErrors(t *testing.T) {
	var te *TLSError
	if err := Serve(context.Background(), ServeOptions{Listen: "127.0.0.1:0", DataDir: t.TempDir(), CertFile: "cert.pem"}); !errors.As(err, &te) {
		t.Errorf("cert without key: %v (%T)", err, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var le *ListenError
	if err := Serve(context.Background(), ServeOptions{Listen: ln.Addr().String(), DataDir: t.TempDir()}); !errors.As(err, &le) || le.Addr != ln.Addr().String() {
		t.Errorf("address in use: %v (%T)", err, err)
	}
}
