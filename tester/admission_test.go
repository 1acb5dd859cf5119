package tester_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/attest"
	"aimeter/internal/bundletest"
	"aimeter/recompute"
	"aimeter/store"
	"aimeter/tester"
)

// startWithOptions starts a service on SQLite with opts (Store and DataDir are
// filled in).
func startWithOptions(t *testing.T, opts tester.Options) *service {
	t.Helper()
	return startWith(t, filepath.Join(t.TempDir(), "results.db"), t.TempDir(), opts)
}

// uploadBody is the multipart body of an upload of dir signed with key,
// and its content type.
func uploadBody(t *testing.T, dir string, p *party) ([]byte, string) {
	t.Helper()
	env, err := attest.Sign(dir, p.key)
	if err != nil {
		t.Fatal(err)
	}
	envJSON, _ := env.Marshal()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile(tester.EnvelopePart, "e.json")
	w.Write(envJSON)
	w, _ = mw.CreateFormFile(tester.BundlePart, "b.tar")
	if err := tester.WriteTar(w, dir); err != nil {
		t.Fatal(err)
	}
	mw.Close()
	return body.Bytes(), mw.FormDataContentType()
}

// stalled is an upload whose client sends the first sent bytes of its body,
// declares length bytes and then sends nothing more until release.
type stalled struct {
	resp    chan *http.Response
	err     chan error
	pw      *io.PipeWriter
	release func()
}

func startStalled(t *testing.T, ctx context.Context, s *service, p *party, contentType string, sent []byte, length int64) *stalled {
	t.Helper()
	pr, pw := io.Pipe()
	st := &stalled{resp: make(chan *http.Response, 1), err: make(chan error, 1), pw: pw}
	st.release = sync.OnceFunc(func() { pw.CloseWithError(errors.New("the test's client gave up")) })
	t.Cleanup(st.release)
	go func() {
		if len(sent) > 0 {
			pw.Write(sent)
		}
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.ts.URL+"/api/v1/tests/"+p.reg.TestID+"/uploads", pr)
	req.ContentLength = length
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+p.reg.Token)
	req.Header.Set(tester.UploadIDHeader, tester.NewToken("up"))
	go func() {
		resp, err := p.client.HTTP.Do(req)
		if err != nil {
			st.err <- err
			return
		}
		st.resp <- resp
	}()
	return st
}

// answer waits (at most 30 s, far beyond what the service takes) for the
// stalled upload's answer and returns its status and error message.
func (st *stalled) answer(t *testing.T) (int, http.Header, string) {
	t.Helper()
	select {
	case resp := <-st.resp:
		defer resp.Body.Close()
		var er tester.ErrorReply
		json.NewDecoder(resp.Body).Decode(&er)
		return resp.StatusCode, resp.Header, er.Error
	case err := <-st.err:
		t.Fatalf("the upload got no answer: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no answer within 30 s: the service is still reading the body")
	}
	return 0, nil, ""
}

