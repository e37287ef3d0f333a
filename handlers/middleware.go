package handlers

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/ids"
)

const (
	ctxUser      = "gatehouse.user"
	ctxRequestID = "gatehouse.request_id"
)

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
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		status := c.Response().Status
		lvl := slog.LevelDebug
		if status >= 500 {
			lvl = slog.LevelWarn
		} else if c.Request().URL.Path != "/healthz" {
			lvl = slog.LevelInfo
		}
		s.log.Log(c.Request().Context(), lvl, "http", "request_id", requestID(c), "method", c.Request().Method,
			"path", c.Request().URL.Path, "status", status, "duration", time.Since(start))
		return nil
	}
}

// identify resolves the caller's identity for every route that needs one.
func (s *Server) identify(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		hv, present := "", false
		if vals, ok := r.Header[http.CanonicalHeaderKey(s.ident.Header)]; ok && s.ident.Header != "" {
			present = true
			if len(vals) > 0 {
				hv = vals[0]
			}
		}
		user, err := s.ident.Identify(r.RemoteAddr, hv, present)
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
