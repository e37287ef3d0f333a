package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/tokens"
)

// tokenIdentity checks a bearer secret and returns the identity it acts as. A server
// without the tokens service refuses every token, as it would an unknown one.
func (s *Server) tokenIdentity(c echo.Context, secret string) (string, tokens.Principal, error) {
	if s.tokens == nil {
		return "", tokens.Principal{}, errs.Unauthorized(tokens.BadTokenMessage)
	}
	p, err := s.tokens.Authenticate(c.Request().Context(), secret)
	if err != nil {
		return "", tokens.Principal{}, err
	}
	user, err := s.ident.TokenUser(p.Owner, tokens.BadTokenMessage)
	if err != nil {
		return "", tokens.Principal{}, err
	}
	return user, p, nil
}

// tokenMayUse reports whether a hooks-only token may call the matched route: the hook
// routes (per session and zero-config, Claude's and Codex's), and reading the session
// and the prompt a hook parked on (what a forwarder needs to follow its prompt) — of
// which it sees only the prompts parked with it (hooksTokenOf). The owner's access on
// the session is checked by the route as usual.
func tokenMayUse(c echo.Context) bool {
	route := c.Path()
	switch {
	case strings.HasPrefix(route, "/v1/sessions/:sid/hooks/"), strings.HasPrefix(route, "/v1/hooks/"):
		return true
	case c.Request().Method == http.MethodGet:
		return route == "/v1/sessions/:sid" || route == "/v1/sessions/:sid/elicitations/:eid"
	}
	return false
}

// tokenIDOf is the id of the API token the request came with ("" : none).
func tokenIDOf(c echo.Context) string {
	p, _ := c.Get(ctxToken).(tokens.Principal)
	return p.TokenID
}

// hooksTokenOf is the id of the hooks-only token the request came with, which reads
// only the prompts parked with it; "" when the caller reads as their owner does.
func hooksTokenOf(c echo.Context) string {
	if p, _ := c.Get(ctxToken).(tokens.Principal); p.HooksOnly() {
		return p.TokenID
	}
	return ""
}

// tokensService is the tokens use case, or a 404 when the server runs without one.
func (s *Server) tokensService() (*tokens.Service, error) {
	if s.tokens == nil {
		return nil, errs.NotFound("API tokens are not enabled on this server")
	}
	return s.tokens, nil
}

// createToken is POST /v1/me/tokens {"name","scope"?,"expires_in"?}: 201 with the
// token and its secret ("token"), which is never shown again.
func (s *Server) createToken(c echo.Context) error {
	svc, err := s.tokensService()
	if err != nil {
		return err
	}
	var in tokens.Input
	if err := bindJSON(c, &in); err != nil {
		return err
	}
	t, err := svc.Create(c.Request().Context(), userOf(c), in)
	if err != nil {
		return err
	}
	s.log.Info("api token created", "token_id", t.ID, "scope", t.Scope, "owner", userOf(c))
	return c.JSON(http.StatusCreated, t)
}

// listTokens is GET /v1/me/tokens: {"tokens": [...]} — the caller's live tokens, newest
// first, without secrets.
func (s *Server) listTokens(c echo.Context) error {
	svc, err := s.tokensService()
	if err != nil {
		return err
	}
	rows, err := svc.List(c.Request().Context(), userOf(c))
	if err != nil {
		return err
	}
	out := make([]tokens.View, len(rows))
	for i := range rows {
		out[i] = tokens.ViewOf(&rows[i])
	}
	return c.JSON(http.StatusOK, map[string]any{"tokens": out})
}

// revokeToken is DELETE /v1/me/tokens/:id: 204; the token stops working at once on
// every replica. Someone else's token is not found.
func (s *Server) revokeToken(c echo.Context) error {
	svc, err := s.tokensService()
	if err != nil {
		return err
	}
	if err := svc.Revoke(c.Request().Context(), userOf(c), c.Param("id")); err != nil {
		return err
	}
	s.log.Info("api token revoked", "token_id", c.Param("id"), "owner", userOf(c))
	return c.NoContent(http.StatusNoContent)
}
