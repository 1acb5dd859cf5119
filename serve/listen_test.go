package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestListen serves a null model over both protocols, then over one, and
// refuses what cannot be served: no address at all, and an address in use,
// which names the protocol and leaves nothing open.
func TestListen(t *testing.T) {
	k, err := NewKServe(KServeOptions{NullModel: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()

	srv, err := k.Listen("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(srv.HTTPURL() + "/v2/health/ready")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("ready: %v %v", res, err)
	}
	res.Body.Close()
	c, err := net.Dial("tcp", srv.GRPCAddr.String())
	if err != nil {
		t.Fatalf("gRPC listener: %v", err)
	}
	c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	srv.Shutdown(ctx)
	cancel()
	select {
	case err := <-srv.Err():
		t.Errorf("Shutdown sent %v on Err", err)
	default:
	}
	if _, err := http.Get(srv.HTTPURL() + "/v2/health/ready"); err == nil {
		t.Error("HTTP still served after Shutdown")
	}

	only, err := k.Listen("", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if only.HTTPAddr != nil || only.HTTPURL() != "" || only.GRPCAddr == nil {
		t.Errorf("gRPC only: HTTP %v %q, gRPC %v", only.HTTPAddr, only.HTTPURL(), only.GRPCAddr)
	}
	busy := only.GRPCAddr.String()

	if _, err := k.Listen("", ""); err == nil {
		t.Error("no address accepted")
	}
	// The gRPC port is taken: the HTTP listener opened first must be
	// closed again, and the error names gRPC and the address.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	httpAddr := free.Addr().String()
	free.Close()
	_, err = k.Listen(httpAddr, busy)
	var le *ListenError
	if !errors.As(err, &le) || le.Protocol != "gRPC" || le.Addr != busy || !strings.Contains(err.Error(), busy) {
		t.Fatalf("err %v: want a ListenError for gRPC on %s", err, busy)
	}
	again, err := net.Listen("tcp", httpAddr)
	if err != nil {
		t.Errorf("the HTTP listener was left open after the gRPC one failed: %v", err)
	} else {
		again.Close()
	}
	only.Close()
}
