package handlers

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	gsessions "github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
)

// Browser state lives in one signed and encrypted cookie (gorilla/sessions): the CSRF
// token every form carries, the identity it was issued to, and a one-time flash notice.
const (
	browserCookie  = "gatehouse"
	ctxBrowser     = "gatehouse.browser"
	csrfField      = "csrf"
	keyCSRF        = "csrf"
	keyCSRFUser    = "csrf_user"
	keyFlash       = "flash"
	browserMaxAge  = 30 * 24 * 60 * 60
	errCSRFMessage = "This form has expired or did not come from Gatehouse. Reload the page and try again."
)

// newCookieStore derives the cookie signing and encryption keys from --session-secret,
// so one secret configures both and neither is the raw secret.
func newCookieStore(secret string) *gsessions.CookieStore {
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(label))
		return m.Sum(nil)
	}
	cs := gsessions.NewCookieStore(derive("gatehouse cookie signing key"), derive("gatehouse cookie encryption key"))
	cs.Options = &gsessions.Options{Path: "/", MaxAge: browserMaxAge, HttpOnly: true, SameSite: http.SameSiteLaxMode}
	cs.MaxAge(browserMaxAge)
	return cs
}

// browser is one request's view of the browser cookie; changes are written once, by
// saveBrowser, before the response starts.
type browser struct {
	sess  *gsessions.Session
	dirty bool
}

// browserOf loads the cookie once per request. A cookie that no longer decodes (the
// secret changed) is treated as absent.
func (s *Server) browserOf(c echo.Context) *browser {
	if b, ok := c.Get(ctxBrowser).(*browser); ok {
		return b
	}
	sess, err := s.cookies.Get(c.Request(), browserCookie)
	if err != nil || sess == nil {
		sess, _ = s.cookies.New(c.Request(), browserCookie)
	}
	b := &browser{sess: sess}
	c.Set(ctxBrowser, b)
	return b
}

// saveBrowser writes the cookie when this request changed it. Call before the
// response headers are sent.
func (s *Server) saveBrowser(c echo.Context) {
	b, ok := c.Get(ctxBrowser).(*browser)
	if !ok || !b.dirty {
		return
	}
	// With --auth oidc the cookie carries the sign-in: Secure whenever the public URL
	// is https, whatever scheme the proxy in front reports.
	b.sess.Options.Secure = c.Scheme() == "https" || (s.oidc != nil && strings.HasPrefix(s.publicURL, "https://"))
	if err := b.sess.Save(c.Request(), c.Response()); err != nil {
		s.log.Warn("save browser cookie", "err", err, "request_id", requestID(c))
	}
	b.dirty = false
}

// csrfToken returns the token forms must carry, minting one for this browser and user
// on first use. The token is bound to the identity it was issued to, so a shared
// browser whose proxy identity changes gets a fresh one.
func (s *Server) csrfToken(c echo.Context) string {
	b := s.browserOf(c)
	tok, _ := b.sess.Values[keyCSRF].(string)
	owner, _ := b.sess.Values[keyCSRFUser].(string)
	if tok == "" || owner != userOf(c) {
		var raw [32]byte
		_, _ = rand.Read(raw[:])
		tok = hex.EncodeToString(raw[:])
		b.sess.Values[keyCSRF] = tok
		b.sess.Values[keyCSRFUser] = userOf(c)
		b.dirty = true
	}
	return tok
}

// checkCSRF refuses a form post whose token is missing or does not match the one in
// this browser's cookie for this user. It runs before anything is decided. The token is
// read from the form body only — every Gatehouse form, htmx ones included, posts it as a
// hidden field — never from the query string, where it would leak into logs, history
// and Referer headers, and where a link could carry it.
func (s *Server) checkCSRF(c echo.Context) error {
	return s.checkCSRFToken(c, c.Request().PostFormValue(csrfField), "form")
}

// checkCSRFToken compares got, the token a request carried (in its form or, for the
// pages' scripts, a header: from), with the one this browser's cookie holds for the
// person making the request.
func (s *Server) checkCSRFToken(c echo.Context, got, from string) error {
	b := s.browserOf(c)
	want, _ := b.sess.Values[keyCSRF].(string)
	owner, _ := b.sess.Values[keyCSRFUser].(string)
	if want == "" || got == "" || owner != userOf(c) || !hmac.Equal([]byte(got), []byte(want)) {
		s.log.Warn("csrf check failed", "request_id", requestID(c), "path", logPath(c.Request()),
			"has_cookie_token", want != "", "token_from", from, "has_token", got != "")
		return errs.Forbidden(errCSRFMessage)
	}
	return nil
}

// setFlash leaves a notice for the next page this browser shows.
func (s *Server) setFlash(c echo.Context, msg string) {
	b := s.browserOf(c)
	b.sess.Values[keyFlash] = msg
	b.dirty = true
}

// takeFlash returns and clears the pending notice.
func (s *Server) takeFlash(c echo.Context) string {
	b := s.browserOf(c)
	msg, _ := b.sess.Values[keyFlash].(string)
	if msg != "" {
		delete(b.sess.Values, keyFlash)
		b.dirty = true
	}
	return msg
}
