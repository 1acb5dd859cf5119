package collect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"aimeter/train"
)

// ClientOptions configure a Client.
type ClientOptions struct {
	// URL is the collector's base URL, such as "http://10.0.0.1:9090".
	// Required.
	URL string
	// Node and Rank name the rank; they fill events that leave them
	// zero. Node is required.
	Node string
	Rank int
	// HTTP is the HTTP client; nil means one with a 10 s timeout.
	HTTP *http.Client
	// Clock is the rank's monotonic clock in ns (any origin); it fills
	// Event.Mono and is what offsets are measured against. Nil means the
	// time since NewClient.
	Clock func() int64
	// Wall is the rank's wall clock; it fills a zero Event.Wall. Nil
	// means time.Now.
	Wall func() time.Time
	// BatchSize is how many events Add buffers before posting them. Zero
	// means 256.
	BatchSize int
	// Retries is how many times a batch is re-sent after a connection
	// error (never after an HTTP answer). Zero means 3; negative means
	// none.
	Retries int
	// Backoff is the wait before the first retry, doubled each time. Zero
	// means 100 ms.
	Backoff time.Duration
}

// Client posts one rank's events to a collector. It is not safe for
// concurrent use: a rank has one.
type Client struct {
	opts  ClientOptions
	url   string
	buf   []train.Event
	seq   uint64
	sent  int64
	start time.Time
	body  bytes.Buffer
}

// NewClient returns a client for one rank.
func NewClient(opts ClientOptions) (*Client, error) {
	if opts.URL == "" {
		return nil, errors.New("collect: ClientOptions.URL is empty")
	}
	if opts.Node == "" {
		return nil, errors.New("collect: ClientOptions.Node is empty")
	}
	if opts.Rank < 0 {
		return nil, fmt.Errorf("collect: ClientOptions.Rank %d is negative", opts.Rank)
	}
	c := &Client{opts: opts, url: strings.TrimRight(opts.URL, "/"), start: time.Now()}
	if c.opts.HTTP == nil {
		c.opts.HTTP = &http.Client{Timeout: 10 * time.Second}
	}
	if c.opts.Clock == nil {
		c.opts.Clock = func() int64 { return int64(time.Since(c.start)) }
	}
	if c.opts.Wall == nil {
		c.opts.Wall = time.Now
	}
	if c.opts.BatchSize <= 0 {
		c.opts.BatchSize = 256
	}
	if c.opts.Retries == 0 {
		c.opts.Retries = 3
	}
	if c.opts.Backoff <= 0 {
		c.opts.Backoff = 100 * time.Millisecond
	}
	return c, nil
}

// Offset is the result of a clock synchronisation.
type Offset struct {
	// OffsetNS is the collector's clock minus the rank's, in ns.
	OffsetNS int64
	// RTTNS is the round trip of the best sample; the true offset is
	// within RTTNS/2 of OffsetNS.
	RTTNS int64
	// Samples is how many exchanges were made.
	Samples int
}

// Sync measures the clock offset with n exchanges (zero means 8), keeps
// the one with the shortest round trip and reports it to the collector.
func (c *Client) Sync(ctx context.Context, n int) (Offset, error) {
	if n <= 0 {
		n = 8
	}
	best := Offset{RTTNS: -1, Samples: n}
	for range n {
		t0 := c.opts.Clock()
		var rep ClockReply
		if err := c.call(ctx, "/v1/clock", ClockRequest{Rank: c.opts.Rank, Node: c.opts.Node, T0: t0}, &rep); err != nil {
			return Offset{}, err
		}
		t3 := c.opts.Clock()
		rtt := (t3 - t0) - (rep.T2 - rep.T1)
		off := ((rep.T1 - t0) + (rep.T2 - t3)) / 2
		if best.RTTNS < 0 || rtt < best.RTTNS {
			best.OffsetNS, best.RTTNS = off, max(rtt, 0)
		}
	}
	err := c.call(ctx, "/v1/offset", OffsetReport{Rank: c.opts.Rank, Node: c.opts.Node, OffsetNS: best.OffsetNS, RTTNS: best.RTTNS, Samples: n}, nil)
	return best, err
}

// Now returns the rank's clock reading, for events made by hand.
func (c *Client) Now() int64 { return c.opts.Clock() }

// Add buffers an event, filling a zero Mono, Wall, Node and Rank from the
// client's clocks and options, and posts the buffer when it is full.
func (c *Client) Add(ctx context.Context, e train.Event) error {
	if e.Mono == 0 {
		e.Mono = c.opts.Clock()
	}
	if e.Wall.IsZero() {
		e.Wall = c.opts.Wall()
	}
	if e.Node == "" {
		e.Node = c.opts.Node
	}
	if e.Rank == 0 {
		e.Rank = c.opts.Rank
	}
	c.buf = append(c.buf, e)
	if len(c.buf) >= c.opts.BatchSize {
		return c.Flush(ctx)
	}
	return nil
}

// Sent is the number of events the collector has acknowledged.
func (c *Client) Sent() int64 { return c.sent }

// Flush posts the buffered events as one batch with the next sequence
// number, retrying only after connection errors (see the package
// comment). When the connection still fails after the retries, the events
// stay buffered and the next Flush sends them again under the same
// sequence number. When the collector answers with an error (an invalid
// batch, a full store), the batch is dropped and the error says so:
// sending it again would be refused again.
func (c *Client) Flush(ctx context.Context) error {
	if len(c.buf) == 0 {
		return nil
	}
	c.body.Reset()
	if err := json.NewEncoder(&c.body).Encode(c.buf); err != nil {
		return fmt.Errorf("collect: encoding events: %w", err)
	}
	seq := strconv.FormatUint(c.seq, 10)
	wait := c.opts.Backoff
	for try := 0; ; try++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/v1/events", bytes.NewReader(c.body.Bytes()))
		if err != nil {
			return fmt.Errorf("collect: %s/v1/events: %w", c.url, err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(SeqHeader, seq)
		resp, err := c.opts.HTTP.Do(req)
		if err != nil {
			if ctx.Err() != nil || try >= c.opts.Retries || c.opts.Retries < 0 {
				return fmt.Errorf("collect: posting batch %s to %s: %w", seq, c.url, err)
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("collect: posting batch %s to %s: %w", seq, c.url, ctx.Err())
			case <-t.C:
			}
			wait *= 2
			continue
		}
		err = answer(resp, nil)
		n := len(c.buf)
		c.buf = c.buf[:0]
		c.seq++
		if err != nil {
			return fmt.Errorf("collect: batch %s of %d events to %s refused, dropped: %w", seq, n, c.url, err)
		}
		c.sent += int64(n)
		return nil
	}
}

// call posts v as JSON to path and decodes the answer into out.
func (c *Client) call(ctx context.Context, path string, v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("collect: %s: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+path, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("collect: %s%s: %w", c.url, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.opts.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("collect: %s%s: %w", c.url, path, err)
	}
	if err := answer(resp, out); err != nil {
		return fmt.Errorf("collect: %s%s: %w", c.url, path, err)
	}
	return nil
}

// answer reads a response: an error with the collector's message for a
// status other than 200, else the JSON body into out (when not nil).
func answer(resp *http.Response, out any) error {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("reading answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		return fmt.Errorf("%s: %s", resp.Status, e.Error)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return fmt.Errorf("decoding answer: %w", err)
		}
	}
	return nil
}
