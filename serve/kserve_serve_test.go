package serve

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestServeKServe serves a null model until the context ends, then stops
// serving; a refused model is NewKServe's error and serves nothing.
func TestServeKServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- ServeKServe(ctx, KServeOptions{NullModel: true}, KServeServeOptions{
			HTTP: "127.0.0.1:0", Ready: func(l *Listening) { ready <- l.HTTPURL() },
		})
	}()
	var url string
	select {
	case url = <-ready:
	case err := <-done:
		t.Fatalf("ServeKServe returned %v before it was ready", err)
	}
	res, err := http.Get(url + "/v2/health/ready")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("ready: %v %v", res, err)
	}
	res.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeKServe after the context ended: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ServeKServe did not return after the context ended")
	}
	if _, err := http.Get(url + "/v2/health/ready"); err == nil {
		t.Error("still served after ServeKServe returned")
	}

	called := false
	err = ServeKServe(context.Background(), KServeOptions{}, KServeServeOptions{
		HTTP: "127.0.0.1:0", Ready: func(*Listening) { called = true },
	})
	if err == nil || called {
		t.Errorf("no model: err %v, Ready called %v; want NewKServe's error and nothing served", err, called)
	}
	var le *ListenError
	if errors.As(err, &le) {
		t.Errorf("no model gave a ListenError: %v", err)
	}
}
