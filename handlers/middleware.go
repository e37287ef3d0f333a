package handlers

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/labstack/echo/v4"
)

const (
	ctxUser      = "gatehouse.user"
	ctxToken     = "gatehouse.token"
	ctxRequestID = "gatehouse.request_id"
	// ctxStart is when the request arrived (accessLog).
	ctxStart = "gatehouse.start"
	// ctxHeld marks a request answered later off net/http (hold): its access log line
	// is written when the answer is sent.
	ctxHeld = "gatehouse.held"
)

// statusClientGone is the status logged for a held request whose client hung up
// before its answer (nginx's "client closed request").
const statusClientGone = 499

// requestIDs tags every request with an id (echoed as X-Request-Id) for the logs.
func requestIDs(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if id == "" || len(id) > 64 {
			id = ids.New("req_")
		}
		c.Set(ctxRequestID, id)
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

func requestID(c echo.Context) string {
	s, _ := c.Get(ctxRequestID).(string)
	return s
}

// accessLog writes one slog line per request.
func (s *Server) accessLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		c.Set(ctxStart, start)
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		if held, _ := c.Get(ctxHeld).(bool); held {
			return nil
		}
		s.logRequest(lineOf(c), c.Response().Status, start, isRead(c.Request().Method))
		return nil
	}
}

// logLine is what a request's log lines say about it.
type logLine struct{ id, method, path string }

// lineOf is c's request as its log lines show it.
func lineOf(c echo.Context) logLine {
	r := c.Request()
	return logLine{id: requestID(c), method: r.Method, path: logPath(r)}
}

// kept is l for a request that keeps it while it waits (held): strings of its own,
// not the request line they were cut from — and not yet the attribute list (boxed
// values) they become.
func (l logLine) kept() logLine {
	return logLine{id: l.id, method: strings.Clone(l.method), path: strings.Clone(l.path)}
}

// attrs are l's attributes for a log line, followed by more.
func (l logLine) attrs(more ...any) []any {
	return append([]any{"request_id", l.id, "method", l.method, "path", l.path}, more...)
}

// actionPrefix starts the path of an action link, whose last segment is its token.
const actionPrefix = "/act/"

// logPath is a request's path as every log line shows it: an action link's token —
// the credential itself, good for a decision until it expires — is replaced by "…",
// so that whoever reads the logs cannot answer prompts with it.
func logPath(r *http.Request) string {
	if strings.HasPrefix(r.URL.Path, actionPrefix) {
		return actionPrefix + "…"
	}
	return r.URL.Path
}

// isRead reports whether method only reads: its successful requests (pages, polls,
// health checks, streams) are most of the traffic and say nothing happened.
func isRead(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// logRequest writes a request's access log line: a 5xx at warn, a
// read that succeeded at debug, the rest — writes, and every refusal — at info, so the
// log at its default level says what happened. Held requests write theirs when
// answered (hold).
func (s *Server) logRequest(line logLine, status int, start time.Time, read bool) {
	lvl := slog.LevelInfo
	if status >= 500 {
		lvl = slog.LevelWarn
	} else if read && status < 400 {
		lvl = slog.LevelDebug
	}
	s.log.Log(context.Background(), lvl, "http", line.attrs("status", status, "duration", time.Since(start))...)
}

// identify resolves the caller's identity for every route that needs one.
//
// A personal API token ("Authorization: Bearer ght_…") comes first, in every auth mode:
// when one is sent the identity header is not consulted at all (a token from a laptop
// may well pass a proxy that adds its own header), and a bad token is a 401 even when a
// trusted header would have named someone. A hooks-only token is refused (403) on every
// route but the hook routes and reading what it parked (tokenMayUse).
func (s *Server) identify(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if secret, ok := auth.BearerToken(r.Header.Values(echo.HeaderAuthorization)); ok {
			user, p, err := s.tokenIdentity(c, secret)
			if err != nil {
				return err
			}
			if p.HooksOnly() && !tokenMayUse(c) {
				return errs.Forbidden("this token may only send hooks and read the prompts they park")
			}
			c.Set(ctxUser, user)
			c.Set(ctxToken, p)
			return next(c)
		}
		if s.ident.Mode == auth.ModeOIDC {
			// The signed-in person of the browser cookie (pages only); API callers
			// send tokens (Authorization: Bearer, checked above, in every mode).
			return s.identifyOIDC(c, next)
		}
		var vals []string
		if s.ident.Header != "" {
			vals = r.Header.Values(s.ident.Header)
		}
		user, err := s.ident.Identify(r.RemoteAddr, vals)
		if err != nil {
			return err
		}
		c.Set(ctxUser, user)
		return next(c)
	}
}

