package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/history"
	"github.com/gatehouse-dev/gatehouse/views"
)

// auditExportPath is the audit export the history page links to (GET /v1/audit).
const auditExportPath = "/v1/audit?format=csv"

// showHistoryPage lists the decided prompts the person can see, newest first, narrowed
// by the filter in the query.
func (s *Server) showHistoryPage(c echo.Context) error {
	f, err := history.ParseFilter(c.QueryParam)
	if err != nil {
		return err
	}
	page, err := s.history.List(c.Request().Context(), userOf(c), f)
	if err != nil {
		return err
	}
	d := views.HistoryPage{Chrome: s.chrome(c, "History", "history"), ExportURL: auditExportPath, Searched: page.Searched,
		Filter: views.HistoryFilter{Outcome: f.Outcome, Agent: f.Agent, Risk: f.Risk, Text: f.Text}}
	if page.Next != nil {
		d.NextURL = "/history?" + f.After(*page.Next).Values().Encode()
	}
	for i := range page.Entries {
		e := &page.Entries[i]
		d.Rows = append(d.Rows, views.HistoryRow{ID: e.Row.ID, ApproveURL: approvePath(e.Row.SessionID, e.Row.ID),
			Vendor: e.Vendor, Summary: e.Summary, Agent: e.Agent, Session: crumb(&e.Session), Risk: e.Risk,
			Outcome: outcomeOf(&e.Row)})
	}
	return s.render(c, http.StatusOK, views.History(d))
}

// historyEntryJSON is one decided prompt in GET /v1/history.
type historyEntryJSON struct {
	ElicitationID string    `json:"elicitation_id"`
	SessionID     string    `json:"session_id"`
	Agent         string    `json:"agent"`
	Vendor        string    `json:"vendor"`
	Tool          string    `json:"tool,omitempty"`
	Summary       string    `json:"summary"`
	Risk          string    `json:"risk,omitempty"`
	Outcome       string    `json:"outcome"`
	ResolvedBy    *string   `json:"resolved_by"`
	ResolvedVia   *string   `json:"resolved_via"`
	RuleID        *string   `json:"rule_id,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	ResolvedAt    time.Time `json:"resolved_at"`
}

// listHistory is GET /v1/history?outcome=&agent=&risk=&q=&limit=&before=: the decided
// prompts the caller can see, newest decision first; "next", when present, is the
// before value of the following page.
func (s *Server) listHistory(c echo.Context) error {
	f, err := history.ParseFilter(c.QueryParam)
	if err != nil {
		return err
	}
	page, err := s.history.List(c.Request().Context(), userOf(c), f)
	if err != nil {
		return err
	}
	out := struct {
		Entries []historyEntryJSON `json:"entries"`
		Next    string             `json:"next,omitempty"`
	}{Entries: make([]historyEntryJSON, 0, len(page.Entries))}
	for i := range page.Entries {
		e := &page.Entries[i]
		j := historyEntryJSON{ElicitationID: e.Row.ID, SessionID: e.Row.SessionID, Agent: e.Agent, Vendor: e.Vendor,
			Tool: e.Tool, Summary: e.Summary, Outcome: e.Outcome, ResolvedBy: e.Row.ResolvedBy,
			ResolvedVia: e.Row.ResolvedVia, RuleID: e.Row.RuleID, CreatedAt: e.Row.CreatedAt}
		if e.Risk != nil {
			j.Risk = string(e.Risk.Level)
		}
		if e.Row.ResolvedAt != nil {
			j.ResolvedAt = *e.Row.ResolvedAt
		}
		out.Entries = append(out.Entries, j)
	}
	if page.Next != nil {
		out.Next = history.FormatCursor(*page.Next)
	}
	return c.JSON(http.StatusOK, out)
}
