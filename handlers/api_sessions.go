package handlers

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/sessions"
	"github.com/gatehouse-dev/gatehouse/models"
)

// sessionJSON is the session object of the API.
type sessionJSON struct {
	ID                string    `json:"id"`
	AgentID           string    `json:"agent_id"`
	Kind              string    `json:"kind"`
	Title             string    `json:"title"`
	ParentSessionID   *string   `json:"parent_session_id"`
	RootSessionID     string    `json:"root_session_id"`
	CreatedBy         string    `json:"created_by"`
	CreatedAt         time.Time `json:"created_at"`
	ExternalSessionID *string   `json:"external_session_id,omitempty"`
	// PendingElicitations is a pointer so that single-session answers always carry the
	// key (an empty list included) while lists, which carry a count, leave it out.
	PendingElicitations *[]map[string]any `json:"pending_elicitations,omitempty"`
	PendingCount        *int              `json:"pending_elicitations_count,omitempty"`
}

func toSessionJSON(s *models.Session) sessionJSON {
	return sessionJSON{ID: s.ID, AgentID: s.AgentID, Kind: s.Kind, Title: s.Title, ParentSessionID: s.ParentID,
		RootSessionID: s.RootID, CreatedBy: s.CreatedBy, CreatedAt: s.CreatedAt, ExternalSessionID: s.ExternalSessionID}
}

func (s *Server) createAgent(c echo.Context) error {
	var in sessions.AgentInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	a, err := s.sessions.CreateAgent(c.Request().Context(), userOf(c), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, a)
}

func (s *Server) getAgent(c echo.Context) error {
	a, err := s.sessions.GetAgent(c.Request().Context(), userOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

func (s *Server) listAgents(c echo.Context) error {
	list, err := s.sessions.ListAgents(c.Request().Context(), userOf(c))
	if err != nil {
		return err
	}
	if list == nil {
		list = []models.Agent{}
	}
	return c.JSON(http.StatusOK, map[string]any{"agents": list})
}

func (s *Server) createSession(c echo.Context) error {
	var in sessions.SessionInput
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	sess, err := s.sessions.CreateSession(c.Request().Context(), userOf(c), in)
	if err != nil {
		return err
	}
	out := toSessionJSON(sess)
	out.PendingElicitations = &[]map[string]any{}
	return c.JSON(http.StatusCreated, out)
}

// getSession answers the session snapshot, including every pending prompt of its
// subtree (descendants' prompts carry params.target_session_id) — for a hooks-only
// token, only the prompts parked with it.
func (s *Server) getSession(c echo.Context) error {
	ctx := c.Request().Context()
	sess, err := s.sessions.Authorize(ctx, userOf(c), c.Param("sid"), auth.Read)
	if err != nil {
		return err
	}
	pending, _, err := s.elicit.PendingParkedWith(ctx, sess, hooksTokenOf(c))
	if err != nil {
		return err
	}
	out := toSessionJSON(sess)
	if pending == nil {
		pending = []map[string]any{}
	}
	out.PendingElicitations = &pending
	return c.JSON(http.StatusOK, out)
}

func (s *Server) getSessionAgent(c echo.Context) error {
	ctx := c.Request().Context()
	sess, err := s.sessions.Authorize(ctx, userOf(c), c.Param("sid"), auth.Read)
	if err != nil {
		return err
	}
	a, err := s.sessions.Agent(ctx, sess)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

func (s *Server) listSessions(c echo.Context) error {
	list, err := s.sessions.List(c.Request().Context(), userOf(c), c.QueryParam("parent_session_id"))
	if err != nil {
		return err
	}
	out := make([]sessionJSON, len(list))
	for i := range list {
		out[i] = toSessionJSON(&list[i].Session)
		n := list[i].PendingCount
		out[i].PendingCount = &n
	}
	return c.JSON(http.StatusOK, map[string]any{"sessions": out})
}

func (s *Server) listPermissions(c echo.Context) error {
	ctx := c.Request().Context()
	sess, err := s.sessions.Authorize(ctx, userOf(c), c.Param("sid"), auth.Read)
	if err != nil {
		return err
	}
	grants, err := s.sessions.Permissions(ctx, sess)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"permissions": grants})
}

func (s *Server) putPermission(c echo.Context) error {
	ctx := c.Request().Context()
	sess, err := s.sessions.Authorize(ctx, userOf(c), c.Param("sid"), auth.Manage)
	if err != nil {
		return err
	}
	var g sessions.Grant
	if err := bindJSON(c, &g); err != nil {
		return err
	}
	if err := s.sessions.PutPermission(ctx, sess, g); err != nil {
		return err
	}
	return s.listPermissions(c)
}

func (s *Server) deletePermission(c echo.Context) error {
	ctx := c.Request().Context()
	sess, err := s.sessions.Authorize(ctx, userOf(c), c.Param("sid"), auth.Manage)
	if err != nil {
		return err
	}
	user := c.QueryParam("user")
	if user == "" {
		var g sessions.Grant
		if err := bindJSON(c, &g); err != nil {
			return err
		}
		user = g.User
	}
	if err := s.sessions.DeletePermission(ctx, sess, user); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
