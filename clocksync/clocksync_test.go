package clocksync

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeNet is a transport with its own clock: a request takes out to reach
// the server, whose clock is the local one plus offset, and back to return;
// the server takes hold between receiving and sending.
type fakeNet struct {
	local        time.Time
	offset, hold time.Duration
	out, back    []time.Duration // per exchange, cycled
	n            int
	handler      http.Handler
}

func (f *fakeNet) now() time.Time { return f.local }

func (f *fakeNet) RoundTrip(r *http.Request) (*http.Response, error) {
	k := f.n
	f.n++
	f.local = f.local.Add(f.out[k%len(f.out)])
	calls := 0
	h := f.handler
	if h == nil {
		h = Handler(func() time.Time {
			calls++
			if calls == 2 {
				f.local = f.local.Add(f.hold)
			}
			return f.local.Add(f.offset)
		})
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	f.local = f.local.Add(f.back[k%len(f.back)])
	return rec.Result(), nil
}

// TestMeasureFourTimestamps checks the arithmetic on an injected clock and
// network: the shortest round trip is chosen, the offset is θ of that
// exchange, and the true offset lies within its uncertainty.
func TestMeasureFourTimestamps(t *testing.T) {
	for _, row := range []struct {
		why             string
		offset          time.Duration
		out, back       []time.Duration
		wantOffset      time.Duration
		wantUncertainty time.Duration
	}{
		{"symmetric paths: θ is the offset, the uncertainty half the round trip", 3 * time.Second,
			[]time.Duration{10 * time.Millisecond}, []time.Duration{10 * time.Millisecond}, 3 * time.Second, 10 * time.Millisecond},
		{"a slow return path: θ is off by half the asymmetry, within the uncertainty", -250 * time.Millisecond,
			[]time.Duration{10 * time.Millisecond}, []time.Duration{30 * time.Millisecond}, -260 * time.Millisecond, 20 * time.Millisecond},
		{"the fastest of varying exchanges is kept", 42 * time.Microsecond,
			[]time.Duration{50 * time.Millisecond, time.Millisecond, 20 * time.Millisecond}, []time.Duration{50 * time.Millisecond, time.Millisecond, 5 * time.Millisecond},
			42 * time.Microsecond, time.Millisecond},
	} {
		f := &fakeNet{local: time.Unix(1_800_000_000, 0), offset: row.offset, hold: 7 * time.Millisecond, out: row.out, back: row.back}
		m, err := Measure(context.Background(), "http://ref.example", Options{Client: &http.Client{Transport: f}, Now: f.now, Exchanges: 5})
		if err != nil {
			t.Fatalf("%s: %v", row.why, err)
		}
		if m.Offset != row.wantOffset || m.Uncertainty != row.wantUncertainty || m.Exchanges != 5 || m.URL != "http://ref.example"+Path {
			t.Errorf("%s: %+v, want offset %v ± %v after 5 exchanges", row.why, m, row.wantOffset, row.wantUncertainty)
		}
		if d := m.Offset - row.offset; d > m.Uncertainty || -d > m.Uncertainty {
			t.Errorf("%s: the true offset %v is not within %v ± %v", row.why, row.offset, m.Offset, m.Uncertainty)
		}
	}
}

// TestMeasureRealServer measures against a real socket whose clock runs
// 5 s ahead: the bound holds whatever the machine's speed.
func TestMeasureRealServer(t *testing.T) {
	const ahead = 5 * time.Second
	srv := httptest.NewServer(Handler(func() time.Time { return time.Now().Add(ahead) }))
	defer srv.Close()
	m, err := Measure(context.Background(), srv.URL, Options{Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Offset - ahead; d > m.Uncertainty || -d > m.Uncertainty {
		t.Fatalf("offset %v ± %v does not contain the server's %v", m.Offset, m.Uncertainty, ahead)
	}
	if m.Exchanges != DefaultExchanges {
		t.Fatalf("%d exchanges, want %d", m.Exchanges, DefaultExchanges)
	}
}

// TestMeasureRefused checks that an offset that cannot be measured is an
// error saying why.
func TestMeasureRefused(t *testing.T) {
	answer := func(status int, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(status)
			io.WriteString(w, body)
		})
	}
	for _, row := range []struct {
		why, ref string
		handler  http.Handler
		want     string
	}{
		{"not an http URL", "ftp://ref", nil, "want an http:// or https:// URL"},
		{"no host", "http://", nil, "want an http:// or https:// URL"},
		{"no time endpoint there", "", http.NotFoundHandler(), "404"},
		{"not a stamp", "", answer(200, "<html>"), "not a time stamp"},
		{"a send before the receive", "", answer(200, `{"receive_unix_ns":20,"send_unix_ns":10}`), "not a receive and a later send"},
		{"no times", "", answer(200, `{}`), "not a receive and a later send"},
	} {
		ref := row.ref
		if row.handler != nil {
			srv := httptest.NewServer(row.handler)
			ref = srv.URL
			defer srv.Close()
		}
		_, err := Measure(context.Background(), ref, Options{Exchanges: 2})
		if err == nil || !strings.Contains(err.Error(), row.want) {
			t.Errorf("%s: err %v, want one saying %q", row.why, err, row.want)
		}
	}
}

// TestHandlerGetOnly checks the endpoint's method and its stamp.
func TestHandlerGetOnly(t *testing.T) {
	at := time.Unix(1_800_000_000, 123)
	h := Handler(func() time.Time { return at })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, Path, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d, want 405", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, Path, nil))
	if got, want := strings.TrimSpace(rec.Body.String()), `{"receive_unix_ns":1800000000000000123,"send_unix_ns":1800000000000000123}`; got != want {
		t.Fatalf("GET: %s, want %s", got, want)
	}
}
