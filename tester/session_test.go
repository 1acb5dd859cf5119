package tester_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"aimeter/attest"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/internal/bundletest"
	"aimeter/store"
	"aimeter/tester"
)

// Over TLS (how the service is served, and how these tests reach it) the
// dashboard's cookies carry the __Host- prefix.
const (
	sessionCookieName = "__Host-aimeter_session"
	loginCookieName   = "__Host-aimeter_login"
)

// clock is a settable Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// startWith starts a service as start does, with opts (Store and DataDir
// filled in).
func startWith(t *testing.T, dsn, dataDir string, opts tester.Options) *service {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{DSN: dsn, FilesDir: filepath.Join(dataDir, "results")})
	if err != nil {
		t.Fatal(err)
	}
	opts.Store, opts.DataDir = st, dataDir
	srv, err := tester.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, srv, st, dataDir, dsn)
}

// browser sends the requests a browser would to s, with the cookies it is
// given (and no others), following no redirect.
type browser struct {
	t  *testing.T
	s  *service
	hc *http.Client
}

func newBrowser(t *testing.T, s *service) *browser {
	hc := *s.http
	hc.Jar = nil
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &browser{t: t, s: s, hc: &hc}
}

// do sends method path with form (POST as a form; nil: no body), the
// cookies and headers ("Origin" defaults to the service's own on a POST,
// as a browser sends it; "" leaves it out), and returns the response and
// its body.
func (b *browser) do(method, path string, form url.Values, cookies []*http.Cookie, hdr map[string]string) (*http.Response, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.s.ts.URL+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if method == http.MethodPost {
		req.Header.Set("Origin", b.s.ts.URL)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	for _, c := range cookies {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, string(out)
}

// cookieOf returns resp's Set-Cookie of name, or nil.
func cookieOf(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]*)"`)

// csrfOf returns the CSRF token of a page's forms.
func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfInput.FindStringSubmatch(page)
	if m == nil || m[1] == "" {
		t.Fatalf("the page has no CSRF token:\n%s", page)
	}
	return m[1]
}

// loginForm loads the sign-in form: its pre-session cookie and token.
func (b *browser) loginForm() (*http.Cookie, string) {
	b.t.Helper()
	resp, page := b.do(http.MethodGet, "/login", nil, nil, nil)
	c := cookieOf(resp, loginCookieName)
	if resp.StatusCode != http.StatusOK || c == nil {
		b.t.Fatalf("GET /login: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	return c, csrfOf(b.t, page)
}

// signIn signs in with the admin token through the form and returns the
// session cookie and the CSRF token of the pages it then gets.
func (b *browser) signIn() (*http.Cookie, string) {
	b.t.Helper()
	lc, tok := b.loginForm()
	resp, body := b.do(http.MethodPost, "/login", url.Values{"token": {b.s.admin}, "csrf": {tok}}, []*http.Cookie{lc}, nil)
	sc := cookieOf(resp, sessionCookieName)
	if resp.StatusCode != http.StatusSeeOther || sc == nil || sc.Value == "" {
		b.t.Fatalf("sign-in: %d, cookies %v\n%s", resp.StatusCode, resp.Cookies(), body)
	}
	resp, page := b.do(http.MethodGet, "/", nil, []*http.Cookie{sc}, nil)
	if resp.StatusCode != http.StatusOK {
		b.t.Fatalf("GET / after sign-in: %d", resp.StatusCode)
	}
	return sc, csrfOf(b.t, page)
}

// signedIn says whether the session cookie c opens the dashboard (else
// the browser is sent to sign in).
func (b *browser) signedIn(c *http.Cookie) bool {
	b.t.Helper()
	resp, _ := b.do(http.MethodGet, "/audit", nil, []*http.Cookie{c}, nil)
	switch {
	case resp.StatusCode == http.StatusOK:
		return true
	case resp.StatusCode == http.StatusSeeOther && resp.Header.Get("Location") == "/login":
		return false
	}
	b.t.Fatalf("GET /audit: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	return false
}

func countItems(t *testing.T, s *service) int {
	t.Helper()
	items, err := s.st.TestItems(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(items)
}

// TestStolenCookieAfterSignOut: the value of a session cookie, copied
// before sign-out, opens nothing afterwards, on the service process that
// signed out and on a second one sharing the database; and a session
// made on one process works on the other and after a restart.
func TestStolenCookieAfterSignOut(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			dsn, dataDir := be.dsn(t), t.TempDir()
			a := start(t, dsn, dataDir)
			b := start(t, dsn, dataDir)
			ba, bb := newBrowser(t, a), newBrowser(t, b)
			stolen, csrf := ba.signIn()
			if !ba.signedIn(stolen) || !bb.signedIn(stolen) {
				t.Fatal("a fresh session does not open both service processes")
			}
			a.stop()
			a = start(t, dsn, dataDir)
			ba = newBrowser(t, a)
			if !ba.signedIn(stolen) {
				t.Fatal("the session did not survive a restart")
			}
			// Sign out on the second process, with the page's form.
			resp, _ := bb.do(http.MethodPost, "/logout", url.Values{"csrf": {csrf}}, []*http.Cookie{stolen}, nil)
			if c := cookieOf(resp, sessionCookieName); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" || c == nil || c.MaxAge >= 0 {
				t.Fatalf("sign-out: %d to %q, cookie %v", resp.StatusCode, resp.Header.Get("Location"), c)
			}
			if ba.signedIn(stolen) || bb.signedIn(stolen) {
				t.Fatal("the cookie copied before sign-out still opens the dashboard")
			}
			n := countItems(t, a)
			resp, _ = ba.do(http.MethodPost, "/tests", url.Values{"csrf": {csrf}, "party": {"Mallory"}, "retests": {"0"}, "public_key": {"x"}}, []*http.Cookie{stolen}, nil)
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" || countItems(t, a) != n {
				t.Errorf("a form sent with the stolen cookie and its token: %d to %q, %d test items (was %d)", resp.StatusCode, resp.Header.Get("Location"), countItems(t, a), n)
			}
			// The admin token still works: signing out did not need it
			// rotated, and a new sign-in is a new session.
			fresh, _ := bb.signIn()
			if fresh.Value == stolen.Value || !ba.signedIn(fresh) {
				t.Errorf("a new sign-in: cookie %q (old %q)", fresh.Value, stolen.Value)
			}
		})
	}
}

