package tester_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"aimeter/attest"
	"aimeter/bundle"
	"aimeter/internal/bundletest"
	"aimeter/store"
	"aimeter/tester"
)

func refusedWith(t *testing.T, err error, status int, contains string) {
	t.Helper()
	var re *tester.RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a refusal with HTTP %d", err, status)
	}
	if re.Status != status || !strings.Contains(re.Error(), contains) {
		t.Fatalf("refusal = %v, want HTTP %d naming %q", re, status, contains)
	}
}

// TestUploadFlow registers an item, reports its lifecycle and uploads a
// signed bundle, on each database.
func TestUploadFlow(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			s := newService(t, b)
			ctx := context.Background()
			p := s.register(t, 0, "")
			if p.reg.Config.TestID != p.reg.TestID || p.reg.Config.KeyID != attest.KeyID(p.pub) || p.reg.Config.Format != tester.ConfigFormat {
				t.Fatalf("config = %+v", p.reg.Config)
			}
			ev, err := p.client.Event(ctx, p.reg.TestID, store.EventTestStart, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Attempt != 1 {
				t.Fatalf("attempt %d", ev.Attempt)
			}
			for _, k := range []string{store.EventDataDownloadStart, store.EventDataDownloadEnd, store.EventTestEnd} {
				if _, err := p.client.Event(ctx, p.reg.TestID, k, map[string]string{"note": k}); err != nil {
					t.Fatal(err)
				}
			}
			dir := bundletest.Copy(t, bundletest.MLPerf)
			rep, err := p.client.Submit(ctx, p.reg.TestID, dir, p.key)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Status != store.StatusVerified || rep.Attempt != 1 || !slices.Contains(rep.Recomputed, bundle.ResultFile) {
				t.Fatalf("reply = %+v", rep)
			}
			v, err := p.client.Test(ctx, p.reg.TestID)
			if err != nil {
				t.Fatal(err)
			}
			if len(v.Runs) != 1 || v.Runs[0].ID != rep.RunID || v.LastEvent == nil || v.LastEvent.Kind != store.EventUploadComplete {
				t.Fatalf("test view = %+v", v)
			}
			// The stored files are the uploaded ones.
			arts, err := s.st.Artifacts(ctx, rep.RunID)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range arts {
				b, err := os.ReadFile(s.st.Path(a.Path))
				if err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(b)
				if hex.EncodeToString(sum[:]) != a.SHA256 {
					t.Errorf("%s stored with another digest", a.Name)
				}
			}
			// The audit trail holds the lifecycle, chained.
			var at tester.AuditTrail
			getJSON(t, s, "/api/v1/events?test="+p.reg.TestID, &at)
			var kinds []string
			for _, e := range at.Events {
				kinds = append(kinds, e.Kind)
			}
			want := []string{store.EventTestCreated, store.EventAttemptClaimed, store.EventTestStart, store.EventDataDownloadStart,
				store.EventDataDownloadEnd, store.EventTestEnd, tester.EventUploadReceived, store.EventRunRecorded, store.EventUploadComplete}
			if !at.ChainOK || !slices.Equal(kinds, want) {
				t.Fatalf("audit chain_ok=%v %s, events %v, want %v", at.ChainOK, at.ChainError, kinds, want)
			}
		})
	}
}

func getJSON(t *testing.T, s *service, path string, out any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.ts.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.admin)
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatal(err)
	}
}

// rewrite edits a file of a bundle and makes its manifest agree.
func rewrite(t *testing.T, dir, name string, edit func([]byte) []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, edit(b), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range m.Files {
		b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(e.Name)))
		sum := sha256.Sum256(b)
		m.Files[i].Bytes, m.Files[i].SHA256 = int64(len(b)), hex.EncodeToString(sum[:])
	}
	mb, _ := json.MarshalIndent(m, "", "  ")
	os.WriteFile(filepath.Join(dir, bundle.ManifestFile), append(mb, '\n'), 0o644)
}

func betterP99(b []byte) []byte {
	var r map[string]any
	json.Unmarshal(b, &r)
	r["latency_ns"].(map[string]any)["p99"] = 1
	out, _ := json.MarshalIndent(r, "", "  ")
	return out
}

