package tester_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/attest"
	"aimeter/bundle"
	"aimeter/internal/bundletest"
	"aimeter/store"
	"aimeter/tester"
)

// The child service of TestKilledMidIngest: the test binary run again with
// childEnv=1 serves the service on childDSNEnv's database and the data
// directory childDataEnv, writes its address to childAddrFile there, and,
// with childPauseEnv=1, stops every ingest just before its commit, after
// writing childPausedFile, until it is killed.
const (
	childEnv        = "AIMETER_TESTER_CHILD"
	childDSNEnv     = "AIMETER_TESTER_CHILD_DSN"
	childDataEnv    = "AIMETER_TESTER_CHILD_DATA"
	childPauseEnv   = "AIMETER_TESTER_CHILD_PAUSE"
	childAddrFile   = "child.addr"
	childPausedFile = "child.paused"
)

func serveChild() {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "child service:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	dataDir := os.Getenv(childDataEnv)
	opts := store.Options{DSN: os.Getenv(childDSNEnv), FilesDir: filepath.Join(dataDir, "results")}
	if os.Getenv(childPauseEnv) == "1" {
		opts.BeforeCommit = func(ctx context.Context, run *store.Run) error {
			// Every row of the run is written and its directory is in
			// place: say so, and wait for the SIGKILL.
			os.WriteFile(filepath.Join(dataDir, childPausedFile), []byte(run.Dir), 0o644)
			select {}
		}
	}
	st, err := store.Open(ctx, opts)
	if err != nil {
		fail(err)
	}
	srv, err := tester.New(tester.Options{Store: st, DataDir: dataDir})
	if err != nil {
		fail(err)
	}
	cfg, _, err := tester.TLSConfig("", "", dataDir, nil)
	if err != nil {
		fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	tmp := filepath.Join(dataDir, childAddrFile+".tmp")
	os.WriteFile(tmp, []byte("https://"+ln.Addr().String()), 0o644)
	os.Rename(tmp, filepath.Join(dataDir, childAddrFile))
	hs := &http.Server{Handler: srv, TLSConfig: cfg}
	fail(hs.ServeTLS(ln, "", ""))
}

// startChild starts the child service and returns it with its URL.
func startChild(t *testing.T, dsn, dataDir string, pause bool) (*exec.Cmd, string) {
	t.Helper()
	os.Remove(filepath.Join(dataDir, childAddrFile))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	p := "0"
	if pause {
		p = "1"
	}
	cmd.Env = append(os.Environ(), childEnv+"=1", childDSNEnv+"="+dsn, childDataEnv+"="+dataDir, childPauseEnv+"="+p)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := waitFile(t, filepath.Join(dataDir, childAddrFile))
	return cmd, addr
}

// waitFile waits for a file to appear and returns its contents.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKilledMidIngest kills the service with SIGKILL in the middle of an
// ingest (every row of the run written, its result directory in place, the
// transaction not committed), starts it again on the same database and
// data directory, and retries the same upload under the same upload ID: it
// is stored exactly once, with every file and its digest, as attempt 1;
// nothing of the killed ingest remains (no row, no event, no attempt, no
// result directory); and a further retry is told it is stored already.
func TestKilledMidIngest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dsn, dataDir := b.dsn(t), t.TempDir()
			child, url := startChild(t, dsn, dataDir, true)
			admin, err := tester.LoadAdminToken(dataDir)
			if err != nil {
				t.Fatal(err)
			}
			pem, err := os.ReadFile(filepath.Join(dataDir, filepath.FromSlash(tester.SelfSignedCertFile)))
			if err != nil {
				t.Fatal(err)
			}
			hc, err := tester.TrustPEM(pem)
			if err != nil {
				t.Fatal(err)
			}
			pub, key, _ := attest.GenerateKey()
			pp, _ := attest.MarshalPublicKey(pub)
			reg, err := (&tester.Client{BaseURL: url, Token: admin, HTTP: hc}).Register(ctx, tester.Registration{Party: "Example Lab", PublicKey: string(pp)})
			if err != nil {
				t.Fatal(err)
			}
			dir := bundletest.Copy(t, bundletest.MLPerf)
			env, err := attest.Sign(dir, key)
			if err != nil {
				t.Fatal(err)
			}
			uid := tester.NewToken("up")
			upload := func(url string) (*tester.UploadReply, error) {
				c := &tester.Client{BaseURL: url, Token: reg.Token, HTTP: hc}
				return c.Upload(ctx, reg.TestID, dir, env, uid)
			}
			done := make(chan error, 1)
			go func() { _, err := upload(url); done <- err }()
			killedDir := waitFile(t, filepath.Join(dataDir, childPausedFile))
			if _, err := os.Stat(filepath.Join(dataDir, "results", filepath.FromSlash(killedDir))); err != nil {
				t.Fatalf("the paused ingest has no result directory in place: %v", err)
			}
			child.Process.Kill()
			child.Wait()
			if err := <-done; err == nil {
				t.Fatal("the upload to the killed service succeeded")
			}

			_, url = startChild(t, dsn, dataDir, false)
			rep, err := upload(url)
			if err != nil {
				t.Fatalf("the retry after the kill: %v", err)
			}
			if rep.StoredAlready || rep.Attempt != 1 {
				t.Fatalf("the retry: %+v, want stored now as attempt 1", rep)
			}
			again, err := upload(url)
			if err != nil || !again.StoredAlready || again.RunID != rep.RunID {
				t.Fatalf("a second retry: %+v, %v; want stored already as run %d", again, err, rep.RunID)
			}

			st, err := store.Open(ctx, store.Options{DSN: dsn, FilesDir: filepath.Join(dataDir, "results")})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			runs, err := st.Runs(ctx, store.RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 || runs[0].ID != rep.RunID {
				t.Fatalf("%d runs stored, want exactly run %d", len(runs), rep.RunID)
			}
			if err := st.VerifyRun(ctx, rep.RunID); err != nil {
				t.Error(err)
			}
			arts, err := st.Artifacts(ctx, rep.RunID)
			if err != nil {
				t.Fatal(err)
			}
			m, err := bundle.ReadManifest(dir)
			if err != nil {
				t.Fatal(err)
			}
			digests := map[string]string{}
			for _, a := range arts {
				digests[a.Name] = a.SHA256
			}
			for _, f := range m.Files {
				if digests[f.Name] != f.SHA256 {
					t.Errorf("%s stored with SHA-256 %q, the manifest says %s", f.Name, digests[f.Name], f.SHA256)
				}
			}
			it, err := st.TestItem(ctx, reg.TestID)
			if err != nil {
				t.Fatal(err)
			}
			if it.Attempts != 1 {
				t.Errorf("%d attempts claimed, want 1: the killed ingest used one", it.Attempts)
			}
			evs, err := st.Events(ctx, store.EventFilter{TestItemID: reg.TestID})
			if err != nil {
				t.Fatal(err)
			}
			count := map[string]int{}
			for _, e := range evs {
				count[e.Kind]++
			}
			if count[store.EventRunRecorded] != 1 || count[store.EventUploadComplete] != 1 || count[store.EventAttemptClaimed] != 1 {
				t.Errorf("events %v: want one run_recorded, upload_complete and attempt_claimed", count)
			}
			if _, err := st.VerifyChain(ctx); err != nil {
				t.Error(err)
			}
			ents, err := os.ReadDir(filepath.Join(dataDir, "results", reg.TestID))
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) != 1 || reg.TestID+"/"+ents[0].Name() != runs[0].Dir {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Errorf("result directories %v, want only the stored run's %s (the killed ingest's was %s)", names, runs[0].Dir, killedDir)
			}
		})
	}
}

