package tester

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"aimeter/attest"
	"aimeter/bundle"
)

// Client talks to the service for a tester (Register, with the admin
// token) or a tested party (Event, Upload, with the test item's token).
type Client struct {
	// BaseURL is the service's URL, e.g. https://tester.example:8443.
	BaseURL string
	// Token is the bearer token: the admin token or a client token.
	Token string
	// HTTP is the HTTP client; nil means one that trusts the system's
	// roots (see TrustPEM for a self-signed service).
	HTTP *http.Client
	// RetryFor bounds how long Submit keeps retrying an upload the
	// service answers 503 (busy) with a Retry-After header; 0 means
	// DefaultRetryFor, a negative value does not retry.
	RetryFor time.Duration
	// Waiting, if set, is told of each wait before Submit retries.
	Waiting func(RetryWait)
}

// Retries of a busy service (Client.Submit): the first wait is the
// Retry-After the service sent (RetryFirstWait without one), each next one
// doubles up to RetryMaxWait, never below the service's Retry-After, plus
// up to a quarter more at random so that clients refused together do not
// come back together; Submit gives up when the next wait would end after
// RetryFor (DefaultRetryFor).
const (
	RetryFirstWait  = time.Second
	RetryMaxWait    = time.Minute
	DefaultRetryFor = 15 * time.Minute
)

// RetryWait is one wait of Submit before it retries a busy service.
type RetryWait struct {
	// Attempt is the number of the upload that was refused, from 1.
	Attempt int
	// Wait is how long Submit waits now.
	Wait time.Duration
	// Refused is the service's answer.
	Refused *RefusedError
}

// String is one line for the user: "the service is busy (3 uploads
// queued); retrying in 8.0 s", without the count when the service gave
// none.
func (w RetryWait) String() string {
	if w.Refused.Queued > 0 {
		return fmt.Sprintf("the service is busy (%d uploads queued); retrying in %s", w.Refused.Queued, formatWait(w.Wait))
	}
	return "the service is busy; retrying in " + formatWait(w.Wait)
}

func formatWait(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.0f s", d.Seconds())
}

// TrustPEM returns an HTTP client that trusts only the certificates in
// pemData (a self-signed service's certificate, as its configuration file
// carries it).
func TrustPEM(pemData []byte) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemData) {
		return nil, errors.New("server: no PEM certificate to trust")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr}, nil
}

// RefusedError is a refusal from the service: its HTTP status and reasons.
type RefusedError struct {
	Status  int
	Message string
	Reasons []string
	// RetryAfter is the Retry-After header of a 503 (the service is
	// busy); 0 when it sent none.
	RetryAfter time.Duration
	// Queued is a busy service's count of uploads waiting (BusyReply).
	Queued int
	// body is the reply's body, for a caller that reads more of it.
	body []byte
}

// Busy reports whether the service refused because it is busy: a 503
// that a later try may pass.
func (e *RefusedError) Busy() bool { return e.Status == http.StatusServiceUnavailable }

func (e *RefusedError) Error() string {
	s := fmt.Sprintf("the server refused (HTTP %d): %s", e.Status, e.Message)
	for _, r := range e.Reasons {
		s += "\n  " + r
	}
	return s
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) do(req *http.Request, out any) error {
	req.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := c.http().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var er BusyReply
		if json.Unmarshal(body, &er) != nil || er.Error == "" {
			er.Error = strings.TrimSpace(string(body))
		}
		re := &RefusedError{Status: resp.StatusCode, Message: er.Error, Reasons: er.Reasons, Queued: er.Queued, body: body}
		if n, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && n > 0 {
			re.RetryAfter = time.Duration(n) * time.Second
		}
		return re
	}
	if out != nil {
		return json.Unmarshal(body, out)
	}
	return nil
}

func (c *Client) url(p string) string { return strings.TrimSuffix(c.BaseURL, "/") + p }

func (c *Client) postJSON(ctx context.Context, p string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(p), bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return c.do(req, out)
}