func storedRuns(t *testing.T, s *service) int {
	t.Helper()
	runs, err := s.st.Runs(context.Background(), store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

// TestContentLengthOverLimit: a body that declares more than
// MaxUploadBytes is refused 413 at once, before any byte of it is read
// (the client here never sends one).
func TestContentLengthOverLimit(t *testing.T) {
	s := startWithOptions(t, tester.Options{MaxUploadBytes: 1 << 20})
	p := s.register(t, 0, "")
	st := startStalled(t, context.Background(), s, p, "multipart/form-data; boundary=x", nil, 1<<20+1)
	code, _, msg := st.answer(t)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(msg, "1048577 bytes exceeds the service's limit of 1048576 bytes") || !strings.Contains(msg, "--max-upload-bytes") {
		t.Fatalf("HTTP %d %q, want 413 naming the body's and the limit's sizes and the flag", code, msg)
	}
	if n := storedRuns(t, s); n != 0 {
		t.Fatalf("%d runs stored", n)
	}
}

// TestSlowBodyCut: a body that stops coming is cut by UploadTimeout with
// 408 and its staging directory removed, while another upload is served.
func TestSlowBodyCut(t *testing.T) {
	s := startWithOptions(t, tester.Options{UploadTimeout: 2 * time.Second})
	slow, fast := s.register(t, 0, ""), s.register(t, 0, "")
	body, ct := uploadBody(t, bundletest.Copy(t, bundletest.MLPerf), slow)
	st := startStalled(t, context.Background(), s, slow, ct, body[:len(body)/2], int64(len(body)))

	// Another tested party's upload is served meanwhile.
	if _, err := fast.client.Submit(context.Background(), fast.reg.TestID, variant(t, bundletest.MLPerf, "fast"), fast.key); err != nil {
		t.Fatalf("an upload while another stalls: %v", err)
	}
	code, _, msg := st.answer(t)
	if code != http.StatusRequestTimeout || !strings.Contains(msg, "upload timeout of 2s") || !strings.Contains(msg, "--upload-timeout") {
		t.Fatalf("HTTP %d %q, want 408 naming the upload timeout", code, msg)
	}
	waitEmpty(t, filepath.Join(s.dataDir, tester.StagingDir))
	if n := storedRuns(t, s); n != 1 {
		t.Fatalf("%d runs stored, want the fast one only", n)
	}
}

// TestBusyReceiving: with every receive slot taken, an upload is answered
// 503 with Retry-After and a JSON error before its body is read.
func TestBusyReceiving(t *testing.T) {
	s := startWithOptions(t, tester.Options{MaxConcurrentUploads: 1})
	p, q := s.register(t, 0, ""), s.register(t, 0, "")
	body, ct := uploadBody(t, bundletest.Copy(t, bundletest.MLPerf), p)
	st := startStalled(t, context.Background(), s, p, ct, body[:100], int64(len(body)))
	// The stalled upload takes the only slot once its headers are in;
	// wait for its staging directory to show it is being received.
	staging := filepath.Join(s.dataDir, tester.StagingDir)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if ents, _ := os.ReadDir(staging); len(ents) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stalled upload never began")
		}
	}
	dir := variant(t, bundletest.MLPerf, "second")
	env, _ := attest.Sign(dir, q.key)
	_, err := q.client.Upload(context.Background(), q.reg.TestID, dir, env, tester.NewToken("up"))
	var re *tester.RefusedError
	if !errors.As(err, &re) || re.Status != http.StatusServiceUnavailable || re.RetryAfter <= 0 || !strings.Contains(re.Message, "busy") {
		t.Fatalf("err = %#v, want a 503 with Retry-After saying the service is busy", err)
	}
	st.release()
	select { // the cut upload's answer, or its client's error
	case resp := <-st.resp:
		resp.Body.Close()
	case <-st.err:
	}
	// The slot is free again.
	if _, err := q.client.Upload(context.Background(), q.reg.TestID, dir, env, tester.NewToken("up")); err != nil {
		t.Fatalf("after the stalled upload ended: %v", err)
	}
}

