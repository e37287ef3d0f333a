package handlers

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/agents/codex"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
	"github.com/gatehouse-dev/gatehouse/internal/rules"
	"github.com/gatehouse-dev/gatehouse/models"
	"github.com/gatehouse-dev/gatehouse/views"
)

// showRulesPage renders /rules: the rules the person may see and the create form.
func (s *Server) showRulesPage(c echo.Context) error {
	d, err := s.rulesData(c)
	if err != nil {
		return err
	}
	d.Form = views.RuleForm{Effect: "allow", MatchKind: rules.MatchPrefix, ScopeKind: rules.ScopeCwd, Expires: "1h"}
	if d.CanGlobal {
		d.Form.ScopeKind = rules.ScopeGlobal
	}
	return s.render(c, http.StatusOK, views.Rules(d))
}

func (s *Server) rulesData(c echo.Context) (views.RulesPage, error) {
	svc, err := s.rulesService()
	if err != nil {
		return views.RulesPage{}, err
	}
	rows, err := svc.List(c.Request().Context(), userOf(c))
	if err != nil {
		return views.RulesPage{}, err
	}
	now := svc.Now()
	d := views.RulesPage{Chrome: s.chrome(c, "Rules", "rules"), CSRF: s.csrfToken(c), CanGlobal: svc.MayMakeGlobal(userOf(c)), Now: now}
	for i := range rows {
		v := rules.ViewOf(&rows[i], now)
		d.Rules = append(d.Rules, views.RuleRow{ID: v.ID, Effect: v.Effect, Tool: v.Tool, MatchKind: v.Match.Kind,
			Pattern: v.Match.Pattern, Scope: scopeText(v.Scope), Timeout: v.Timeout, OnTimeout: v.OnTimeout,
			State: v.State, CreatedBy: v.CreatedBy, Created: v.CreatedAt, Expires: v.ExpiresAt, FireCount: v.FireCount,
			LastFired: v.LastFiredAt, RevokeURL: "/rules/" + v.ID + "/revoke", CanRevoke: v.State == rules.StateActive,
			RevokedBy: v.RevokedBy, RevokedTime: v.RevokedAt})
	}
	return d, nil
}

// scopeText describes a rule's scope for people.
func scopeText(sc rules.Scope) string {
	switch sc.Kind {
	case rules.ScopeSession:
		return "session tree " + sc.Value
	case rules.ScopeAgent:
		return "agent " + sc.Value
	case rules.ScopeCwd:
		return "directory " + sc.Value
	}
	return "everywhere"
}

// postRulesPage takes the create form; a refused rule is the error page naming the
// field (400), a created one a redirect back to the list.
func (s *Server) postRulesPage(c echo.Context) error {
	if err := s.checkCSRF(c); err != nil {
		return err
	}
	svc, err := s.rulesService()
	if err != nil {
		return err
	}
	f := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	in := rules.Input{Effect: f("effect"), Tool: f("tool"), Match: &rules.Match{Kind: f("match_kind"), Pattern: c.FormValue("pattern"), Argument: f("argument")},
		Scope: &rules.Scope{Kind: f("scope_kind"), Value: f("scope_value")}, ExpiresIn: f("expires_in"),
		Timeout: f("timeout"), OnTimeout: f("on_timeout")}
	r, err := svc.Create(c.Request().Context(), userOf(c), in)
	if err != nil {
		return err
	}
	s.log.Info("rule created on page", "rule_id", r.ID, "effect", r.Effect, "tool", r.Tool, "created_by", r.CreatedBy)
	s.setFlash(c, "Rule "+r.ID+" created.")
	return s.redirect(c, "/rules")
}

// postRevokeRule revokes a rule from the list.
func (s *Server) postRevokeRule(c echo.Context) error {
	if err := s.checkCSRF(c); err != nil {
		return err
	}
	svc, err := s.rulesService()
	if err != nil {
		return err
	}
	if _, err := svc.Revoke(c.Request().Context(), userOf(c), c.Param("id")); err != nil {
		return err
	}
	s.log.Info("rule revoked on page", "rule_id", c.Param("id"), "revoked_by", userOf(c))
	s.setFlash(c, "Rule "+c.Param("id")+" revoked: it no longer applies.")
	return s.redirect(c, "/rules")
}

