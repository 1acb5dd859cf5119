package tester

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"aimeter/report"
	"aimeter/store"
)

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"time": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"metric": formatMetric,
	"pct": func(v *float64) string {
		if v == nil {
			return ""
		}
		return fmt.Sprintf("%+.1f %%", *v*100)
	},
	"short": func(s string) string {
		if len(s) > 12 {
			return s[:12]
		}
		return s
	},
	"timeUnit": isTimeUnit,
	"json":     func(b []byte) string { return string(b) },
}).ParseFS(templateFS, "templates/*.html"))

// nsPerUnit is the length of a time unit a metric may be stored in, in
// nanoseconds.
var nsPerUnit = map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}

// isTimeUnit says whether a metric's unit is a time, which formatMetric
// writes with a unit of its own.
func isTimeUnit(unit string) bool { _, ok := nsPerUnit[unit]; return ok }

// formatMetric formats a metric's value (a float64, or a *float64 that is
// "-" when nil) for the dashboard: a time (unit ns, µs, ms or s) as the
// report does (report.FormatDuration: "850.0 µs", "1.235 ms"), other
// figures with up to six significant digits, never in e-notation (under
// 0.001 excepted).
func formatMetric(v any, unit string) string {
	var x float64
	switch v := v.(type) {
	case float64:
		x = v
	case *float64:
		if v == nil {
			return "-"
		}
		x = *v
	default:
		return fmt.Sprint(v)
	}
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "n/a"
	case isTimeUnit(unit):
		ns := x * nsPerUnit[unit]
		if math.Abs(ns) >= math.MaxInt64 {
			return "n/a"
		}
		return report.FormatDuration(int64(math.Round(ns)))
	case x == 0:
		return "0"
	case math.Abs(x) < 1e-3:
		return strconv.FormatFloat(x, 'g', 6, 64)
	}
	decimals := max(5-int(math.Floor(math.Log10(math.Abs(x)))), 0)
	out := strconv.FormatFloat(x, 'f', decimals, 64)
	if strings.Contains(out, ".") {
		out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	}
	return out
}

func (s *Server) dashboardRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /login", s.pageLogin)
	m.HandleFunc("POST /login", s.postLogin)
	m.HandleFunc("POST /logout", s.page(s.postLogout))
	m.HandleFunc("GET /{$}", s.page(s.pageTests))
	m.HandleFunc("POST /tests", s.page(s.postTest))
	m.HandleFunc("GET /tests/{id}", s.page(s.pageTest))
	m.HandleFunc("GET /runs/{id}", s.page(s.pageRun))
	m.HandleFunc("GET /runs/{id}/files/{name...}", s.page(s.runFile))
	m.HandleFunc("GET /compare", s.page(s.pageCompare))
	m.HandleFunc("GET /audit", s.page(s.pageAudit))
}

// page wraps a dashboard handler: the admin session is required (else the
// login page), a request that may change state must pass checkUnsafe
// (else 403, and the handler does not run), and an error becomes an error
// page.
func (s *Server) page(h func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, err := s.authenticate(r)
		if err != nil {
			s.log.Error("dashboard session", "err", err)
			w.WriteHeader(http.StatusInternalServerError)
			s.render(w, r, "error", map[string]any{"Title": "Error", "Error": "internal error: " + err.Error()})
			return
		}
		if a == nil {
			setCookie(w, r, sessionCookie, "", -1)
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		r = withAuth(r, a)
		if !isSafeMethod(r.Method) {
			if err := s.checkUnsafe(r, a); err != nil {
				s.log.Warn("dashboard request refused", "method", r.Method, "path", r.URL.Path, "why", err.Error())
				w.WriteHeader(http.StatusForbidden)
				s.render(w, r, "error", map[string]any{"Title": "Refused", "Error": err.Error()})
				return
			}
		}
		if err := h(w, r); err != nil {
			code := http.StatusInternalServerError
			var ue usageError
			switch {
			case errors.Is(err, store.ErrNotFound):
				code = http.StatusNotFound
			case errors.As(err, &ue):
				code = http.StatusBadRequest
			}
			w.WriteHeader(code)
			s.render(w, r, "error", map[string]any{"Title": "Error", "Error": err.Error()})
		}
	}
}

func isSafeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// render writes a page. A signed-in page gets its session's CSRF token as
// .CSRF, for the forms that change state (the sign-out button on every
// page among them). Pages are not cached: they hold CSRF tokens, and a
// registration's page its client token.
func (s *Server) render(w http.ResponseWriter, r *http.Request, name string, data map[string]any) error {
	data["CSRF"] = ""
	if a := authOf(r); a != nil && a.session != nil {
		data["CSRF"] = a.session.CSRFToken
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "same-origin")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-src 'self'; frame-ancestors 'none'; form-action 'self'")
	return pages.ExecuteTemplate(w, name, data)
}

// loginPage shows the sign-in form with code and msg ("" for none).
//
// Login CSRF (another site signing the browser in, with credentials of its
// choosing) is countered with a pre-session token, as OWASP's CSRF cheat
// sheet advises: the form carries a fresh random token that must equal
// the one in a short-lived HttpOnly, SameSite=Strict cookie (__Host-
// prefixed over TLS), and the POST must pass checkOrigin. Another site's
// form cannot send the cookie (SameSite=Strict) nor plant one (__Host-),
// and a browser marks its request cross-site besides. A session made
// without the service's own form thus cannot be forced on a browser;
// there is no server-side state before sign-in.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, code int, msg string) {
	// A form open in another tab keeps working: the cookie's token is
	// reused while it lasts. (A value another site managed to plant would
	// not help it: its form would still fail checkOrigin.)
	tok := cookieValue(r, loginCookie)
	if len(tok) != secretLen {
		tok = newSecret()
	}
	setCookie(w, r, loginCookie, tok, loginFormLifetime)
	if code != http.StatusOK {
		w.WriteHeader(code)
	}
	data := map[string]any{"Title": "Sign in", "LoginCSRF": tok}
	if msg != "" {
		data["Error"] = msg
	}
	s.render(w, r, "login", data)
}

func (s *Server) pageLogin(w http.ResponseWriter, r *http.Request) {
	s.loginPage(w, r, http.StatusOK, "")
}

// postLogin signs in: the admin token is read from the form, compared by
// hash and then forgotten; the browser gets a new session's id instead.
func (s *Server) postLogin(w http.ResponseWriter, r *http.Request) {
	if err := s.checkOrigin(r); err != nil {
		s.log.Warn("sign-in refused", "why", err.Error())
		s.loginPage(w, r, http.StatusForbidden, "Sign-in refused: "+err.Error()+".")
		return
	}
	if !equalSecret(r.PostFormValue(csrfField), cookieValue(r, loginCookie)) {
		s.loginPage(w, r, http.StatusForbidden, "The sign-in form expired or did not come from this service: sign in again.")
		return
	}
	if !s.isAdminToken(strings.TrimSpace(r.PostFormValue("token"))) {
		s.log.Warn("sign-in refused", "why", "wrong admin token")
		s.loginPage(w, r, http.StatusUnauthorized, "That is not the admin token (admin.token in the service's data directory).")
		return
	}
	if err := s.startSession(w, r); err != nil {
		s.log.Error("dashboard session", "err", err)
		s.loginPage(w, r, http.StatusInternalServerError, "internal error: "+err.Error())
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// postLogout signs out: the session is revoked in the store, so its id
// stops working wherever it was copied to. It is a state-changing form
// like any other (page's checks); a browser without a valid session is
// sent to sign in.
func (s *Server) postLogout(w http.ResponseWriter, r *http.Request) error {
	if err := s.endSession(w, r); err != nil {
		return err
	}
	http.Redirect(w, r, "/login", http.StatusSeeOther)
	return nil
}

func (s *Server) pageTests(w http.ResponseWriter, r *http.Request) error {
	items, err := s.store.TestItems(r.Context())
	if err != nil {
		return err
	}
	var views []*TestItemView
	for i := range items {
		v, err := s.testView(r, &items[i], true)
		if err != nil {
			return err
		}
		views = append(views, v)
	}
	return s.render(w, r, "tests", map[string]any{"Title": "Test items", "Items": views})
}

// postTest registers a test item from the dashboard's form and shows its
// token and configuration once.
func (s *Server) postTest(w http.ResponseWriter, r *http.Request) error {
	retests, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue("retests")))
	if err != nil {
		return usageErr("retests: not a whole number")
	}
	reg := Registration{
		TestID:          strings.TrimSpace(r.PostFormValue("test_id")),
		Party:           r.PostFormValue("party"),
		RetestAllowance: retests,
		PublicKey:       strings.TrimSpace(r.PostFormValue("public_key")) + "\n",
		ExpiresIn:       strings.TrimSpace(r.PostFormValue("expires_in")),
	}
	out, err := s.Register(r, reg)
	if err != nil {
		return err
	}
	cfg, _ := jsonIndent(out.Config)
	return s.render(w, r, "registered", map[string]any{"Title": "Registered " + out.TestID, "R": out, "Config": cfg})
}