// rawUpload uploads the bundle in dir with env under uploadID as any HTTP
// client would, and returns the service's refusal as a *RefusedError, nil
// for a stored run.
func rawUpload(t *testing.T, p *party, dir string, env *attest.Envelope, uploadID string) error {
	t.Helper()
	status, body := postUpload(t, p.client, p.reg.TestID, dir, env, uploadID)
	if status < 300 {
		return nil
	}
	var er tester.ErrorReply
	json.Unmarshal(body, &er)
	return &tester.RefusedError{Status: status, Message: er.Error, Reasons: er.Reasons}
}

// postUpload posts an upload and returns the status and body of the answer.
func postUpload(t *testing.T, c *tester.Client, testID, dir string, env *attest.Envelope, uploadID string) (int, []byte) {
	t.Helper()
	envJSON, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile(tester.EnvelopePart, "e.json")
	w.Write(envJSON)
	w, _ = mw.CreateFormFile(tester.BundlePart, "b.tar")
	if err := tester.WriteTar(w, dir); err != nil {
		t.Fatal(err)
	}
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(c.BaseURL, "/")+"/api/v1/tests/"+testID+"/uploads", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set(tester.UploadIDHeader, uploadID)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestRetriedUpload: an upload sent again, under its upload ID or another,
// once it is stored, is answered 409 with the stored run (its ID, attempt
// and bundle digest) and stored_already, which Client.Upload returns as
// success; it neither stores a second run nor takes an attempt. The upload
// ID used for another bundle is refused, naming the run that spent it, and
// Client.Upload returns that refusal.
func TestRetriedUpload(t *testing.T) {
	s := newService(t, backends(t)[0])
	ctx := context.Background()
	p := s.register(t, 3, "")
	dir := variant(t, bundletest.MLPerf, "retried")
	env, _ := attest.Sign(dir, p.key)
	uid := tester.NewToken("up")
	first, err := p.client.Upload(ctx, p.reg.TestID, dir, env, uid)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		id   string
		want string
	}{
		{"the same upload ID (an answer lost on the way)", uid, "upload ID " + uid + " was used before, for run"},
		{"a new upload ID (the client started over)", tester.NewToken("up"), "is stored already as run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := postUpload(t, p.client, p.reg.TestID, dir, env, tc.id)
			var raw struct {
				tester.ErrorReply
				tester.UploadReply
			}
			if err := json.Unmarshal(body, &raw); err != nil {
				t.Fatal(err)
			}
			if status != http.StatusConflict || !strings.Contains(raw.Error, tc.want) || raw.RunID != first.RunID || raw.BundleDigest != first.BundleDigest || raw.Attempt != 1 {
				t.Fatalf("HTTP %d %s, want 409 naming run %d (%q)", status, body, first.RunID, tc.want)
			}
			rep, err := p.client.Upload(ctx, p.reg.TestID, dir, env, tc.id)
			if err != nil || !rep.StoredAlready || rep.RunID != first.RunID || rep.Attempt != 1 || rep.Status != first.Status {
				t.Fatalf("Client.Upload: %+v, %v; want run %d stored already", rep, err, first.RunID)
			}
		})
	}
	other := variant(t, bundletest.MLPerf, "another bundle")
	otherEnv, _ := attest.Sign(other, p.key)
	_, err = p.client.Upload(ctx, p.reg.TestID, other, otherEnv, uid)
	refusedWith(t, err, http.StatusConflict, fmt.Sprintf("upload ID %s was used before, for run %d", uid, first.RunID))
	runs, _ := s.st.Runs(ctx, store.RunFilter{TestItemID: p.reg.TestID})
	it, _ := s.st.TestItem(ctx, p.reg.TestID)
	if len(runs) != 1 || it.Attempts != 1 {
		t.Errorf("%d runs, %d attempts after the retries, want 1 and 1", len(runs), it.Attempts)
	}
}