// postApproveWithRule is the approval page's "approve and make a rule…": it makes an
// allow rule for the prompt's tool and pattern in the chosen scope, then approves the
// prompt itself (as the person, via the page). A refused rule approves nothing.
func (s *Server) postApproveWithRule(c echo.Context) error {
	sess, err := s.decisionSession(c)
	if err != nil {
		return err
	}
	svc, err := s.rulesService()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	eid := c.Param("eid")
	row, err := s.ownedRow(c, sess.ID, eid)
	if err != nil {
		return err
	}
	if !row.IsPending() {
		s.setFlash(c, "This request was already decided; no rule was made.")
		return s.redirect(c, approvePath(sess.ID, eid))
	}
	if critical(row) {
		return bad("risk", "this request is of critical risk: approve it once; no rule answers such requests")
	}
	offer := ruleOfferFor(row)
	if offer == nil {
		return bad("tool", "this request names no tool a rule could match")
	}
	scope := rules.Scope{Kind: c.FormValue("scope_kind")}
	switch scope.Kind {
	case rules.ScopeSession:
		scope.Value = sess.ID
	case rules.ScopeAgent:
		scope.Value = sess.AgentID
	case rules.ScopeCwd:
		scope.Value = offer.Cwd
	}
	in := rules.Input{Effect: models.EffectAllow, Tool: offer.Tool,
		Match: &rules.Match{Kind: c.FormValue("match_kind"), Pattern: c.FormValue("pattern")},
		Scope: &scope, ExpiresIn: c.FormValue("expires_in")}
	r, err := svc.Create(ctx, userOf(c), in)
	if err != nil {
		return err
	}
	out, err := s.elicit.Resolve(ctx, sess.ID, eid, models.Verdict{Action: models.ActionAccept}, userOf(c), models.ViaPage)
	if err != nil {
		return err
	}
	s.log.Info("approved and made a rule", "session_id", sess.ID, "elicitation_id", eid, "rule_id", r.ID,
		"outcome", out.Outcome, "resolved_by", userOf(c))
	msg := "Approved. Rule " + r.ID + " will answer matching requests."
	if out.Outcome == elicit.OutcomeAlreadyResolved {
		msg = "Someone else decided first; your answer was not used. Rule " + r.ID + " was made."
	}
	s.setFlash(c, msg)
	return s.redirect(c, approvePath(sess.ID, eid))
}

// critical reports a request rated critical.
func critical(row *models.Elicitation) bool {
	a := risk.Of(row.DecodeParams().All)
	return a != nil && a.Level == risk.Critical
}

// ruleOfferFor pre-fills "approve and make a rule…" from a prompt: Claude's tool and
// input, a policy evaluation's tool, a Codex command (tool "shell"). nil for prompts
// that name no tool (questions, forms, plans).
func ruleOfferFor(row *models.Elicitation) *views.RuleOffer {
	var p struct {
		ToolName    string         `json:"tool_name"`
		ToolInput   map[string]any `json:"tool_input"`
		Command     string         `json:"command"`
		Cwd         string         `json:"cwd"`
		Phase       string         `json:"phase"`
		CodexMethod string         `json:"codex_method"`
	}
	_ = json.Unmarshal(row.Params, &p)
	switch {
	case critical(row):
		return nil // no allow rule answers a critical request (rules.Subject.Critical)
	case row.Origin == models.OriginCodex && p.Command != "":
		return &views.RuleOffer{Tool: codex.ShellTool, Pattern: p.Command, Cwd: p.Cwd}
	case p.ToolName == "" || row.Origin == models.OriginClaudeElicit:
		return nil
	}
	switch prompt.ToolKindOf(row.DecodeParams().All) {
	case models.KindQuestion, models.KindPlan:
		return nil // a question or a plan: allowing "it" always answers nothing
	}
	return &views.RuleOffer{Tool: p.ToolName, Pattern: rules.OfferPattern(p.ToolName, p.ToolInput), Cwd: p.Cwd}
}
