package handlers

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/models"
	"github.com/gatehouse-dev/gatehouse/views"
)

// showApprovePage renders the approval page of one prompt: the form while it is
// pending, the outcome once decided, "nothing to approve here" for an id this session
// does not own. No access is the 404 page (existence does not leak).
func (s *Server) showApprovePage(c echo.Context) error {
	sess, err := s.sessions.Authorize(c.Request().Context(), userOf(c), c.Param("sid"), auth.Edit)
	if err != nil {
		return err
	}
	d, _, err := s.approveData(c, sess, c.Param("eid"))
	if err != nil {
		return err
	}
	d.Chrome = s.chrome(c, approveTitle(d), "")
	status := http.StatusOK
	if d.Missing {
		status = http.StatusNotFound
	}
	return s.render(c, status, views.Approve(d))
}

// postApprovePage takes the approval form. The CSRF token is checked first; an invalid
// submission re-renders the form with its errors and decides nothing; a valid one is
// resolved through the one resolver and redirected (303) back to the page, which then
// shows the outcome.
func (s *Server) postApprovePage(c echo.Context) error {
	sess, err := s.decisionSession(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	eid := c.Param("eid")
	d, _, err := s.approveData(c, sess, eid)
	if err != nil {
		return err
	}
	if d.Missing {
		d.Chrome = s.chrome(c, approveTitle(d), "")
		return s.render(c, http.StatusNotFound, views.Approve(d))
	}
	if d.Outcome != nil {
		s.setFlash(c, "This request was already decided; your answer was not used.")
		return s.redirect(c, approvePath(sess.ID, eid))
	}
	form, err := c.FormParams()
	if err != nil {
		return bad("", "the form could not be read")
	}
	dec, ok := d.Prompt.Submit(form)
	if !ok {
		d.Chrome = s.chrome(c, "Approve request", "")
		return s.render(c, http.StatusUnprocessableEntity, views.Approve(d))
	}
	out, err := s.elicit.Resolve(ctx, sess.ID, eid, dec, userOf(c), models.ViaPage)
	if err != nil {
		return err
	}
	s.log.Info("decided on approval page", "session_id", sess.ID, "elicitation_id", eid,
		"action", dec.Action, "outcome", out.Outcome, "resolved_by", userOf(c))
	if out.Outcome == elicit.OutcomeAlreadyResolved {
		s.setFlash(c, "Someone else decided first; your answer was not used.")
	}
	return s.redirect(c, approvePath(sess.ID, eid))
}

// approveEvents streams the approval page's decision panel: when the prompt leaves
// pending — decided anywhere, expired or abandoned — the outcome fragment is sent as
// a "resolved" event and the stream ends; it also ends when the viewer loses edit
// access. The subscription is registered before the
// row is re-read, so a decision that lands in between is never missed.
func (s *Server) approveEvents(c echo.Context) error {
	ctx := c.Request().Context()
	sess, err := s.sessions.Authorize(ctx, userOf(c), c.Param("sid"), auth.Edit)
	if err != nil {
		return err
	}
	eid := c.Param("eid")
	row, err := s.ownedRow(c, sess.ID, eid)
	if err != nil {
		return err
	}
	access, err := s.openStream(c, sess.RootID, func(ctx context.Context) error {
		_, err := s.sessions.Authorize(ctx, userOf(c), sess.ID, auth.Edit)
		return err
	})
	if err != nil {
		return err
	}
	defer access.Release()
	ctx = access.Context() // ends at shutdown too: the stream closes, its client reconnects
	sub := s.bus.Subscribe(row.SessionID, 64)
	defer sub.Cancel()
	sw := s.startSSE(c)
	if err := sw.send(0, "ready", []byte("{}")); err != nil {
		return nil
	}
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	check := true // re-read once right after subscribing
	for {
		if check {
			cur, err := s.elicit.Get(ctx, eid)
			if err != nil {
				return nil
			}
			if !cur.IsPending() {
				_ = sw.fragment(ctx, "resolved", views.OutcomePanel(outcomeOf(cur)))
				return nil
			}
			check = false
		}
		select {
		case <-ctx.Done():
			return nil
		case d, ok := <-sub.C:
			if !ok {
				return nil // dropped for falling behind; EventSource reconnects
			}
			check = d.Event.Type == elicit.EventResolved && d.Event.ElicitationID == eid
		case <-access.Changed():
			// Deciding needs edit access: a person who lost it, or whose credential
			// ended, loses the page's stream.
			if err := access.Recheck(ctx); err != nil {
				return nil
			}
		case <-tick.C:
			if err := access.Recheck(ctx); err != nil {
				return nil
			}
			if err := sw.comment("ping"); err != nil {
				return nil
			}
		}
	}
}

// showRawRequest serves everything the agent sent for one prompt — its stored params,
// whole — as plain text: the page shortens large or deep input and renders plans as
// markdown, and this is where a person reads the original. It is text/plain with
// nosniff (and the pages' CSP), so nothing in it can run; JSON nested shallowly
// enough is indented for reading, deeper JSON is sent as stored, because indenting
// deep nesting grows quadratically.
func (s *Server) showRawRequest(c echo.Context) error {
	sess, err := s.sessions.Authorize(c.Request().Context(), userOf(c), c.Param("sid"), auth.Edit)
	if err != nil {
		return err
	}
	row, err := s.ownedRow(c, sess.ID, c.Param("eid"))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Content-Disposition", "inline")
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", prompt.RawText(row.Params))
}

// ownedRow loads a prompt that session sid owns; anything else is not found.
func (s *Server) ownedRow(c echo.Context, sid, eid string) (*models.Elicitation, error) {
	row, err := s.elicit.GetInSession(c.Request().Context(), sid, eid)
	if errors.Is(err, errs.ErrNotFound) {
		return nil, errs.NotFound("nothing to approve here")
	}
	return row, err
}

// approveData builds the approval page for prompt eid under sess.
func (s *Server) approveData(c echo.Context, sess *models.Session, eid string) (views.ApprovePage, *models.Elicitation, error) {
	ctx := c.Request().Context()
	path, agent, err := s.inbox.Header(ctx, sess)
	if err != nil {
		return views.ApprovePage{}, nil, err
	}
	d := views.ApprovePage{
		CSRF: s.csrfToken(c), ID: eid, Agent: agent, Path: crumbs(path),
		Action: approvePath(sess.ID, eid), EventsURL: approvePath(sess.ID, eid) + "/events",
		RawURL: approvePath(sess.ID, eid) + "/raw",
	}
	row, err := s.ownedRow(c, sess.ID, eid)
	if errors.Is(err, errs.ErrNotFound) {
		d.Missing = true
		return d, nil, nil
	}
	if err != nil {
		return d, nil, err
	}
	params := row.DecodeParams()
	d.Prompt = prompt.Describe(row.Origin, params.All, s.md)
	d.Created, d.Expires, d.Now = row.CreatedAt, row.ExpiresAt, s.elicit.Now()
	if !row.IsPending() {
		o := outcomeOf(row)
		d.Outcome = &o
	} else if s.rules != nil {
		if d.RuleOffer = ruleOfferFor(row); d.RuleOffer != nil {
			d.RuleOffer.Action = approvePath(sess.ID, eid) + "/rule"
			d.RuleOffer.CanGlobal = s.rules.MayMakeGlobal(userOf(c))
		}
	}
	if d.Deliveries, err = s.deliveryRows(ctx, userOf(c), row.ID); err != nil {
		return d, nil, err
	}
	if onTimeout, ok := params.All["on_timeout"].(string); ok && row.IsPending() {
		// A wait of its own: an ask rule's or a policy's.
		d.OnTimeout = onTimeout
		if row.RuleID != nil {
			d.WaitSource = "rule " + *row.RuleID
		} else if params.PolicyName != "" {
			d.WaitSource = "policy " + params.PolicyName
		}
	}
	return d, row, nil
}

// approveTitle is the approval page's tab title.
func approveTitle(d views.ApprovePage) string {
	switch {
	case d.Missing:
		return "Nothing to approve here"
	case d.Outcome != nil:
		return d.Outcome.Headline()
	}
	return "Approve request"
}

// outcomeOf describes how a decided row ended.
func outcomeOf(row *models.Elicitation) views.Outcome {
	o := views.Outcome{Status: row.Status, At: row.ResolvedAt}
	if row.Action != nil {
		o.Action = *row.Action
	}
	if row.ResolvedBy != nil {
		o.By = *row.ResolvedBy
	}
	if row.ResolvedVia != nil {
		o.Via = *row.ResolvedVia
	}
	if row.RuleID != nil {
		o.RuleID = *row.RuleID
	}
	return o
}

func approvePath(sid, eid string) string { return "/approve/" + sid + "/" + eid }

func sessionPath(sid string) string { return "/sessions/" + sid }

// crumbs turns a session path into links.
func crumbs(path []models.Session) []views.Crumb {
	out := make([]views.Crumb, len(path))
	for i := range path {
		out[i] = crumb(&path[i])
	}
	return out
}

func crumb(s *models.Session) views.Crumb {
	return views.Crumb{ID: s.ID, Title: s.Title, URL: sessionPath(s.ID)}
}

// decisionSession guards every browser form that decides a prompt: a valid CSRF token
// first, then edit access to the session in the path.
func (s *Server) decisionSession(c echo.Context) (*models.Session, error) {
	if err := s.checkCSRF(c); err != nil {
		return nil, err
	}
	return s.sessions.Authorize(c.Request().Context(), userOf(c), c.Param("sid"), auth.Edit)
}
