package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/claude"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/models"
)

// claudePermissionRequest parks Claude Code's PermissionRequest hook until a person
// decides, then answers with the hook decision. No verdict (timeout, shutdown) is an
// empty 200: Claude Code then falls back to its own prompt.
func (s *Server) claudePermissionRequest(c echo.Context) error {
	ctx := c.Request().Context()
	sess, level, err := s.sessions.AuthorizeLevel(ctx, userOf(c), c.Param("sid"), auth.Read)
	if err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	p, err := claude.Decode(body)
	if err != nil {
		return bad("", "%s", err.Error())
	}
	if p.ElicitationID != "" && !ids.ValidReattach(p.ElicitationID) {
		return bad("_gatehouse_elicitation_id", "must look like elicit_<origin>_<32 hex>")
	}
	if level < auth.Edit {
		// A reader may not have a person decide on their behalf: no decision here.
		return c.NoContent(http.StatusOK)
	}
	v, err := s.elicit.Park(ctx, elicit.Prompt{Session: sess, ID: p.ElicitationID,
		Origin: models.OriginClaudePermission, Params: p.Params()})
	if errors.Is(err, elicit.ErrClientGone) {
		return nil
	}
	if err != nil {
		return err
	}
	if !v.Decided() {
		return c.NoContent(http.StatusOK)
	}
	return c.JSON(http.StatusOK, p.PermissionDecision(claude.Verdict{Action: v.Result.Action, Content: v.Result.Content}))
}
