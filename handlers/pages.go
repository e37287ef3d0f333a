package handlers

import (
	"bytes"
	"io/fs"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/static"
	"github.com/gatehouse-dev/gatehouse/views"
)

// contentSecurityPolicy allows our own scripts, styles and streams only: no inline
// script or style, no eval, no framing (clickjacking an Approve button), no plugins.
// It is the second wall behind escaping: even text that slipped through could not run.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// pageHeaders sets the security and caching headers every browser page gets. Pages
// carry CSRF tokens and live state, so they are never cached.
func pageHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		setPageHeaders(c.Response().Header())
		return next(c)
	}
}

func setPageHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// assetURLs fingerprints the embedded assets once, at start.
func assetURLs() views.Assets {
	return views.Assets{CSS: static.URL(static.CSS), JS: static.URL(static.JS),
		HTMX: static.URL(static.HTMX), SSE: static.URL(static.SSE)}
}

// chrome builds the page frame: title, identity, assets and the pending flash notice.
func (s *Server) chrome(c echo.Context, title, nav string) views.Chrome {
	user := userOf(c)
	if user == auth.LocalUser {
		user = "" // single-user mode: nobody to name
	}
	ch := views.Chrome{Title: title, User: user, Assets: s.assets, Flash: s.takeFlash(c), Nav: nav}
	if s.oidc != nil && user != "" {
		ch.SignOutCSRF = s.csrfToken(c)
	}
	return ch
}

// render writes a component as an HTML page with status. It renders into a buffer
// first, so a failing component becomes a clean 500 rather than half a page.
func (s *Server) render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	s.saveBrowser(c)
	return c.HTMLBlob(status, buf.Bytes())
}

// isHTMX reports whether htmx sent the request (it expects a fragment, not a page).
func isHTMX(c echo.Context) bool { return c.Request().Header.Get("HX-Request") == "true" }

// redirect answers a form post with 303 See Other (post/redirect/get).
func (s *Server) redirect(c echo.Context, to string) error {
	s.saveBrowser(c)
	return c.Redirect(http.StatusSeeOther, to)
}

// serveStatic serves the embedded assets with a year-long, immutable cache lifetime:
// vendored files carry their version in the name and ours a content fingerprint.
func (s *Server) serveStatic(c echo.Context) error {
	name := strings.TrimPrefix(c.Param("*"), "/")
	if name == "" || strings.HasSuffix(name, "/") {
		return echo.ErrNotFound
	}
	if st, err := fs.Stat(static.FS, name); err != nil || st.IsDir() {
		return echo.ErrNotFound
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeFileFS(c.Response(), c.Request(), static.FS, name)
	return nil
}

// home sends the browser to the inbox.
func (s *Server) home(c echo.Context) error {
	return c.Redirect(http.StatusFound, "/inbox")
}

// startSSE starts a live page's event stream. The browser cookie is saved first,
// since headers cannot change once the stream starts.
func (s *Server) startSSE(c echo.Context) *eventStream {
	s.saveBrowser(c)
	return startEventStream(c)
}
