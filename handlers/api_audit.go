package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
)

// exportAudit is GET /v1/audit?format=jsonl|csv&from=&to=&session=&person=&outcome=:
// the decisions the caller may read (sessions trees they hold read access on; every
// tree with --auth none), in chain order, streamed as they are read. from and to are
// RFC 3339 times bounding resolved_at (from inclusive, to exclusive); session selects
// that session and its sub-agents; person is resolved_by; outcome is accept, decline,
// cancel, resolved, expired or abandoned.
func (s *Server) exportAudit(c echo.Context) error {
	q := audit.Query{Format: c.QueryParam("format"), Session: c.QueryParam("session"),
		Person: c.QueryParam("person"), Outcome: c.QueryParam("outcome")}
	for name, dst := range map[string]*time.Time{"from": &q.From, "to": &q.To} {
		if v := c.QueryParam(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return bad(name, "must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
			}
			*dst = t
		}
	}
	if err := q.Validate(); err != nil {
		return err
	}
	ctx := c.Request().Context()
	f, err := s.audit.Scope(ctx, userOf(c), q)
	if err != nil {
		return err
	}
	w := c.Response()
	name := "gatehouse-audit." + q.Format
	if q.Format == audit.FormatCSV {
		w.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	} else {
		w.Header().Set(echo.HeaderContentType, "application/jsonl; charset=utf-8")
	}
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	n, err := s.audit.Write(ctx, f, q.Format, w, w)
	if err != nil {
		// The status line is gone: abort the connection so the client sees a broken
		// transfer, never a complete-looking but truncated export.
		s.log.Error("audit export failed", "request_id", requestID(c), "rows", n, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// auditCheckpoint is GET /v1/audit/checkpoint (admins): the latest signed daily
// checkpoint of the audit chain's head, for keeping outside the database.
func (s *Server) auditCheckpoint(c echo.Context) error {
	cp, err := s.audit.LatestCheckpoint(c.Request().Context(), userOf(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cp)
}
