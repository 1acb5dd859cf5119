package clocksync_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"aimeter/clocksync"
	"aimeter/serve"
	"aimeter/store"
	"aimeter/tester"
)

// TestServersServeTheTime measures against the two servers a shard may be
// given as its reference: `aimeter serve openai` and the tester's service.
func TestServersServeTheTime(t *testing.T) {
	oa, err := serve.NewOpenAI(serve.OpenAIOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer oa.Close()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), store.Options{DSN: filepath.Join(dir, "results.db"), FilesDir: filepath.Join(dir, "results")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ts, err := tester.New(tester.Options{Store: st, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []struct {
		name string
		h    http.Handler
	}{{"serve openai", oa}, {"the tester's service", ts}} {
		srv := httptest.NewServer(row.h)
		m, err := clocksync.Measure(context.Background(), srv.URL, clocksync.Options{Client: srv.Client(), Exchanges: 3})
		srv.Close()
		if err != nil {
			t.Fatalf("%s: %v", row.name, err)
		}
		// Same host, same clock: the offset is within its bound of 0.
		if m.Offset > m.Uncertainty || -m.Offset > m.Uncertainty {
			t.Errorf("%s: offset %v ± %v does not contain 0", row.name, m.Offset, m.Uncertainty)
		}
	}
}
