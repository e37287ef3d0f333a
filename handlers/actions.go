package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/models"
	"github.com/gatehouse-dev/gatehouse/views"
)

// Action links (/act/{token}) are how a notification answers a prompt. The token is
// the credential — signed, single-use, short-lived, bound to one prompt, one action and
// one person — so these routes need no sign-in: a phone far from the identity proxy can
// use them. A GET only shows what the link would do; the POST decides (no body needed:
// ntfy's HTTP action and the service worker post to it).

// showAction is GET /act/{token}: the confirmation page.
func (s *Server) showAction(c echo.Context) error {
	svc, err := s.notifyService()
	if err != nil {
		return err
	}
	v, err := svc.InspectAction(c.Request().Context(), c.Param("token"), s.presenter(c))
	if err != nil {
		return err
	}
	d := actionPage(s.chrome(c, actionTitle(v.Action), ""), v.Action, v.Prompt, v.ApproveURL)
	d.Person, d.Expires, d.Pending, d.ResolvedBy = v.Person, v.ExpiresAt, v.Pending, v.ResolvedBy
	return s.render(c, http.StatusOK, views.ActionConfirm(d))
}

// useAction is POST /act/{token}: decides, first verdict wins. A client that asks for
// JSON (the service worker) gets {"outcome","action","resolved_by","message"}.
func (s *Server) useAction(c echo.Context) error {
	svc, err := s.notifyService()
	if err != nil {
		return err
	}
	r, err := svc.UseAction(c.Request().Context(), c.Param("token"), s.presenter(c), "")
	if err != nil {
		return err
	}
	decided := r.Outcome == elicit.OutcomeResolved
	if wantsJSON(c) {
		msg := "Already decided by " + r.ResolvedBy
		if decided {
			msg = actionTitle(r.Action) + "d"
		}
		return c.JSON(http.StatusOK, map[string]string{"outcome": r.Outcome, "action": r.Action,
			"resolved_by": r.ResolvedBy, "message": msg})
	}
	d := actionPage(s.chrome(c, actionTitle(r.Action), ""), r.Action, r.Prompt, r.ApproveURL)
	d.Done, d.Decided, d.ResolvedBy = true, decided, r.ResolvedBy
	return s.render(c, http.StatusOK, views.ActionResult(d))
}

func actionTitle(action string) string {
	if action == models.ActionAccept {
		return "Approve"
	}
	return "Reject"
}

func actionPage(ch views.Chrome, action string, p notify.Summary, approveURL string) views.ActionPage {
	return views.ActionPage{Chrome: ch, Action: action, Title: p.Title, Detail: p.Detail, Agent: p.Agent,
		Session: p.SessionTitle + " (" + p.SessionID + ")", Cwd: p.Cwd, ApproveURL: approveURL}
}

// presenter is who presents an action link, when the request says: the person signed
// in (--auth oidc) or named by a trusted proxy (--auth header). A link used by
// someone else than the person it was sent to is refused.
func (s *Server) presenter(c echo.Context) string {
	switch s.ident.Mode {
	case auth.ModeOIDC:
		user, _ := s.signedIn(c) // a database failure: as if nobody were signed in
		return user
	case auth.ModeHeader:
		vals := c.Request().Header.Values(s.ident.Header)
		if len(vals) == 0 {
			return ""
		}
		user, err := s.ident.Identify(c.Request().RemoteAddr, vals)
		if err != nil {
			return ""
		}
		return user
	}
	return ""
}

// wantsJSON reports whether the client asked for JSON rather than a page.
func wantsJSON(c echo.Context) bool {
	return strings.Contains(c.Request().Header.Get(echo.HeaderAccept), "application/json")
}