func (s *Server) pageTest(w http.ResponseWriter, r *http.Request) error {
	it, err := s.store.TestItem(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	v, err := s.testView(r, it, true)
	if err != nil {
		return err
	}
	a, err := s.Audit(r, it.ID)
	if err != nil {
		return err
	}
	sets, err := s.store.ShardSets(r.Context(), it.ID, "")
	if err != nil {
		return err
	}
	var shards []*ShardSetView
	for _, ss := range sets {
		shards = append(shards, newShardSetView(ss))
	}
	return s.render(w, r, "test", map[string]any{"Title": "Test item " + it.ID, "T": v, "Audit": a, "Shards": shards})
}

func (s *Server) pageRun(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return usageErr("run id: not a number")
	}
	v, err := s.runView(r, id)
	if err != nil {
		return err
	}
	hasReport := false
	for _, a := range v.Artifacts {
		hasReport = hasReport || a.Name == "report.html"
	}
	data := map[string]any{"Title": fmt.Sprintf("Run %d", id), "R": v, "HasReport": hasReport}
	// A merge of a sharded test's shards names them (tester/shards.go).
	if ss, err := s.store.ShardSetOfRun(r.Context(), id); err == nil {
		data["Shards"] = newShardSetView(ss)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return s.render(w, r, "run", data)
}

// runFile serves a stored file of a run. Uploaded content is untrusted:
// it is served in a sandbox, so a page of it cannot act for the dashboard.
func (s *Server) runFile(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return usageErr("run id: not a number")
	}
	name := r.PathValue("name")
	arts, err := s.store.Artifacts(r.Context(), id)
	if err != nil {
		return err
	}
	for _, a := range arts {
		if a.Name != name {
			continue
		}
		w.Header().Set("Content-Security-Policy", "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		switch path.Ext(name) {
		case ".html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		case ".json":
			w.Header().Set("Content-Type", "application/json")
		case ".txt", ".jsonl", ".log":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		default:
			w.Header().Set("Content-Type", "application/octet-stream")
		}
		http.ServeFile(w, r, s.store.Path(a.Path))
		return nil
	}
	return fmt.Errorf("run %d has no file %q: %w", id, name, store.ErrNotFound)
}

func (s *Server) pageCompare(w http.ResponseWriter, r *http.Request) error {
	ids, err := parseRunIDs(r)
	if err != nil {
		return usageErr(err.Error())
	}
	c, err := s.Compare(r, ids)
	if err != nil {
		return err
	}
	return s.render(w, r, "compare", map[string]any{"Title": "Runs side by side", "C": c, "Warnings": seriesWarnings(c.Runs)})
}

// seriesWarnings says which runs are not like for like, by the rule of
// aimeter results compare (store.Comparison.OtherSeries): the newest run
// (the highest ID) is the candidate, and each other run whose series key
// differs from its own is named, with what differs (the system, the SUT
// configuration, the workload, from the keys store.Run carries).
func seriesWarnings(runs []store.Run) []string {
	if len(runs) < 2 {
		return nil
	}
	cand := runs[0]
	for _, r := range runs[1:] {
		if r.ID > cand.ID {
			cand = r
		}
	}
	var out []string
	for _, r := range runs {
		if r.ID == cand.ID || r.SeriesKey == cand.SeriesKey {
			continue
		}
		var parts []string
		if r.SystemKey != cand.SystemKey {
			parts = append(parts, "system")
		}
		if r.ConfigKey != cand.ConfigKey {
			parts = append(parts, "SUT configuration")
		}
		if r.WorkloadKey != cand.WorkloadKey {
			parts = append(parts, "workload")
		}
		what := "series"
		switch len(parts) {
		case 0:
		case 1:
			what = parts[0]
		default:
			what = strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
		}
		lead := "Different systems: run"
		if r.SystemKey == cand.SystemKey {
			lead = "Run"
		}
		out = append(out, fmt.Sprintf("%s %d (series %s) and run %d (series %s) differ in %s; their figures are not a like-for-like comparison.",
			lead, r.ID, r.SeriesKey, cand.ID, cand.SeriesKey, what))
	}
	return out
}

func (s *Server) pageAudit(w http.ResponseWriter, r *http.Request) error {
	a, err := s.Audit(r, r.URL.Query().Get("test"))
	if err != nil {
		return err
	}
	return s.render(w, r, "audit", map[string]any{"Title": "Audit trail", "A": a})
}
