package handlers

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/views"
)

// --auth oidc keeps, in the browser cookie (signed and encrypted with
// --session-secret), the signed-in person and the secret of their sign-in — which the
// database must still hold (auth.SignIns: signing out deletes it) — beside the CSRF
// token, together with the sign-ins this browser has started and not finished.
const (
	keySignedIn      = "user"
	keySignInSecret  = "sign_in"
	keyPendingSignIn = "oidc_pending"
	// maxPendingSignIns bounds the sign-ins one browser may have under way (tabs).
	maxPendingSignIns = 4
	// ctxSignIn holds the request's live sign-in (signIn), once read.
	ctxSignIn = "gatehouse.sign_in"
)

// signIn is the live sign-in a request came with: who, until when, and its secret (to
// re-check it while a stream is open).
type signIn struct {
	user    string
	expires time.Time
	secret  string
}

// identifyOIDC is identify for --auth oidc: the signed-in person of the browser
// cookie for pages. The API is for tokens only (the cookie does not work there, so a
// page an attacker shows cannot drive the API with it): API tokens are checked before
// this, in every mode; an API call that reaches here gets 401. A page without a
// sign-in is sent to sign in, and comes back to where it was afterwards.
func (s *Server) identifyOIDC(c echo.Context, next echo.HandlerFunc) error {
	r := c.Request()
	if !s.isPage(c) {
		return errs.Unauthorized("send an API token: Authorization: Bearer <token>")
	}
	user, err := s.signedIn(c)
	if err != nil {
		return err
	}
	if user != "" {
		c.Set(ctxUser, user)
		return next(c)
	}
	if isHTMX(c) {
		// htmx swaps fragments: ask it to load the sign-in page instead.
		back := "/inbox"
		if u, err := url.Parse(r.Header.Get("HX-Current-URL")); err == nil {
			back = signInReturn(u.RequestURI())
		}
		c.Response().Header().Set("HX-Redirect", signInPath(back))
		return errs.Unauthorized("sign in again")
	}
	if r.Method != http.MethodGet || strings.Contains(r.Header.Get(echo.HeaderAccept), "text/event-stream") {
		return errs.Unauthorized("sign in again")
	}
	return c.Redirect(http.StatusSeeOther, signInPath(signInReturn(r.URL.RequestURI())))
}

// signedIn returns the person this browser signed in as, or "" when nobody did, the
// sign-in ran out, or it was signed out — from this browser or any copy of its cookie,
// on any replica (the database is asked on every request). An error is the database
// failing, not a missing sign-in.
func (s *Server) signedIn(c echo.Context) (string, error) {
	if si, ok := c.Get(ctxSignIn).(signIn); ok {
		return si.user, nil
	}
	b := s.browserOf(c)
	user, _ := b.sess.Values[keySignedIn].(string)
	secret, _ := b.sess.Values[keySignInSecret].(string)
	if user == "" || secret == "" || s.signIns == nil {
		return "", nil
	}
	live, err := s.signIns.Check(c.Request().Context(), secret)
	if errors.Is(err, errs.ErrUnauthorized) || (err == nil && live.User != user) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	c.Set(ctxSignIn, signIn{user: user, expires: live.Expires, secret: secret})
	return user, nil
}

// startSignIn sends the browser to the provider with a fresh state, nonce and PKCE
// challenge, which the browser keeps for the callback.
func (s *Server) startSignIn(c echo.Context) error {
	next := signInReturn(c.QueryParam("next"))
	to, pending, err := s.oidc.Begin(c.Request().Context(), next, s.elicit.Now())
	if err != nil {
		return s.signInFailed(c, err, next)
	}
	b := s.browserOf(c)
	list := append(pendingSignIns(b), pending)
	if len(list) > maxPendingSignIns {
		list = list[len(list)-maxPendingSignIns:]
	}
	setPendingSignIns(b, list)
	s.saveBrowser(c)
	return c.Redirect(http.StatusFound, to)
}