// TestRefusals: every tampering case and misuse is refused with its
// reason, and nothing is stored; each row fails if its protection is
// removed.
func TestRefusals(t *testing.T) {
	s := newService(t, backends(t)[0])
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// upload does the party's upload (after whatever preparation)
		// and returns its error.
		upload  func(t *testing.T, p *party) error
		status  int
		reason  string
		retests int
		expires string
	}{
		{"a flipped byte in the records after signing", func(t *testing.T, p *party) error {
			dir := bundletest.Copy(t, bundletest.MLPerf)
			env, err := attest.Sign(dir, p.key)
			if err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(dir, "records.parquet")
			b, _ := os.ReadFile(f)
			b[len(b)/2] ^= 1
			os.WriteFile(f, b, 0o644)
			_, err = p.client.Upload(ctx, p.reg.TestID, dir, env, tester.NewToken("up"))
			return err
		}, http.StatusUnprocessableEntity, "file digest differs: records.parquet", 0, ""},
		{"a claimed metric edited and re-signed with another key", func(t *testing.T, p *party) error {
			dir := bundletest.Copy(t, bundletest.MLPerf)
			rewrite(t, dir, bundle.ResultFile, betterP99)
			_, other, _ := attest.GenerateKey()
			_, err := p.client.Submit(ctx, p.reg.TestID, dir, other)
			return err
		}, http.StatusUnprocessableEntity, "signature does not verify", 0, ""},
		{"a claimed metric edited and signed with the registered key", func(t *testing.T, p *party) error {
			dir := bundletest.Copy(t, bundletest.MLPerf)
			rewrite(t, dir, bundle.ResultFile, betterP99)
			_, err := p.client.Submit(ctx, p.reg.TestID, dir, p.key)
			return err
		}, http.StatusUnprocessableEntity, "result.json: latency_ns.p99 claimed 1, recomputed", 0, ""},
		{"a truncated envelope", func(t *testing.T, p *party) error {
			dir := bundletest.Copy(t, bundletest.MLPerf)
			env, _ := attest.Sign(dir, p.key)
			env.Payload = env.Payload[:len(env.Payload)/2]
			_, err := p.client.Upload(ctx, p.reg.TestID, dir, env, tester.NewToken("up"))
			return err
		}, http.StatusUnprocessableEntity, "does not verify", 0, ""},
		{"a replayed upload ID", func(t *testing.T, p *party) error {
			dir := variant(t, bundletest.MLPerf, "replay-id")
			env, _ := attest.Sign(dir, p.key)
			id := tester.NewToken("up")
			if _, err := p.client.Upload(ctx, p.reg.TestID, dir, env, id); err != nil {
				t.Fatal(err)
			}
			dir2 := variant(t, bundletest.MLPerf, "replay-id-2")
			env2, _ := attest.Sign(dir2, p.key)
			_, err := p.client.Upload(ctx, p.reg.TestID, dir2, env2, id)
			return err
		}, http.StatusConflict, "upload ID", 1, ""},
		{"a bundle stored before, uploaded again", func(t *testing.T, p *party) error {
			dir := variant(t, bundletest.MLPerf, "replay-bundle")
			if _, err := p.client.Submit(ctx, p.reg.TestID, dir, p.key); err != nil {
				t.Fatal(err)
			}
			// Client.Upload takes this 409 for success
			// (TestRetriedUpload); the service's own answer is a
			// refusal.
			env, _ := attest.Sign(dir, p.key)
			return rawUpload(t, p, dir, env, tester.NewToken("up"))
		}, http.StatusConflict, "is stored already", 1, ""},
		{"an upload past the retest allowance", func(t *testing.T, p *party) error {
			if _, err := p.client.Submit(ctx, p.reg.TestID, variant(t, bundletest.MLPerf, "first"), p.key); err != nil {
				t.Fatal(err)
			}
			if _, err := p.client.Submit(ctx, p.reg.TestID, variant(t, bundletest.MLPerf, "retest"), p.key); err != nil {
				t.Fatal(err)
			}
			_, err := p.client.Submit(ctx, p.reg.TestID, variant(t, bundletest.MLPerf, "one too many"), p.key)
			return err
		}, http.StatusConflict, "no attempt left", 1, ""},
		{"a test_start past the retest allowance", func(t *testing.T, p *party) error {
			if _, err := p.client.Event(ctx, p.reg.TestID, store.EventTestStart, nil); err != nil {
				t.Fatal(err)
			}
			_, err := p.client.Event(ctx, p.reg.TestID, store.EventTestStart, nil)
			return err
		}, http.StatusConflict, "no attempt left", 0, ""},
		{"an expired token", func(t *testing.T, p *party) error {
			time.Sleep(20 * time.Millisecond)
			_, err := p.client.Submit(ctx, p.reg.TestID, bundletest.Copy(t, bundletest.MLPerf), p.key)
			return err
		}, http.StatusUnauthorized, "expired", 0, "10ms"},
		{"a wrong token", func(t *testing.T, p *party) error {
			c := *p.client
			c.Token = "amt_not-a-token"
			_, err := c.Submit(ctx, p.reg.TestID, bundletest.Copy(t, bundletest.MLPerf), p.key)
			return err
		}, http.StatusUnauthorized, "unknown token", 0, ""},
		{"another item's token", func(t *testing.T, p *party) error {
			other := s.register(t, 0, "")
			c := *p.client
			c.Token = other.reg.Token
			_, err := c.Submit(ctx, p.reg.TestID, bundletest.Copy(t, bundletest.MLPerf), p.key)
			return err
		}, http.StatusForbidden, "not the token", 0, ""},
		{"an extra file slipped into the upload", func(t *testing.T, p *party) error {
			dir := bundletest.Copy(t, bundletest.MLPerf)
			env, _ := attest.Sign(dir, p.key)
			os.WriteFile(filepath.Join(dir, "payload.sh"), []byte("#!/bin/sh\n"), 0o644)
			_, err := p.client.Upload(ctx, p.reg.TestID, dir, env, tester.NewToken("up"))
			return err
		}, http.StatusUnprocessableEntity, "file not signed", 0, ""},
		{"a lifecycle event before test_start", func(t *testing.T, p *party) error {
			_, err := p.client.Event(ctx, p.reg.TestID, store.EventTestEnd, nil)
			return err
		}, http.StatusConflict, "before test_start", 0, ""},
		{"an unknown event kind", func(t *testing.T, p *party) error {
			_, err := p.client.Event(ctx, p.reg.TestID, store.EventUploadComplete, nil)
			return err
		}, http.StatusBadRequest, "not a client event", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := s.register(t, tc.retests, tc.expires)
			before, _ := s.st.Runs(ctx, store.RunFilter{TestItemID: p.reg.TestID})
			err := tc.upload(t, p)
			refusedWith(t, err, tc.status, tc.reason)
			after, _ := s.st.Runs(ctx, store.RunFilter{TestItemID: p.reg.TestID})
			if len(after) > len(before)+tc.retests+1 {
				t.Fatalf("%d runs stored after a refusal", len(after)-len(before))
			}
		})
	}
	// Registration refuses bad input, naming the field.
	for _, tc := range []struct {
		reg   tester.Registration
		field string
	}{
		{tester.Registration{PublicKey: "x"}, "party"},
		{tester.Registration{Party: "p"}, "public_key"},
		{tester.Registration{Party: "p", PublicKey: "not pem"}, "public_key"},
		{tester.Registration{Party: "p", PublicKey: pemOf(t), RetestAllowance: -1}, "retest_allowance"},
		{tester.Registration{Party: "p", PublicKey: pemOf(t), ExpiresIn: "soon"}, "expires_in"},
		{tester.Registration{Party: "p", PublicKey: pemOf(t), TestID: "../x"}, "test_id"},
	} {
		_, err := s.adminClient().Register(ctx, tc.reg)
		refusedWith(t, err, http.StatusBadRequest, tc.field)
	}
	c := s.adminClient()
	c.Token = "wrong"
	_, err := c.Register(ctx, tester.Registration{Party: "p", PublicKey: pemOf(t)})
	refusedWith(t, err, http.StatusUnauthorized, "admin token")
	// Nothing refused left a file in the staging area.
	if ents, _ := os.ReadDir(filepath.Join(s.dataDir, tester.StagingDir)); len(ents) != 0 {
		t.Errorf("staging holds %d entries", len(ents))
	}
}