// TestSessionExpiry: a session ends at its absolute lifetime however busy
// it is, and earlier when idle; the clock is Options.Now.
func TestSessionExpiry(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}
	s := startWith(t, backends(t)[0].dsn(t), t.TempDir(), tester.Options{Now: clk.Now, SessionLifetime: 4 * time.Hour, SessionIdleTimeout: time.Hour})
	b := newBrowser(t, s)

	busy, _ := b.signIn()
	for range 7 { // used every 30 minutes up to 3.5 h
		clk.Add(30 * time.Minute)
		if !b.signedIn(busy) {
			t.Fatalf("a session in use was refused at %v", clk.Now())
		}
	}
	idle, _ := b.signIn()
	clk.Add(30 * time.Minute) // 4 h after the first sign-in
	if b.signedIn(busy) {
		t.Error("a session was accepted at its absolute lifetime")
	}
	if !b.signedIn(idle) {
		t.Error("a session 30 minutes old was refused")
	}
	clk.Add(time.Hour)
	if b.signedIn(idle) {
		t.Error("a session idle for its idle timeout was accepted")
	}
	// The defaults, documented on Options: 12 h, 1 h idle.
	s2 := startWith(t, backends(t)[0].dsn(t), t.TempDir(), tester.Options{Now: clk.Now})
	b2 := newBrowser(t, s2)
	c, _ := b2.signIn()
	for range 23 { // 11.5 h in steps of 30 minutes
		clk.Add(30 * time.Minute)
		if !b2.signedIn(c) {
			t.Fatalf("default lifetime: refused at %v", clk.Now())
		}
	}
	clk.Add(30 * time.Minute)
	if b2.signedIn(c) {
		t.Error("default lifetime: a session was accepted 12 h after its sign-in")
	}
}

