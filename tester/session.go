package tester

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"aimeter/store"
)

// The dashboard's sessions. Signing in with the admin token makes a session:
// a random id (256 bits, base64url) that only the browser holds, in an
// HttpOnly, SameSite=Strict cookie (Secure, and named with the __Host-
// prefix, over TLS, which is how the service is served). The store keeps
// only the id's SHA-256, with the session's times and its CSRF token
// (store.Session), so a session survives a restart, is known to every
// service process sharing the database, and ends for good when its row is
// deleted: on sign-out, at its absolute expiry (Options.SessionLifetime) or
// once idle (Options.SessionIdleTimeout). The admin token itself is read
// from the sign-in form and compared with its hash; it is never put in a
// cookie, a URL, a page or the log.
//
// Every dashboard form that changes state carries the session's
// synchronizer token (a hidden "csrf" field, compared in constant time),
// and every POST is refused when the browser says it came from another
// origin (http.CrossOriginProtection's Sec-Fetch-Site check, and an Origin
// header that is present must be the service's own). The JSON API under
// /api/v1 takes only "Authorization: Bearer" tokens (bearer), never a
// cookie, so a browser cannot be made to call it for a signed-in tester.

// DefaultSessionLifetime is how long a dashboard session lasts from its
// sign-in when Options.SessionLifetime is 0: a working day.
const DefaultSessionLifetime = 12 * time.Hour

// DefaultSessionIdleTimeout ends a dashboard session unused for this long
// when Options.SessionIdleTimeout is 0.
const DefaultSessionIdleTimeout = time.Hour

// Cookie names. Over TLS they carry the __Host- prefix, which browsers
// accept only from a secure origin with Path=/ and no Domain: a sibling
// host cannot plant or overwrite them (cookie tossing).
const (
	sessionCookie = "aimeter_session"
	loginCookie   = "aimeter_login"
)

// csrfField is the hidden form field of the synchronizer token.
const csrfField = "csrf"

// loginFormLifetime bounds how long a sign-in form stays usable.
const loginFormLifetime = time.Hour

// sessionPolicy is the Server's session settings.
type sessionPolicy struct {
	lifetime time.Duration
	idle     time.Duration // ≤ 0: none
	cross    *http.CrossOriginProtection
}

func newSessionPolicy(o Options) sessionPolicy {
	p := sessionPolicy{lifetime: o.SessionLifetime, idle: o.SessionIdleTimeout, cross: http.NewCrossOriginProtection()}
	if p.lifetime <= 0 {
		p.lifetime = DefaultSessionLifetime
	}
	if p.idle == 0 {
		p.idle = DefaultSessionIdleTimeout
	}
	return p
}

// cookieName is name, with the __Host- prefix when r came over TLS.
func cookieName(r *http.Request, name string) string {
	if r.TLS != nil {
		return "__Host-" + name
	}
	return name
}

// setCookie sets (maxAge > 0) or clears (maxAge < 0) one of the
// dashboard's cookies.
func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
	c := &http.Cookie{Name: cookieName(r, name), Value: value, Path: "/", HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode}
	if maxAge < 0 {
		c.Value, c.MaxAge = "", -1
	} else {
		c.MaxAge = int(maxAge / time.Second)
	}
	http.SetCookie(w, c)
}

// cookieValue is the value of r's cookie name (cookieName), or "".
func cookieValue(r *http.Request, name string) string {
	if c, err := r.Cookie(cookieName(r, name)); err == nil {
		return c.Value
	}
	return ""
}

// secretLen is the length of newSecret's strings.
var secretLen = base64.RawURLEncoding.EncodedLen(32)

// newSecret returns 32 bytes from crypto/rand in unpadded base64url.
func newSecret() string {
	var b [32]byte
	rand.Read(b[:]) // crypto/rand does not fail on supported platforms
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// hashID is the hex SHA-256 of a session id: what the store keeps.
func hashID(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:])
}