// userOf returns the identity the identify middleware set.
func userOf(c echo.Context) string {
	u, _ := c.Get(ctxUser).(string)
	return u
}

// checkHost refuses, before anything else runs, a request whose Host header is not a
// name this server is known by (auth.HostGuard: DNS rebinding with --auth none). It
// answers 403 with the error envelope on the API and a plain error page in a browser.
// /healthz stays open to probes, which may use any name and learn nothing from it.
func (s *Server) checkHost(g *auth.HostGuard) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
			if r.URL.Path == "/healthz" || g.Allowed(r.Host, local) {
				return next(c)
			}
			s.log.Warn("refused request for a foreign host name (DNS rebinding?)", "request_id", requestID(c),
				"host", truncateRunes(r.Host, 100), "path", logPath(r))
			return errs.Forbidden("Gatehouse does not answer to the host name %q. Open it at its listen address, "+
				"or set --public-url to the address you use.", truncateRunes(r.Host, 100))
		}
	}
}

// readBodyWithin reads a request's whole body (already capped by the body limit) under
// a read deadline of d, before the handler runs, then lifts the deadline. A client that
// sends its headers and then trickles the body (slowloris) is cut off with a 408 and the
// connection closed.
//
// It is per request rather than http.Server.ReadTimeout because that deadline would
// stay on the connection after the body: net/http's background read for a hung-up
// client would then time out and cancel the request's context, ending every parked
// hook and SSE stream after d. Lifting the deadline once the body is in leaves parked
// requests and streams (which have no body) alone.
func (s *Server) readBodyWithin(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
				return next(c)
			}
			rc := http.NewResponseController(c.Response())
			if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
				return next(c) // a writer without deadlines (not net/http): nothing to bound
			}
			body, err := readSized(r.Body, r.ContentLength)
			_ = rc.SetReadDeadline(time.Time{})
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				s.log.Warn("request body too slow", "request_id", requestID(c), "path", logPath(r),
					"read_bytes", len(body), "within", d)
				c.Response().Header().Set(echo.HeaderConnection, "close")
				return echo.NewHTTPError(http.StatusRequestTimeout, "the request body did not arrive within "+d.String())
			}
			// Any other error (too large, client gone) reaches the handler where it reads
			// the body, as before, after the bytes that did arrive.
			r.Body = replay(body, err)
			return next(c)
		}
	}
}

// readAgain replays a body read ahead of the handler, then its read error, if any.
// Whoever reads it whole next takes its bytes as they are (readAll): a hook's body is
// read off the connection once, not copied again by each layer that needs it.
type readAgain struct {
	*bytes.Reader
	body []byte // until read: what Reader replays
	err  error
}

// replay is a request body that replays body, then err.
func replay(body []byte, err error) *readAgain {
	return &readAgain{Reader: bytes.NewReader(body), body: body, err: err}
}

func (b *readAgain) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err == io.EOF {
		// Read to the end: let the bytes go, or a parked request would hold its
		// body for as long as it waits.
		b.Reader.Reset(nil)
		b.body = nil
		if b.err != nil {
			return n, b.err
		}
	}
	return n, err
}

func (*readAgain) Close() error { return nil }

// readAll is io.ReadAll, except that a body read ahead (readAgain) and not read from
// since hands its bytes over as they are.
func readAll(r io.Reader) ([]byte, error) {
	if ra, ok := r.(*readAgain); ok && ra.body != nil && ra.Reader.Len() == len(ra.body) {
		body, err := ra.body, ra.err
		ra.Reader.Reset(nil)
		ra.body = nil
		return body, err
	}
	return io.ReadAll(r)
}

// readSized is io.ReadAll for a body of n bytes (its Content-Length, -1 when unknown):
// one buffer of the right size rather than a doubling series of them.
func readSized(r io.Reader, n int64) ([]byte, error) {
	if n <= 0 || n > 1<<20 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, n+1) // the read that meets the end needs room too
	for {
		m, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // longer than it said: grow as io.ReadAll does
		}
	}
}