// TestCSRF: every dashboard form that changes state is refused (403, and
// nothing changes) without the session's CSRF token or from another
// origin; the sign-in form needs its own pre-session token.
func TestCSRF(t *testing.T) {
	s := newService(t, backends(t)[0])
	b := newBrowser(t, s)
	sc, csrf := b.signIn()
	_, otherCSRF := b.signIn() // another session's token
	// A form that would register a test item, were it accepted.
	key := publicKeyPEM(t)
	register := func(tok string) url.Values {
		return url.Values{"csrf": {tok}, "party": {"CSRF Lab"}, "retests": {"0"}, "public_key": {key}}
	}
	refused := []struct {
		why  string
		path string
		form url.Values
		hdr  map[string]string
	}{
		{"no token", "/tests", url.Values{"party": {"CSRF Lab"}, "retests": {"0"}, "public_key": {key}}, nil},
		{"an empty token", "/tests", register(""), nil},
		{"a wrong token", "/tests", register(csrf[:len(csrf)-2] + "xx"), nil},
		{"another session's token", "/tests", register(otherCSRF), nil},
		{"another origin", "/tests", register(csrf), map[string]string{"Origin": "https://evil.example"}},
		{"the service's host over another scheme", "/tests", register(csrf), map[string]string{"Origin": strings.Replace(s.ts.URL, "https:", "http:", 1)}},
		{"an opaque origin (a sandboxed report)", "/tests", register(csrf), map[string]string{"Origin": "null"}},
		{"a cross-site fetch", "/tests", register(csrf), map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": ""}},
		{"sign-out without a token", "/logout", url.Values{}, nil},
		{"sign-out from another origin", "/logout", url.Values{"csrf": {csrf}}, map[string]string{"Origin": "https://evil.example"}},
	}
	n := countItems(t, s)
	for _, c := range refused {
		resp, body := b.do(http.MethodPost, c.path, c.form, []*http.Cookie{sc}, c.hdr)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `id="error"`) {
			t.Errorf("%s: %d, want 403\n%s", c.why, resp.StatusCode, body)
		}
		if cookieOf(resp, sessionCookieName) != nil {
			t.Errorf("%s: the refusal touched the session cookie", c.why)
		}
	}
	if got := countItems(t, s); got != n {
		t.Errorf("%d test items after the refused forms, was %d", got, n)
	}
	if !b.signedIn(sc) {
		t.Fatal("a refused sign-out ended the session")
	}
	// The same form with its token is accepted: with no Origin (an older
	// browser), and with the service's own.
	for _, hdr := range []map[string]string{{"Origin": ""}, nil, {"Sec-Fetch-Site": "same-origin"}} {
		resp, body := b.do(http.MethodPost, "/tests", url.Values{"csrf": {csrf}, "party": {"CSRF Lab"}, "retests": {"0"}, "public_key": {publicKeyPEM(t)}}, []*http.Cookie{sc}, hdr)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `id="new-token"`) {
			t.Fatalf("the form with its token (headers %v): %d\n%s", hdr, resp.StatusCode, body)
		}
	}
	// A script with the admin token in its Authorization header needs no
	// CSRF token: a browser never sends that header for another site.
	resp, body := b.do(http.MethodPost, "/tests", url.Values{"party": {"Script Lab"}, "retests": {"0"}, "public_key": {publicKeyPEM(t)}}, nil, map[string]string{"Authorization": "Bearer " + s.admin, "Origin": ""})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("POST /tests with the admin token as a bearer token: %d\n%s", resp.StatusCode, body)
	}

	// Login CSRF: the sign-in form's token must match its cookie.
	lc, tok := b.loginForm()
	lc2, tok2 := b.loginForm()
	// A second tab (the browser sends the cookie) gets the same token, so
	// the first tab's form still works.
	if _, page := b.do(http.MethodGet, "/login", nil, []*http.Cookie{lc}, nil); csrfOf(t, page) != tok {
		t.Error("a second sign-in form got another token: the first one's would be refused")
	}
	logins := []struct {
		why     string
		form    url.Values
		cookies []*http.Cookie
		hdr     map[string]string
	}{
		{"no pre-session cookie (another site's form)", url.Values{"token": {s.admin}, "csrf": {tok}}, nil, nil},
		{"no token in the form", url.Values{"token": {s.admin}}, []*http.Cookie{lc}, nil},
		{"the token of another form", url.Values{"token": {s.admin}, "csrf": {tok2}}, []*http.Cookie{lc}, nil},
		{"another origin", url.Values{"token": {s.admin}, "csrf": {tok}}, []*http.Cookie{lc}, map[string]string{"Origin": "https://evil.example"}},
		{"a cross-site fetch", url.Values{"token": {s.admin}, "csrf": {tok}}, []*http.Cookie{lc}, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": ""}},
	}
	for _, c := range logins {
		resp, body := b.do(http.MethodPost, "/login", c.form, c.cookies, c.hdr)
		if resp.StatusCode != http.StatusForbidden || cookieOf(resp, sessionCookieName) != nil || !strings.Contains(body, `id="token"`) {
			t.Errorf("sign-in with %s: %d, cookies %v", c.why, resp.StatusCode, resp.Cookies())
		}
	}
	resp, _ = b.do(http.MethodPost, "/login", url.Values{"token": {s.admin}, "csrf": {tok2}}, []*http.Cookie{lc2}, nil)
	if resp.StatusCode != http.StatusSeeOther || cookieOf(resp, sessionCookieName) == nil {
		t.Errorf("sign-in with the form's own token: %d", resp.StatusCode)
	}
}