// TestDatabaseGoneMidIngest: the database fails in the middle of an ingest,
// once every row is written (PostgreSQL: the service's connections are
// terminated; SQLite: the commit fails). The upload is answered with one
// clear error (503), the service stays up, nothing of the upload is stored
// (no run, no result directory, no attempt, the upload ID unspent), and
// the same upload retried under the same upload ID is stored.
func TestDatabaseGoneMidIngest(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dsn, dataDir := b.dsn(t), t.TempDir()
			var fail atomic.Bool
			opts := store.Options{DSN: dsn, FilesDir: filepath.Join(dataDir, "results")}
			if store.IsPostgres(dsn) {
				var r [6]byte
				rand.Read(r[:])
				app := "aimeter_gone_" + hex.EncodeToString(r[:])
				opts.DSN += "&application_name=" + app
				opts.BeforeCommit = func(ctx context.Context, run *store.Run) error {
					if !fail.CompareAndSwap(true, false) {
						return nil
					}
					admin, err := sql.Open("pgx", dsn)
					if err != nil {
						return err
					}
					defer admin.Close()
					_, err = admin.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, app)
					return err
				}
			} else {
				opts.BeforeCommit = func(ctx context.Context, run *store.Run) error {
					if fail.CompareAndSwap(true, false) {
						return errors.New("disk I/O error (simulated)")
					}
					return nil
				}
			}
			st, err := store.Open(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			srv, err := tester.New(tester.Options{Store: st, DataDir: dataDir})
			if err != nil {
				t.Fatal(err)
			}
			s := serve(t, srv, st, dataDir, dsn)
			p := s.register(t, 0, "")
			dir := bundletest.Copy(t, bundletest.MLPerf)
			env, _ := attest.Sign(dir, p.key)
			uid := tester.NewToken("up")
			fail.Store(true)
			_, err = p.client.Upload(ctx, p.reg.TestID, dir, env, uid)
			refusedWith(t, err, http.StatusServiceUnavailable, "storing the run failed: retry the upload")
			if re := (*tester.RefusedError)(nil); !errors.As(err, &re) || re.RetryAfter <= 0 {
				t.Errorf("the 503 of a failed store carries no Retry-After for aimeter submit's backoff: %v", err)
			}
			if runs, _ := st.Runs(ctx, store.RunFilter{}); len(runs) != 0 {
				t.Fatalf("%d runs stored by the failed upload", len(runs))
			}
			if ents, _ := os.ReadDir(filepath.Join(dataDir, "results", p.reg.TestID)); len(ents) != 0 {
				t.Fatalf("%d result directories left by the failed upload", len(ents))
			}
			rep, err := p.client.Upload(ctx, p.reg.TestID, dir, env, uid)
			if err != nil {
				t.Fatalf("the retry: %v", err)
			}
			if rep.StoredAlready || rep.Attempt != 1 {
				t.Fatalf("the retry: %+v, want stored as attempt 1", rep)
			}
			if err := st.VerifyRun(ctx, rep.RunID); err != nil {
				t.Error(err)
			}
			if _, err := st.VerifyChain(ctx); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestStoredBundleNotRecomputed: a bundle stored already is told so as soon
// as it is received and verified, before the memory gate and the
// recomputation: a second service on the same database, whose memory
// budget holds no recomputation at all, answers the retry with the stored
// run (409, stored already), not with 413.
func TestStoredBundleNotRecomputed(t *testing.T) {
	a := newService(t, backends(t)[0])
	ctx := context.Background()
	p := a.register(t, 1, "")
	dir := variant(t, bundletest.MLPerf, "stored once")
	env, _ := attest.Sign(dir, p.key)
	first, err := p.client.Upload(ctx, p.reg.TestID, dir, env, tester.NewToken("up"))
	if err != nil {
		t.Fatal(err)
	}
	b := startWith(t, a.dsn, t.TempDir(), tester.Options{MemoryBudget: 1})
	c := &tester.Client{BaseURL: b.ts.URL, Token: p.client.Token, HTTP: b.http}
	rep, err := c.Upload(ctx, p.reg.TestID, dir, env, tester.NewToken("up"))
	if err != nil || !rep.StoredAlready || rep.RunID != first.RunID {
		t.Fatalf("the retry on the second service: %+v, %v; want run %d stored already, not a refusal by the memory gate", rep, err, first.RunID)
	}
}
