package handlers

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

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
			body, err := io.ReadAll(r.Body)
			_ = rc.SetReadDeadline(time.Time{})
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				s.log.Warn("request body too slow", "request_id", requestID(c), "path", r.URL.Path,
					"read_bytes", len(body), "within", d)
				c.Response().Header().Set(echo.HeaderConnection, "close")
				return echo.NewHTTPError(http.StatusRequestTimeout, "the request body did not arrive within "+d.String())
			}
			// Any other error (too large, client gone) reaches the handler where it reads
			// the body, as before, after the bytes that did arrive.
			r.Body = readAgain{Reader: bytes.NewReader(body), err: err}
			return next(c)
		}
	}
}

// readAgain replays a body read ahead of the handler, then its read error, if any.
type readAgain struct {
	*bytes.Reader
	err error
}

func (b readAgain) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err == io.EOF && b.err != nil {
		return n, b.err
	}
	return n, err
}

func (readAgain) Close() error { return nil }
