package handlers

import (
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/markdown"
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/models"
	"github.com/gatehouse-dev/gatehouse/views"
)

// showSessionPage renders a session: its sub-agent tree with pending counts, the
// pending prompts of its subtree and its recent decisions. Reading needs read access;
// the inline approve/reject buttons appear with edit access.
func (s *Server) showSessionPage(c echo.Context) error {
	d, err := s.sessionData(c)
	if err != nil {
		return err
	}
	d.Chrome = s.chrome(c, titleOf(d.Session), "")
	return s.render(c, http.StatusOK, views.Session(d))
}

// sessionEvents streams the session page's body, re-rendered whenever a prompt of the
// subtree is opened or decided (both are published on every ancestor). It ends as
// soon as the viewer may no longer read the session.
func (s *Server) sessionEvents(c echo.Context) error {
	_, access, sub, err := s.openSessionStream(c)
	if err != nil {
		return err
	}
	defer access.Release()
	ctx := access.Context() // ends at shutdown too: the stream closes, its client reconnects
	defer sub.Cancel()
	s.csrfToken(c)
	sw := s.startSSE(c)
	feed := liveFeed{events: sub.C, grants: access.Changed(), now: s.elicit.Now, regrant: access.Recheck, recheck: access.Recheck}
	return pushFragments(ctx, sw, feed, "session", func() (views.SessionPage, error) { return s.sessionData(c) },
		func(d views.SessionPage) templ.Component { return views.SessionBody(d) })
}

func (s *Server) sessionData(c echo.Context) (views.SessionPage, error) {
	ctx := c.Request().Context()
	sess, level, err := s.sessions.AuthorizeLevel(ctx, userOf(c), c.Param("sid"), auth.Read)
	if err != nil {
		return views.SessionPage{}, err
	}
	ov, err := s.inbox.Overview(ctx, sess)
	if err != nil {
		return views.SessionPage{}, err
	}
	d := views.SessionPage{
		CSRF: s.csrfToken(c), EventsURL: sessionPath(sess.ID) + "/events",
		Session: crumb(sess), Path: crumbs(ov.Path), Agent: ov.Agent, Kind: sess.Kind,
		CreatedBy: sess.CreatedBy, Created: sess.CreatedAt,
	}
	for _, n := range ov.Tree {
		d.Tree = append(d.Tree, views.TreeNode{Crumb: crumb(&n.Session), Depth: n.Depth, Pending: n.Pending,
			Current: n.Session.ID == sess.ID})
	}
	canDecide := level >= auth.Edit
	for _, it := range ov.Pending {
		// Cards show the path below this session (its own prompts show none).
		d.Pending = append(d.Pending, s.card(it, canDecide, sessionPath(sess.ID), sess.Depth+1))
	}
	for _, it := range ov.Recent {
		d.Recent = append(d.Recent, views.DecisionRow{
			ID: it.Row.ID, ApproveURL: approvePath(it.Row.SessionID, it.Row.ID),
			Message: messageOf(it.Row, it.Params, s.md), Session: crumb(&it.Session), Outcome: outcomeOf(&it.Row),
		})
	}
	eids := make([]string, 0, len(ov.Pending)+len(ov.Recent))
	for _, it := range ov.Pending {
		eids = append(eids, it.Row.ID)
	}
	for _, it := range ov.Recent {
		eids = append(eids, it.Row.ID)
	}
	if d.Deliveries, err = s.deliveryRows(ctx, userOf(c), eids...); err != nil {
		return views.SessionPage{}, err
	}
	return d, nil
}

func messageOf(row models.Elicitation, params map[string]any, md *markdown.Renderer) string {
	if m, _ := params["message"].(string); m != "" {
		m, _ = prompt.Cut(m, prompt.MaxMessage)
		return m
	}
	return prompt.Describe(row.Origin, params, md).Message
}

func titleOf(c views.Crumb) string {
	if c.Title != "" {
		return c.Title
	}
	return "Session"
}