func pemOf(t *testing.T) string {
	pub, _, _ := attest.GenerateKey()
	b, _ := attest.MarshalPublicKey(pub)
	return string(b)
}

// TestKilledMidUpload: a client that stops halfway through its upload
// leaves no run, no file and nothing in the staging area; its next upload
// (with a new upload ID) is stored.
func TestKilledMidUpload(t *testing.T) {
	s := newService(t, backends(t)[0])
	ctx := context.Background()
	p := s.register(t, 0, "")
	dir := bundletest.Copy(t, bundletest.MLPerf)
	env, _ := attest.Sign(dir, p.key)
	envJSON, _ := env.Marshal()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile(tester.EnvelopePart, "e.json")
	w.Write(envJSON)
	w, _ = mw.CreateFormFile(tester.BundlePart, "b.tar")
	tester.WriteTar(w, dir)
	mw.Close()
	full := body.Bytes()
	for _, cut := range []int{len(full) / 4, len(full) / 2, len(full) - 100} {
		pr, pw := io.Pipe()
		go func() {
			pw.Write(full[:cut])
			// The client dies: the connection ends mid-body.
			pw.CloseWithError(errors.New("killed"))
		}()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.ts.URL+"/api/v1/tests/"+p.reg.TestID+"/uploads", pr)
		req.ContentLength = int64(len(full))
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "Bearer "+p.reg.Token)
		req.Header.Set(tester.UploadIDHeader, tester.NewToken("up"))
		if resp, err := p.client.HTTP.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode < 400 {
				t.Fatalf("cut at %d: HTTP %d", cut, resp.StatusCode)
			}
		}
		waitEmpty(t, filepath.Join(s.dataDir, tester.StagingDir))
		if runs, _ := s.st.Runs(ctx, store.RunFilter{}); len(runs) != 0 {
			t.Fatalf("cut at %d: %d runs stored", cut, len(runs))
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(s.dataDir, "results")); len(ents) != 0 {
		names := []string{}
		for _, e := range ents {
			names = append(names, e.Name())
		}
		// The store may keep its own staging directory; no run directory.
		for _, n := range names {
			if n == p.reg.TestID {
				t.Fatalf("a result directory for %s exists after cut uploads", n)
			}
		}
	}
	if _, err := p.client.Upload(ctx, p.reg.TestID, dir, env, tester.NewToken("up")); err != nil {
		t.Fatal(err)
	}
}