// equalSecret compares two secrets in constant time (of their length); an
// empty one never matches.
func equalSecret(a, b string) bool {
	return a != "" && b != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// isAdminToken says whether tok is the admin token, comparing hashes in
// constant time.
func (s *Server) isAdminToken(tok string) bool {
	h := sha256.Sum256([]byte(tok))
	return tok != "" && subtle.ConstantTimeCompare(h[:], s.adminHash[:]) == 1
}

// dashAuth is how a dashboard request is signed in.
type dashAuth struct {
	// session is the cookie's session; nil when the request carried the
	// admin token as "Authorization: Bearer" (a script, not a browser:
	// no CSRF token is needed, since a browser never adds that header to
	// a request another site makes).
	session *store.Session
}

type authKey struct{}

// authOf returns the sign-in page wrapped r with.
func authOf(r *http.Request) *dashAuth {
	a, _ := r.Context().Value(authKey{}).(*dashAuth)
	return a
}

// authenticate returns how r is signed in to the dashboard, or nil when it
// is not (no session, a revoked, expired or idle one, a wrong token).
func (s *Server) authenticate(r *http.Request) (*dashAuth, error) {
	if r.Header.Get("Authorization") != "" {
		if s.isAdmin(r) {
			return &dashAuth{}, nil
		}
		return nil, nil
	}
	id := cookieValue(r, sessionCookie)
	if id == "" {
		return nil, nil
	}
	sess, err := s.store.UseSession(r.Context(), hashID(id), s.now(), s.sessions.idle)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &dashAuth{session: sess}, nil
}

// withAuth returns r with a in its context, for authOf.
func withAuth(r *http.Request, a *dashAuth) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), authKey{}, a))
}

// csrfRefused is the reason checkUnsafe refuses a request: 403.
type csrfRefused struct{ why string }

func (e *csrfRefused) Error() string { return "refused: " + e.why }

// checkOrigin refuses a request that a browser says came from another
// origin: http.CrossOriginProtection (Sec-Fetch-Site, else the Origin's
// host against Host), and an Origin header, when present, must be exactly
// the service's own scheme://host.
func (s *Server) checkOrigin(r *http.Request) error {
	if err := s.sessions.cross.Check(r); err != nil {
		return &csrfRefused{"the form came from another site (" + err.Error() + ")"}
	}
	if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, ownOrigin(r)) {
		return &csrfRefused{fmt.Sprintf("the form came from another origin (%.100q, not %s)", o, ownOrigin(r))}
	}
	return nil
}

// ownOrigin is the service's origin as r reached it.
func ownOrigin(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// checkUnsafe guards a request that may change state: checkOrigin, and for
// a cookie session the form's synchronizer token.
func (s *Server) checkUnsafe(r *http.Request, a *dashAuth) error {
	if err := s.checkOrigin(r); err != nil {
		return err
	}
	if a.session == nil {
		return nil // the admin token in an Authorization header
	}
	if !equalSecret(r.PostFormValue(csrfField), a.session.CSRFToken) {
		return &csrfRefused{"the form lacks this session's CSRF token (reload the page and try again)"}
	}
	return nil
}

// startSession makes a new session for a correct sign-in and sets its
// cookie. Any session the browser held before is revoked (a session id
// is never carried over a sign-in: no session fixation), and expired
// sessions are swept.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	now := s.now()
	if old := cookieValue(r, sessionCookie); old != "" {
		if err := s.store.RevokeSession(ctx, hashID(old)); err != nil {
			return err
		}
	}
	if _, err := s.store.DeleteExpiredSessions(ctx, now, s.sessions.idle); err != nil {
		return err
	}
	id := newSecret()
	sess := store.Session{IDHash: hashID(id), CSRFToken: newSecret(), CreatedAt: now, ExpiresAt: now.Add(s.sessions.lifetime)}
	if err := s.store.CreateSession(ctx, sess); err != nil {
		return err
	}
	setCookie(w, r, loginCookie, "", -1)
	setCookie(w, r, sessionCookie, id, s.sessions.lifetime)
	return nil
}

// endSession revokes r's session, if any, and clears its cookie.
func (s *Server) endSession(w http.ResponseWriter, r *http.Request) error {
	setCookie(w, r, sessionCookie, "", -1)
	if id := cookieValue(r, sessionCookie); id != "" {
		return s.store.RevokeSession(r.Context(), hashID(id))
	}
	return nil
}
