package tester_test

import (
	"context"
	"crypto/ed25519"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"aimeter/attest"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/internal/bundletest"
	"aimeter/internal/pgtest"
	"aimeter/store"
	"aimeter/tester"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		serveChild() // the service of TestKilledMidIngest; never returns
	}
	code := m.Run()
	bundletest.Cleanup()
	os.Exit(code)
}

// backend is one database the service runs on in the tests.
type backend struct {
	name string
	// dsn returns a fresh database's DSN (the same each call within one
	// test, so a restarted service finds its data).
	dsn func(t *testing.T) string
}

// backends are SQLite, and PostgreSQL when AIMETER_TEST_POSTGRES holds a
// DSN (scripts/start-postgres.sh prints one); AIMETER_REQUIRE_POSTGRES=1
// turns its absence into a failure.
func backends(t *testing.T) []backend {
	t.Helper()
	bs := []backend{{name: "sqlite", dsn: func(t *testing.T) string { return filepath.Join(t.TempDir(), "results.db") }}}
	dsn := pgtest.DSN(t)
	if dsn == "" {
		t.Log("PostgreSQL not tested: AIMETER_TEST_POSTGRES is unset")
		return bs
	}
	return append(bs, backend{name: "postgres", dsn: func(t *testing.T) string { return pgtest.Fresh(t, dsn, "aimeter_srv_") }})
}

// service is a running service over real HTTPS on loopback, with its
// self-signed certificate.
type service struct {
	srv     *tester.Server
	st      *store.Store
	ts      *httptest.Server
	dataDir string
	dsn     string
	admin   string
	http    *http.Client
}

// start starts a service on dsn with its data in dataDir (both kept
// across restarts).
func start(t *testing.T, dsn, dataDir string) *service {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{DSN: dsn, FilesDir: filepath.Join(dataDir, "results")})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := tester.New(tester.Options{Store: st, DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, srv, st, dataDir, dsn)
}

// serve serves srv over HTTPS on loopback with a self-signed certificate
// kept in dataDir.
func serve(t *testing.T, srv *tester.Server, st *store.Store, dataDir, dsn string) *service {
	t.Helper()
	cfg, _, err := tester.TLSConfig("", "", dataDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.TLS = cfg
	// The browser test's Chromium probes the self-signed certificate
	// before it is told to accept it; those handshakes fail by design.
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.StartTLS()
	pem, err := os.ReadFile(filepath.Join(dataDir, filepath.FromSlash(tester.SelfSignedCertFile)))
	if err != nil {
		t.Fatal(err)
	}
	hc, err := tester.TrustPEM(pem)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := tester.LoadAdminToken(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	s := &service{srv: srv, st: st, ts: ts, dataDir: dataDir, dsn: dsn, admin: admin, http: hc}
	t.Cleanup(s.stop)
	return s
}

func (s *service) stop() {
	if s.ts != nil {
		s.ts.Close()
		s.st.Close()
		s.ts = nil
	}
}

func newService(t *testing.T, b backend) *service {
	return start(t, b.dsn(t), t.TempDir())
}

func (s *service) adminClient() *tester.Client {
	return &tester.Client{BaseURL: s.ts.URL, Token: s.admin, HTTP: s.http}
}

// party is a tested party: its key pair and its registered test item.
type party struct {
	pub    ed25519.PublicKey
	key    ed25519.PrivateKey
	reg    *tester.Registered
	client *tester.Client
}

func (s *service) register(t *testing.T, retests int, expiresIn string) *party {
	t.Helper()
	pub, key, err := attest.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pp, _ := attest.MarshalPublicKey(pub)
	reg, err := s.adminClient().Register(context.Background(), tester.Registration{
		Party: "Example Lab", RetestAllowance: retests, PublicKey: string(pp), ExpiresIn: expiresIn,
		Info: []byte(`{"system":"test rig"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	hc, err := tester.TrustPEM([]byte(reg.Config.ServerCertificate))
	if err != nil {
		t.Fatal(err)
	}
	return &party{pub: pub, key: key, reg: reg, client: &tester.Client{BaseURL: reg.Config.Server, Token: reg.Token, HTTP: hc}}
}

// variant writes a new, genuine bundle into a directory of t's: the shared
// one of kind k read back and written again under another name, so its
// digest is new.
func variant(t testing.TB, k bundletest.Kind, name string) string {
	t.Helper()
	b, err := bundle.Read(bundletest.Source(t, k))
	if err != nil {
		t.Fatal(err)
	}
	b.Name = name
	dir := filepath.Join(t.TempDir(), "variant")
	if err := derived.Write(dir, b); err != nil {
		t.Fatal(err)
	}
	return dir
}