func waitEmpty(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ents, _ := os.ReadDir(dir)
		if len(ents) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still holds %d entries", dir, len(ents))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRestart: a service stopped between a run's start and its upload, and
// after storing another run, keeps every stored run and event; the client
// goes on after the restart.
func TestRestart(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dsn, dataDir := b.dsn(t), t.TempDir()
			s := start(t, dsn, dataDir)
			p := s.register(t, 1, "")
			first, err := p.client.Submit(ctx, p.reg.TestID, variant(t, bundletest.MLPerf, "before restart"), p.key)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.client.Event(ctx, p.reg.TestID, store.EventTestStart, nil); err != nil {
				t.Fatal(err)
			}
			s.stop()

			s2 := start(t, dsn, dataDir)
			if s2.admin != s.admin {
				t.Fatal("the admin token changed across a restart")
			}
			p.client.BaseURL = s2.ts.URL
			p.client.HTTP = s2.http // the same self-signed certificate
			if _, err := p.client.Event(ctx, p.reg.TestID, store.EventTestEnd, nil); err != nil {
				t.Fatal(err)
			}
			second, err := p.client.Submit(ctx, p.reg.TestID, variant(t, bundletest.MLPerf, "after restart"), p.key)
			if err != nil {
				t.Fatal(err)
			}
			if second.Attempt != 2 {
				t.Fatalf("the retest is attempt %d, want 2", second.Attempt)
			}
			for _, id := range []int64{first.RunID, second.RunID} {
				arts, err := s2.st.Artifacts(ctx, id)
				if err != nil || len(arts) == 0 {
					t.Fatalf("run %d: %d artifacts, %v", id, len(arts), err)
				}
				for _, a := range arts {
					if _, err := os.Stat(s2.st.Path(a.Path)); err != nil {
						t.Fatalf("run %d lost %s: %v", id, a.Name, err)
					}
				}
			}
			if _, err := s2.st.VerifyChain(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLoad: 50 clients at once, each registered, streaming its lifecycle
// events and uploading its own bundle over HTTPS on loopback. Logs
// uploads/s and the p99 upload latency.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const clients = 50
	s := newService(t, backends(t)[0])
	ctx := context.Background()
	parties := make([]*party, clients)
	dirs := make([]string, clients)
	for i := range parties {
		parties[i] = s.register(t, 0, "")
		dirs[i] = variant(t, bundletest.MLPerf, fmt.Sprintf("client %d", i))
	}
	lat := make([]time.Duration, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	begin := time.Now()
	for i := range parties {
		wg.Go(func() {
			p := parties[i]
			for _, k := range []string{store.EventTestStart, store.EventDataDownloadStart, store.EventDataDownloadEnd, store.EventTestEnd} {
				if _, err := p.client.Event(ctx, p.reg.TestID, k, nil); err != nil {
					errs[i] = err
					return
				}
			}
			t0 := time.Now()
			_, errs[i] = p.client.Submit(ctx, p.reg.TestID, dirs[i], p.key)
			lat[i] = time.Since(t0)
		})
	}
	wg.Wait()
	total := time.Since(begin)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	runs, _ := s.st.Runs(ctx, store.RunFilter{})
	if len(runs) != clients {
		t.Fatalf("%d runs stored, want %d", len(runs), clients)
	}
	if _, err := s.st.VerifyChain(ctx); err != nil {
		t.Fatal(err)
	}
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	t.Logf("%d clients: %d uploads in %v = %.1f uploads/s; upload latency p50 %v, p99 %v (bundle %d files)",
		clients, clients, total.Round(time.Millisecond), float64(clients)/total.Seconds(),
		lat[clients/2].Round(time.Millisecond), lat[clients*99/100].Round(time.Millisecond), countFiles(dirs[0]))
}

func countFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, _ error) error {
		if d != nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}