// Register registers a test item (admin token).
func (c *Client) Register(ctx context.Context, reg Registration) (*Registered, error) {
	var out Registered
	if err := c.postJSON(ctx, "/api/v1/tests", reg, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Event reports a lifecycle event of the test item (client token).
func (c *Client) Event(ctx context.Context, testID, kind string, detail any) (*EventReply, error) {
	req := EventRequest{Kind: kind, At: time.Now()}
	if detail != nil {
		b, err := json.Marshal(detail)
		if err != nil {
			return nil, err
		}
		req.Detail = b
	}
	var out EventReply
	if err := c.postJSON(ctx, "/api/v1/tests/"+testID+"/events", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Test returns the test item with its runs (admin or its client token).
func (c *Client) Test(ctx context.Context, testID string) (*TestItemView, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url("/api/v1/tests/"+testID), nil)
	if err != nil {
		return nil, err
	}
	var out TestItemView
	if err := c.do(req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Whoami returns the test item of the client token.
func (c *Client) Whoami(ctx context.Context) (*TestItemView, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url("/api/v1/token"), nil)
	if err != nil {
		return nil, err
	}
	var out TestItemView
	if err := c.do(req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Submit signs the bundle in dir with key and uploads it (Upload with a
// fresh upload ID). While the service answers 503 (busy) it waits and
// tries again, each time with a new upload ID (see RetryFirstWait and
// Client.RetryFor); when it gives up, the error is the last refusal.
func (c *Client) Submit(ctx context.Context, testID, dir string, key ed25519.PrivateKey) (*UploadReply, error) {
	env, err := attest.Sign(dir, key)
	if err != nil {
		return nil, err
	}
	retryFor := c.RetryFor
	if retryFor == 0 {
		retryFor = DefaultRetryFor
	}
	start := time.Now()
	step := RetryFirstWait
	for attempt := 1; ; attempt++ {
		rep, err := c.Upload(ctx, testID, dir, env, NewToken("up"))
		var re *RefusedError
		if err == nil || retryFor < 0 || !errors.As(err, &re) || !re.Busy() {
			return rep, err
		}
		if attempt == 1 && re.RetryAfter > 0 {
			step = re.RetryAfter
		}
		wait := max(min(step, RetryMaxWait), re.RetryAfter)
		wait += time.Duration(rand.Int64N(int64(wait)/4 + 1))
		step *= 2
		if time.Since(start)+wait > retryFor {
			return nil, fmt.Errorf("gave up after %s of retries (%d uploads): %w", time.Since(start).Round(time.Second), attempt, err)
		}
		if c.Waiting != nil {
			c.Waiting(RetryWait{Attempt: attempt, Wait: wait, Refused: re})
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// Upload streams the bundle in dir with its envelope under uploadID.
//
// A bundle that an earlier upload stored already (a retry after a lost
// answer, a crash of the service or a copy sent twice) is not stored again:
// the service answers 409 naming the stored run, and when that run is of
// testID and holds this very bundle (its manifest's SHA-256) Upload returns
// the run's reply with StoredAlready set, and no error. Any other 409 (the
// upload ID used for another bundle) is a *RefusedError.
func (c *Client) Upload(ctx context.Context, testID, dir string, env *attest.Envelope, uploadID string) (*UploadReply, error) {
	envJSON, err := env.Marshal()
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		pw.CloseWithError(writeUploadBody(mw, envJSON, dir))
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url("/api/v1/tests/"+testID+"/uploads"), pr)
	if err != nil {
		pr.Close()
		return nil, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set(UploadIDHeader, uploadID)
	var out UploadReply
	if err := c.do(req, &out); err != nil {
		pr.CloseWithError(err)
		if rep := storedAlready(err, testID, dir); rep != nil {
			return rep, nil
		}
		return nil, err
	}
	return &out, nil
}

// storedAlready returns the stored run's reply of a 409 refusal that names
// a run of testID holding the bundle in dir; nil for any other error.
func storedAlready(err error, testID, dir string) *UploadReply {
	var re *RefusedError
	if !errors.As(err, &re) || re.Status != http.StatusConflict {
		return nil
	}
	var rep UploadReply
	if json.Unmarshal(re.body, &rep) != nil || rep.RunID == 0 || rep.TestID != testID || rep.BundleDigest == "" {
		return nil
	}
	if d, err := bundle.Digest(dir); err != nil || d != rep.BundleDigest {
		return nil
	}
	rep.StoredAlready = true
	return &rep
}

func writeUploadBody(mw *multipart.Writer, envJSON []byte, dir string) error {
	p, err := mw.CreateFormFile(EnvelopePart, "envelope.json")
	if err != nil {
		return err
	}
	if _, err := p.Write(envJSON); err != nil {
		return err
	}
	p, err = mw.CreateFormFile(BundlePart, "bundle.tar")
	if err != nil {
		return err
	}
	if err := WriteTar(p, dir); err != nil {
		return err
	}
	return mw.Close()
}

// WriteTar writes every regular file under dir to w as a tar stream, with
// slash-separated relative names.
func WriteTar(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: fi.Size(), ModTime: fi.ModTime(), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
