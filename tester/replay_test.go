package tester_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"aimeter/attest"
	"aimeter/internal/bundletest"
	"aimeter/store"
	"aimeter/tester"
)

// startShared starts a service process's worth of state (its own Store
// connections, data directory and HTTPS listener) on the database dsn and
// the result files in files, as a second service of a lab would run.
func startShared(t *testing.T, dsn, files, admin string) *service {
	t.Helper()
	dataDir := t.TempDir()
	st, err := store.Open(context.Background(), store.Options{DSN: dsn, FilesDir: files})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := tester.New(tester.Options{Store: st, DataDir: dataDir, AdminToken: admin})
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, srv, st, dataDir, dsn)
	if admin != "" {
		s.admin = admin
	}
	return s
}

// Two services on one database each receive copies of one signed bundle at
// the same moment, under fresh upload IDs, and copies of two bundles under
// one upload ID: exactly one copy is stored, exactly one use of the upload
// ID passes, and every other upload is refused as a replay.
func TestReplayAcrossServers(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dsn, files := b.dsn(t), t.TempDir()
			s1 := startShared(t, dsn, files, "")
			s2 := startShared(t, dsn, files, s1.admin)
			p := s1.register(t, 5, "")
			pem, err := os.ReadFile(filepath.Join(s2.dataDir, filepath.FromSlash(tester.SelfSignedCertFile)))
			if err != nil {
				t.Fatal(err)
			}
			hc2, err := tester.TrustPEM(pem)
			if err != nil {
				t.Fatal(err)
			}
			clients := []*tester.Client{p.client, {BaseURL: s2.ts.URL, Token: p.reg.Token, HTTP: hc2}}

			type upload struct {
				dir string
				env *attest.Envelope
				id  string
			}
			sign := func(dir string) *attest.Envelope {
				env, err := attest.Sign(dir, p.key)
				if err != nil {
					t.Fatal(err)
				}
				return env
			}
			same := variant(t, bundletest.MLPerf, "same bundle")
			sameEnv := sign(same)
			oneID := tester.NewToken("up")
			var sameBundle, sameID []upload
			for i := range 4 {
				sameBundle = append(sameBundle, upload{same, sameEnv, tester.NewToken("up")})
				if i < 2 {
					d := variant(t, bundletest.MLPerf, "one id "+string(rune('a'+i)))
					sameID = append(sameID, upload{d, sign(d), oneID})
				}
			}
			for _, tc := range []struct {
				name    string
				uploads []upload
				reason  string
			}{{"one bundle", sameBundle, "is stored already"}, {"one upload ID", sameID, "upload ID " + oneID + " was used before"}} {
				errs := make([]error, len(tc.uploads))
				reps := make([]*tester.UploadReply, len(tc.uploads))
				var wg sync.WaitGroup
				for i, u := range tc.uploads {
					wg.Go(func() {
						reps[i], errs[i] = clients[i%2].Upload(ctx, p.reg.TestID, u.dir, u.env, u.id)
					})
				}
				wg.Wait()
				stored, told := 0, 0
				for i, err := range errs {
					var ae *tester.RefusedError
					switch {
					case err == nil && reps[i].StoredAlready:
						// Told so, naming the run (checked below).
						told++
					case err == nil:
						stored++
					case errors.As(err, &ae) && ae.Status == http.StatusConflict && strings.Contains(ae.Error(), "replayed upload") && strings.Contains(ae.Error(), tc.reason):
					default:
						t.Errorf("%s: %v, want 409 replayed upload: …%s", tc.name, err, tc.reason)
					}
				}
				if stored != 1 {
					t.Errorf("%s: %d uploads of %d stored, want exactly 1 (%v)", tc.name, stored, len(errs), errs)
				}
				// The copies of one bundle are told it is stored, as
				// the run that was.
				if tc.name == "one bundle" {
					if told != len(errs)-1 {
						t.Errorf("%s: %d copies told the bundle is stored already, want %d", tc.name, told, len(errs)-1)
					}
					for i, rep := range reps {
						if rep != nil && errs[i] == nil && rep.StoredAlready && (rep.RunID != firstRun(reps) || rep.BundleDigest == "") {
							t.Errorf("%s: a copy was told run %d, not the stored run %d", tc.name, rep.RunID, firstRun(reps))
						}
					}
				}
			}
			runs, err := s2.st.Runs(ctx, store.RunFilter{TestItemID: p.reg.TestID})
			if err != nil {
				t.Fatal(err)
			}
			var attempts []int
			for _, r := range runs {
				attempts = append(attempts, r.Attempt)
			}
			if len(runs) != 2 || attempts[0] == attempts[1] {
				t.Errorf("runs of attempts %v stored, want 2 of attempts 1 and 2", attempts)
			}
			if n, err := s1.st.VerifyChain(ctx); err != nil {
				t.Errorf("chain after %d events: %v", n, err)
			}
		})
	}
}

// firstRun is the run of the one reply that stored its upload.
func firstRun(reps []*tester.UploadReply) int64 {
	for _, r := range reps {
		if r != nil && !r.StoredAlready {
			return r.RunID
		}
	}
	return 0
}
