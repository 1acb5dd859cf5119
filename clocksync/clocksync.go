// Package clocksync measures the offset of this host's wall clock against
// a reference clock over HTTP, the way NTP does with its four timestamps,
// so that the shards of a test run on several hosts (docs/sharding.md)
// can start their schedules at one moment and record how well their
// clocks agreed.
//
// The reference serves GET Path (Handler): the time its handler received
// the request and the time it answered, in nanoseconds since the Unix
// epoch. The client notes when it sent the request (t0) and when the answer
// came back (t3); with the server's receive (t1) and send (t2) times,
//
//	offset      θ = ((t1 − t0) + (t2 − t3)) / 2   (reference − local)
//	round trip  δ = (t3 − t0) − (t2 − t1)
//
// and the true offset lies within θ ± δ/2 whatever the split of the round
// trip between the two directions. Measure makes several exchanges and
// keeps the one with the shortest round trip, whose bound is tightest.
// An HTTP Date header, to the second, is far too coarse for this.
//
// `aimeter serve openai` and the tester's service (`aimeter server`) both
// serve Path; any program can mount Handler.
package clocksync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Path is the time endpoint.
const Path = "/api/v1/time"

// Stamp is the endpoint's answer: when the server received the request and
// when it sent the answer, in ns since the Unix epoch on its clock.
type Stamp struct {
	ReceiveUnixNs int64 `json:"receive_unix_ns"`
	SendUnixNs    int64 `json:"send_unix_ns"`
}

// Handler serves Path: a GET answered with a Stamp in JSON. now is the
// server's clock; nil means time.Now.
func Handler(now func() time.Time) http.Handler {
	if now == nil {
		now = time.Now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		recv := now()
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "GET only", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		// The send time is taken as late as the encoding allows: the
		// body is a few dozen bytes.
		b, _ := json.Marshal(Stamp{ReceiveUnixNs: recv.UnixNano(), SendUnixNs: now().UnixNano()})
		w.Write(append(b, '\n'))
	})
}

// Options are Measure's. The zero value makes DefaultExchanges exchanges
// with http.DefaultClient on time.Now.
type Options struct {
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
	// Exchanges is how many exchanges to make; 0 means DefaultExchanges.
	// The first one is made twice, the first time only to open the
	// connection, whose set-up would lengthen its round trip.
	Exchanges int
	// Now is the local clock; nil means time.Now.
	Now func() time.Time
}

// DefaultExchanges is the default Options.Exchanges.
const DefaultExchanges = 8

// Measurement is this host's clock against the reference.
type Measurement struct {
	// URL is the endpoint asked.
	URL string `json:"url"`
	// Offset is the reference's clock minus this host's (θ): a local time
	// t is t + Offset on the reference's clock.
	Offset time.Duration `json:"offset_ns"`
	// Uncertainty bounds the error of Offset: half the round trip (δ/2)
	// of the exchange it came from.
	Uncertainty time.Duration `json:"uncertainty_ns"`
	// RoundTrip is that exchange's round trip less the server's time (δ).
	RoundTrip time.Duration `json:"round_trip_ns"`
	// Exchanges is how many exchanges were made.
	Exchanges int `json:"exchanges"`
	// At is when the chosen exchange was made, on the local clock.
	At time.Time `json:"at"`
}

// Endpoint is the time endpoint of a reference given by its base URL:
// ref itself when it names a path other than "/", else ref with Path.
func Endpoint(ref string) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("clock reference %q: %w", ref, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("clock reference %q: want an http:// or https:// URL of a server that serves %s (aimeter serve, aimeter server)", ref, Path)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = Path
	}
	return u.String(), nil
}

// Measure measures this host's clock against the reference at ref (see
// Endpoint). It fails when no exchange succeeds, naming what went wrong
// with the last one; an answer whose times are missing, or whose send
// precedes its receive, is no exchange.
func Measure(ctx context.Context, ref string, o Options) (Measurement, error) {
	endpoint, err := Endpoint(ref)
	if err != nil {
		return Measurement{}, err
	}
	client, now, n := o.Client, o.Now, o.Exchanges
	if client == nil {
		client = http.DefaultClient
	}
	if now == nil {
		now = time.Now
	}
	if n <= 0 {
		n = DefaultExchanges
	}
	best := Measurement{URL: endpoint, RoundTrip: -1}
	var last error
	for i := -1; i < n; i++ { // i = −1 opens the connection
		t0, st, t3, err := exchange(ctx, client, endpoint, now)
		if err != nil {
			if ctx.Err() != nil {
				return Measurement{}, fmt.Errorf("measuring the clock against %s: %w", endpoint, context.Cause(ctx))
			}
			last = err
			continue
		}
		if i < 0 {
			continue
		}
		best.Exchanges++
		// Round trip on the local clock (monotonic where it has it).
		rtt := t3.Sub(t0) - time.Duration(st.SendUnixNs-st.ReceiveUnixNs)
		if rtt < 0 {
			rtt = 0
		}
		if best.RoundTrip >= 0 && rtt >= best.RoundTrip {
			continue
		}
		l0, l3 := t0.UnixNano(), t3.UnixNano()
		best.Offset = time.Duration(((st.ReceiveUnixNs - l0) + (st.SendUnixNs - l3)) / 2)
		best.RoundTrip, best.Uncertainty, best.At = rtt, rtt/2, t0
	}
	if best.Exchanges == 0 {
		if last == nil {
			last = errors.New("no exchange made")
		}
		return Measurement{}, fmt.Errorf("cannot measure the clock offset against %s: %w", endpoint, last)
	}
	return best, nil
}

// exchange makes one request: when it was sent, the server's stamp, when
// the answer came.
func exchange(ctx context.Context, client *http.Client, endpoint string, now func() time.Time) (time.Time, Stamp, time.Time, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return time.Time{}, Stamp{}, time.Time{}, err
	}
	t0 := now()
	resp, err := client.Do(req)
	if err != nil {
		return time.Time{}, Stamp{}, time.Time{}, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	t3 := now()
	resp.Body.Close()
	if err != nil {
		return time.Time{}, Stamp{}, time.Time{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return time.Time{}, Stamp{}, time.Time{}, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	var st Stamp
	if err := json.Unmarshal(body, &st); err != nil {
		return time.Time{}, Stamp{}, time.Time{}, fmt.Errorf("the answer is not a time stamp ({\"receive_unix_ns\":…,\"send_unix_ns\":…}): %w", err)
	}
	if st.ReceiveUnixNs <= 0 || st.SendUnixNs < st.ReceiveUnixNs {
		return time.Time{}, Stamp{}, time.Time{}, fmt.Errorf("the answer's times are not a receive and a later send: %+v", st)
	}
	return t0, st, t3, nil
}
