package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/rules"
)

// rulesService is the rules use case, or a 404 when the server runs without one.
func (s *Server) rulesService() (*rules.Service, error) {
	if s.rules == nil {
		return nil, errs.NotFound("rules are not enabled on this server")
	}
	return s.rules, nil
}

// createRule is POST /v1/rules: 201 with the rule; a bad field is a 400 naming it.
func (s *Server) createRule(c echo.Context) error {
	svc, err := s.rulesService()
	if err != nil {
		return err
	}
	var in rules.Input
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	r, err := svc.Create(c.Request().Context(), userOf(c), in)
	if err != nil {
		return err
	}
	s.log.Info("rule created", "rule_id", r.ID, "effect", r.Effect, "tool", r.Tool, "scope", r.ScopeKind, "created_by", r.CreatedBy)
	return c.JSON(http.StatusCreated, rules.ViewOf(r, svc.Now()))
}

// listRules is GET /v1/rules: {"rules": [...]}, newest first, with each rule's state,
// creator, fire count and last firing.
func (s *Server) listRules(c echo.Context) error {
	svc, err := s.rulesService()
	if err != nil {
		return err
	}
	rows, err := svc.List(c.Request().Context(), userOf(c))
	if err != nil {
		return err
	}
	now := svc.Now()
	out := make([]rules.View, len(rows))
	for i := range rows {
		out[i] = rules.ViewOf(&rows[i], now)
	}
	return c.JSON(http.StatusOK, map[string]any{"rules": out})
}

// getRule is GET /v1/rules/:id.
func (s *Server) getRule(c echo.Context) error {
	svc, err := s.rulesService()
	if err != nil {
		return err
	}
	r, err := svc.Get(c.Request().Context(), userOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rules.ViewOf(r, svc.Now()))
}

// revokeRule is DELETE /v1/rules/:id: 204; the rule stops applying at once on every
// replica. The row stays (decisions name it), marked revoked.
func (s *Server) revokeRule(c echo.Context) error {
	svc, err := s.rulesService()
	if err != nil {
		return err
	}
	if _, err := svc.Revoke(c.Request().Context(), userOf(c), c.Param("id")); err != nil {
		return err
	}
	s.log.Info("rule revoked", "rule_id", c.Param("id"), "revoked_by", userOf(c))
	return c.NoContent(http.StatusNoContent)
}