// finishSignIn is the provider's redirect back: the state picks the pending sign-in
// (used once, whatever happens), and the code becomes a verified identity.
func (s *Server) finishSignIn(c echo.Context) error {
	q := c.Request().URL.Query()
	state := q.Get("state")
	b := s.browserOf(c)
	var pending auth.PendingSignIn
	var rest []auth.PendingSignIn
	for _, p := range pendingSignIns(b) {
		if p.State == state && state != "" {
			pending = p
		} else if s.elicit.Now().Sub(p.Started) <= auth.PendingLifetime {
			rest = append(rest, p)
		}
	}
	setPendingSignIns(b, rest)
	if e := q.Get("error"); e != "" {
		msg := "The sign-in provider refused the sign-in (" + truncateRunes(e, 64) + ")."
		if d := q.Get("error_description"); d != "" {
			msg += " " + truncateRunes(d, 300)
		}
		return s.signInFailed(c, errs.Forbidden("%s", msg), pending.Next)
	}
	user, err := s.oidc.Finish(c.Request().Context(), pending, state, q.Get("code"), s.elicit.Now())
	if err != nil {
		return s.signInFailed(c, err, pending.Next)
	}
	previous, _ := b.sess.Values[keySignInSecret].(string)
	secret, _, err := s.signIns.Start(c.Request().Context(), user, previous)
	if err != nil {
		return err
	}
	b.sess.Values[keySignedIn] = user
	b.sess.Values[keySignInSecret] = secret
	delete(b.sess.Values, keyCSRF) // a new person gets a new CSRF token
	b.dirty = true
	s.log.Info("signed in", "user", user, "request_id", requestID(c))
	return s.redirect(c, signInReturn(pending.Next))
}

// signOut ends this browser's sign-in (a form post with the CSRF token, so another
// site cannot sign people out): deleted from the database, so a copy of the cookie no
// longer works either, on any replica, and the streams it opened end; then the cookie
// forgets it.
func (s *Server) signOut(c echo.Context) error {
	b := s.browserOf(c)
	user, err := s.signedIn(c)
	if err != nil {
		return err
	}
	if user != "" {
		c.Set(ctxUser, user)
		if err := s.checkCSRF(c); err != nil {
			return err
		}
		secret, _ := b.sess.Values[keySignInSecret].(string)
		if err := s.signIns.End(c.Request().Context(), secret); err != nil {
			return err
		}
		s.log.Info("signed out", "user", user, "request_id", requestID(c))
	}
	for _, k := range []string{keySignedIn, keySignInSecret, keyCSRF, keyCSRFUser, keyPendingSignIn} {
		delete(b.sess.Values, k)
	}
	b.dirty = true
	return s.redirect(c, "/auth/signedout")
}

// showSignedOut confirms the sign-out (a page of its own, so reloading it does not
// sign the browser straight back in at the provider).
func (s *Server) showSignedOut(c echo.Context) error {
	if user, _ := s.signedIn(c); user != "" {
		return s.redirect(c, "/inbox")
	}
	return s.render(c, http.StatusOK, views.SignedOut(views.SignInPage{
		Chrome: views.Chrome{Title: "Signed out", Assets: s.assets}}))
}

// signInFailed shows why a sign-in was refused: 400 for a callback that does not
// belong to this sign-in or a token that does not verify, 403 for a person not
// admitted, 502 when the provider could not be asked — never a 500.
func (s *Server) signInFailed(c echo.Context, err error, next string) error {
	status, _, msg := classify(err)
	if errors.Is(err, auth.ErrProviderUnreachable) || status >= 500 {
		s.log.Warn("sign-in: provider", "err", err, "request_id", requestID(c))
		status, msg = http.StatusBadGateway, "The sign-in provider could not be reached. Try again in a moment."
	} else {
		s.log.Info("sign-in refused", "status", status, "reason", msg, "request_id", requestID(c))
	}
	return s.render(c, status, views.SignInFailed(views.SignInPage{
		Chrome: views.Chrome{Title: "Sign-in refused", Assets: s.assets}, Status: status, Message: msg, Next: signInReturn(next)}))
}

func pendingSignIns(b *browser) []auth.PendingSignIn {
	raw, _ := b.sess.Values[keyPendingSignIn].(string)
	var list []auth.PendingSignIn
	if raw != "" && json.Unmarshal([]byte(raw), &list) != nil {
		return nil
	}
	return list
}

func setPendingSignIns(b *browser, list []auth.PendingSignIn) {
	if len(list) == 0 {
		delete(b.sess.Values, keyPendingSignIn)
	} else {
		raw, _ := json.Marshal(list)
		b.sess.Values[keyPendingSignIn] = string(raw)
	}
	b.dirty = true
}

// signInReturn keeps a return address on this server: a local path, never "//host" or
// "/\host" (which browsers read as another site), nor the sign-in routes themselves.
func signInReturn(next string) string {
	if next == "" || len(next) > 2000 || next[0] != '/' || strings.HasPrefix(next, "//") ||
		strings.ContainsAny(next, "\\\r\n\t") || strings.HasPrefix(next, "/auth/") {
		return "/inbox"
	}
	return next
}

func signInPath(next string) string { return "/auth/signin?next=" + url.QueryEscape(next) }