func publicKeyPEM(t *testing.T) string {
	t.Helper()
	pub, _, err := attest.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pp, err := attest.MarshalPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(pp)
}

// TestSessionCookie: the session cookie is a random id, never the admin
// token; it is HttpOnly, Secure, SameSite=Strict, Path=/ and __Host-
// prefixed over TLS; the store keeps only its SHA-256; and the admin token
// appears in no response and no log line.
func TestSessionCookie(t *testing.T) {
	var logged bytes.Buffer
	dsn, dataDir := backends(t)[0].dsn(t), t.TempDir()
	s := startWith(t, dsn, dataDir, tester.Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	b := newBrowser(t, s)
	// A wrong token first: refused, and not a session.
	lc, tok := b.loginForm()
	resp, body := b.do(http.MethodPost, "/login", url.Values{"token": {"adm_wrong"}, "csrf": {tok}}, []*http.Cookie{lc}, nil)
	if resp.StatusCode != http.StatusUnauthorized || cookieOf(resp, sessionCookieName) != nil {
		t.Errorf("a wrong admin token: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	var seen strings.Builder
	seen.WriteString(body)
	lc, tok = b.loginForm()
	resp, body = b.do(http.MethodPost, "/login", url.Values{"token": {s.admin}, "csrf": {tok}}, []*http.Cookie{lc}, nil)
	seen.WriteString(body + resp.Header.Get("Location"))
	for _, c := range resp.Header.Values("Set-Cookie") {
		seen.WriteString(c)
	}
	c := cookieOf(resp, sessionCookieName)
	if c == nil {
		t.Fatalf("no session cookie: %v", resp.Header.Values("Set-Cookie"))
	}
	raw, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil || len(raw) < 16 {
		t.Errorf("session id %q is not at least 128 bits of base64url (%v)", c.Value, err)
	}
	if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Domain != "" {
		t.Errorf("cookie %+v: want HttpOnly, Secure, SameSite=Strict, Path=/, no Domain", c)
	}
	if lc := cookieOf(resp, loginCookieName); lc == nil || lc.MaxAge >= 0 {
		t.Errorf("the sign-in form's cookie was not cleared: %v", lc)
	}
	for _, p := range []string{"/", "/audit", "/login"} {
		_, page := b.do(http.MethodGet, p, nil, []*http.Cookie{c}, nil)
		seen.WriteString(page)
	}
	resp, _ = b.do(http.MethodGet, "/login", nil, nil, nil)
	if lc := cookieOf(resp, loginCookieName); lc == nil || !lc.HttpOnly || !lc.Secure || lc.SameSite != http.SameSiteStrictMode || lc.Path != "/" {
		t.Errorf("the sign-in form's cookie %+v: want HttpOnly, Secure, SameSite=Strict, Path=/", lc)
	}
	if strings.Contains(seen.String(), s.admin) || strings.Contains(c.Value, s.admin) {
		t.Error("the admin token left the sign-in request (a page, a cookie or a redirect holds it)")
	}
	if strings.Contains(logged.String(), s.admin) || strings.Contains(logged.String(), "adm_wrong") {
		t.Errorf("a token is in the log:\n%s", logged.String())
	}
	if strings.Contains(logged.String(), c.Value) {
		t.Errorf("the session id is in the log:\n%s", logged.String())
	}
	// The store holds the id's hash, not the id.
	h := sha256.Sum256([]byte(c.Value))
	var n int
	if err := s.st.DB().QueryRow(`SELECT COUNT(*) FROM sessions WHERE id_hash = ?`, hex.EncodeToString(h[:])).Scan(&n); err != nil || n != 1 {
		t.Errorf("sessions with the id's hash: %d (%v)", n, err)
	}
	if err := s.st.DB().QueryRow(`SELECT COUNT(*) FROM sessions WHERE id_hash = ? OR csrf_token = ?`, c.Value, c.Value).Scan(&n); err != nil || n != 0 {
		t.Errorf("the store holds the session id itself: %d rows (%v)", n, err)
	}
}

// TestAPINotCookieAuthenticated: the JSON API takes a bearer token only; a
// session cookie, or a cookie holding the admin token (what the dashboard
// set before sessions), opens nothing.
func TestAPINotCookieAuthenticated(t *testing.T) {
	s := newService(t, backends(t)[0])
	b := newBrowser(t, s)
	sc, _ := b.signIn()
	cookies := map[string][]*http.Cookie{
		"a session cookie":             {sc},
		"the admin token as a cookie":  {{Name: "aimeter_session", Value: s.admin}},
		"the admin token, __Host- too": {{Name: sessionCookieName, Value: s.admin}},
	}
	for why, cs := range cookies {
		for _, p := range []string{"/api/v1/tests", "/api/v1/events"} {
			if resp, _ := b.do(http.MethodGet, p, nil, cs, nil); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s with %s: %d, want 401", p, why, resp.StatusCode)
			}
		}
		n := countItems(t, s)
		resp, _ := b.do(http.MethodPost, "/api/v1/tests", nil, cs, map[string]string{"Content-Type": "application/json"})
		if resp.StatusCode != http.StatusUnauthorized || countItems(t, s) != n {
			t.Errorf("POST /api/v1/tests with %s: %d, want 401", why, resp.StatusCode)
		}
	}
	if resp, _ := b.do(http.MethodGet, "/api/v1/tests", nil, nil, map[string]string{"Authorization": "Bearer " + s.admin}); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/v1/tests with the bearer token: %d", resp.StatusCode)
	}
}

// variantOn is variant with the bundle's system changed to another host.
func variantOn(t *testing.T, k bundletest.Kind, name, host string) string {
	t.Helper()
	b, err := bundle.Read(bundletest.Source(t, k))
	if err != nil {
		t.Fatal(err)
	}
	b.Name = name
	b.System.Hostname = host
	dir := filepath.Join(t.TempDir(), "variant")
	if err := derived.Write(dir, b); err != nil {
		t.Fatal(err)
	}
	return dir
}

// eNotation matches a number in e-notation, its sign as written or as
// html/template escapes "+".
var eNotation = regexp.MustCompile(`\d[eE](?:[+-]|&#43;)\d`)

// TestComparePage: runs of two systems side by side carry a visible
// warning (the rule of aimeter results compare); runs of one system do
// not; latencies are in ms or µs, never nanoseconds in e-notation.
func TestComparePage(t *testing.T) {
	s := newService(t, backends(t)[0])
	p := s.register(t, 3, "")
	var ids []int64
	for i, host := range []string{"", "", "rig-b.example"} {
		dir := variant(t, bundletest.MLPerf, fmt.Sprintf("compare run %d", i))
		if host != "" {
			dir = variantOn(t, bundletest.MLPerf, fmt.Sprintf("compare run %d", i), host)
		}
		rep, err := p.client.Submit(context.Background(), p.reg.TestID, dir, p.key)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rep.RunID)
	}
	b := newBrowser(t, s)
	sc, _ := b.signIn()
	get := func(a, c int64) string {
		t.Helper()
		resp, page := b.do(http.MethodGet, fmt.Sprintf("/compare?runs=%d,%d", a, c), nil, []*http.Cookie{sc}, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("compare %d %d: %d\n%s", a, c, resp.StatusCode, page)
		}
		return page
	}
	same := get(ids[0], ids[1])
	if strings.Contains(same, `id="warnings"`) {
		t.Errorf("runs of one system carry a warning:\n%s", same)
	}
	other := get(ids[0], ids[2])
	warn := regexp.MustCompile(`(?s)<div id="warnings"[^>]*>(.*?)</div>`).FindStringSubmatch(other)
	if warn == nil || !strings.Contains(warn[1], "Different systems") || !strings.Contains(warn[1], fmt.Sprintf("run %d", ids[0])) || !strings.Contains(warn[1], fmt.Sprintf("run %d", ids[2])) {
		t.Errorf("runs of two systems: no warning naming both:\n%s", other)
	}
	for name, page := range map[string]string{"same": same, "other": other} {
		row := regexp.MustCompile(`<tr><td>latency_ns\.p99(?: \(ns\))?</td>(.*?)</tr>`).FindStringSubmatch(page)
		if row == nil {
			t.Fatalf("%s: no latency_ns.p99 row:\n%s", name, page)
		}
		cells := regexp.MustCompile(`<td class="n">([^<]*)</td>`).FindAllStringSubmatch(row[1], -1)
		if len(cells) < 2 {
			t.Fatalf("%s: latency row %q", name, row[1])
		}
		for _, c := range cells[:2] {
			if !strings.HasSuffix(c[1], " ms") && !strings.HasSuffix(c[1], " µs") {
				t.Errorf("%s: latency shown as %q, want ms or µs", name, c[1])
			}
		}
		if m := eNotation.FindString(page); m != "" {
			t.Errorf("%s: e-notation on the page (%q)", name, m)
		}
	}
}