// TestBundleAboveBudget: a bundle whose estimate exceeds the whole memory
// budget is refused 413 before it is recomputed, naming its records, the
// bytes it needs, the budget and the flag that raises it.
func TestBundleAboveBudget(t *testing.T) {
	s := startWithOptions(t, tester.Options{MemoryBudget: 1 << 20})
	p := s.register(t, 0, "")
	dir := bundletest.Copy(t, bundletest.MLPerf)
	need, err := recompute.EstimateNeed(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.client.Submit(context.Background(), p.reg.TestID, dir, p.key)
	refusedWith(t, err, http.StatusRequestEntityTooLarge, fmt.Sprintf("its %d records", need.Records))
	for _, want := range []string{fmt.Sprintf("(%d bytes)", need.Bytes), "budget of 1.0 MB (1048576 bytes)", "--memory-budget", "to recompute"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	if n := storedRuns(t, s); n != 0 {
		t.Fatalf("%d runs stored", n)
	}
	waitEmpty(t, filepath.Join(s.dataDir, tester.StagingDir))
}

// TestConcurrentUploadsOneAtATime: uploads at once under a memory budget
// that holds one recomputation at a time are all stored, one after the
// other, from the queue.
func TestConcurrentUploadsOneAtATime(t *testing.T) {
	const n = 6
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = variant(t, bundletest.MLPerf, fmt.Sprintf("queued run %d", i))
	}
	need, err := recompute.EstimateNeed(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	s := startWithOptions(t, tester.Options{MemoryBudget: need.Bytes * 3 / 2})
	p := s.register(t, n-1, "")
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range dirs {
		wg.Go(func() { _, errs[i] = p.client.Submit(context.Background(), p.reg.TestID, dirs[i], p.key) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("upload %d: %v", i, err)
		}
	}
	if got := storedRuns(t, s); got != n {
		t.Fatalf("%d runs stored, want %d", got, n)
	}
}

// TestSubmitRetriesBusy: Submit waits out 503s with Retry-After (capped,
// doubling, with jitter), each try with a new upload ID, and succeeds; and
// gives up after Client.RetryFor. The fake clock of synctest does the
// waiting.
func TestSubmitRetriesBusy(t *testing.T) {
	dir := bundletest.Copy(t, bundletest.MLPerf)
	_, key, err := attest.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		why      string
		busy     int // 503s before a 201; -1 always
		retryFor time.Duration
		wantErr  string
		// wantWaits are the waits without their jitter (at most a quarter
		// more).
		wantWaits []time.Duration
	}{
		{"succeeds after three 503s", "Retry-After 3 s first, then doubling", 3, 0, "", []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second}},
		{"gives up", "the next wait would end after RetryFor: the last refusal is returned", -1, 20 * time.Second, "gave up after", []time.Duration{3 * time.Second, 6 * time.Second}},
		{"no retry", "a negative RetryFor does not retry", -1, -1, "HTTP 503", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var ids []string
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.Copy(io.Discard, r.Body)
					mu.Lock()
					ids = append(ids, r.Header.Get(tester.UploadIDHeader))
					n := len(ids)
					mu.Unlock()
					if tc.busy < 0 || n <= tc.busy {
						w.Header().Set("Retry-After", "3")
						w.WriteHeader(http.StatusServiceUnavailable)
						json.NewEncoder(w).Encode(tester.BusyReply{ErrorReply: tester.ErrorReply{Error: "the service is busy"}, Queued: 7, RetryAfter: 3})
						return
					}
					w.WriteHeader(http.StatusCreated)
					json.NewEncoder(w).Encode(tester.UploadReply{RunID: 1})
				})
				var waits []tester.RetryWait
				c := &tester.Client{BaseURL: "http://service", Token: "t", HTTP: &http.Client{Transport: handlerTransport{h}},
					RetryFor: tc.retryFor, Waiting: func(w tester.RetryWait) { waits = append(waits, w) }}
				start := time.Now()
				rep, err := c.Submit(context.Background(), "T1", dir, key)
				elapsed := time.Since(start)
				if tc.wantErr == "" {
					if err != nil || rep.RunID != 1 {
						t.Fatalf("%s: Submit = %v, %v", tc.why, rep, err)
					}
				} else if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s: err = %v, want one saying %q", tc.why, err, tc.wantErr)
				}
				if len(waits) != len(tc.wantWaits) {
					t.Fatalf("%s: %d waits, want %d", tc.why, len(waits), len(tc.wantWaits))
				}
				var sum time.Duration
				for i, w := range waits {
					lo := tc.wantWaits[i]
					if w.Wait < lo || w.Wait > lo+lo/4 {
						t.Errorf("%s: wait %d = %s, want %s plus at most a quarter", tc.why, i+1, w.Wait, lo)
					}
					if !strings.HasPrefix(w.String(), "the service is busy (7 uploads queued); retrying in ") {
						t.Errorf("wait %d says %q", i+1, w.String())
					}
					sum += w.Wait
				}
				if elapsed != sum {
					t.Errorf("Submit took %s, want its waits' %s", elapsed, sum)
				}
				seen := map[string]bool{}
				for _, id := range ids {
					if seen[id] {
						t.Errorf("upload ID %s sent twice: each retry needs a new one", id)
					}
					seen[id] = true
				}
			})
		})
	}
}

// handlerTransport serves requests with a handler in the same process,
// without a socket (which synctest's bubble cannot wait on).
type handlerTransport struct{ h http.Handler }

func (ht handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	ht.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}
