package tester

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"aimeter/store"
)

// sessionCookie holds the admin token of a dashboard session (HttpOnly,
// Secure, SameSite=Strict).
const sessionCookie = "aimeter_session"

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"time": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"num": func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) },
	"opt": func(v *float64) string {
		if v == nil {
			return "-"
		}
		return strconv.FormatFloat(*v, 'g', 6, 64)
	},
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
	"json": func(b []byte) string { return string(b) },
}).ParseFS(templateFS, "templates/*.html"))

func (s *Server) dashboardRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /login", s.pageLogin)
	m.HandleFunc("POST /login", s.postLogin)
	m.HandleFunc("POST /logout", s.postLogout)
	m.HandleFunc("GET /{$}", s.page(s.pageTests))
	m.HandleFunc("POST /tests", s.page(s.postTest))
	m.HandleFunc("GET /tests/{id}", s.page(s.pageTest))
	m.HandleFunc("GET /runs/{id}", s.page(s.pageRun))
	m.HandleFunc("GET /runs/{id}/files/{name...}", s.page(s.runFile))
	m.HandleFunc("GET /compare", s.page(s.pageCompare))
	m.HandleFunc("GET /audit", s.page(s.pageAudit))
}

// page wraps a dashboard handler: the admin session is required (else the
// login page), and an error becomes an error page.
func (s *Server) page(h func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.isAdmin(r) {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
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
			s.render(w, "error", map[string]any{"Title": "Error", "Error": err.Error()})
		}
	}
}

func (s *Server) render(w http.ResponseWriter, name string, data any) error {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-src 'self'; frame-ancestors 'none'")
	return pages.ExecuteTemplate(w, name, data)
}

func (s *Server) pageLogin(w http.ResponseWriter, r *http.Request) {
	s.render(w, "login", map[string]any{"Title": "Sign in"})
}

func (s *Server) postLogin(w http.ResponseWriter, r *http.Request) {
	tok := strings.TrimSpace(r.PostFormValue("token"))
	r.Header.Set("Authorization", "Bearer "+tok)
	if tok == "" || !s.isAdmin(r) {
		w.WriteHeader(http.StatusUnauthorized)
		s.render(w, "login", map[string]any{"Title": "Sign in", "Error": "That is not the admin token (admin.token in the service's data directory)."})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: tok, Path: "/", HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) postLogout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
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
	return s.render(w, "tests", map[string]any{"Title": "Test items", "Items": views})
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
	return s.render(w, "registered", map[string]any{"Title": "Registered " + out.TestID, "R": out, "Config": cfg})
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
	return s.render(w, "test", map[string]any{"Title": "Test item " + it.ID, "T": v, "Audit": a})
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
	return s.render(w, "run", map[string]any{"Title": fmt.Sprintf("Run %d", id), "R": v, "HasReport": hasReport})
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
	return s.render(w, "compare", map[string]any{"Title": "Runs side by side", "C": c})
}

func (s *Server) pageAudit(w http.ResponseWriter, r *http.Request) error {
	a, err := s.Audit(r, r.URL.Query().Get("test"))
	if err != nil {
		return err
	}
	return s.render(w, "audit", map[string]any{"Title": "Audit trail", "A": a})
}
