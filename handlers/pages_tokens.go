package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/tokens"
	"github.com/gatehouse-dev/gatehouse/views"
)

// showTokensPage renders /settings/tokens: the person's tokens and the create form.
func (s *Server) showTokensPage(c echo.Context) error {
	d, err := s.tokensData(c)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, views.Tokens(d))
}

func (s *Server) tokensData(c echo.Context) (views.TokensPage, error) {
	svc, err := s.tokensService()
	if err != nil {
		return views.TokensPage{}, err
	}
	rows, err := svc.List(c.Request().Context(), userOf(c))
	if err != nil {
		return views.TokensPage{}, err
	}
	d := views.TokensPage{Chrome: s.chrome(c, "API tokens", "tokens"), CSRF: s.csrfToken(c)}
	for i := range rows {
		v := tokens.ViewOf(&rows[i])
		d.Tokens = append(d.Tokens, views.TokenRow{ID: v.ID, Name: v.Name, Prefix: v.Prefix, Scope: v.Scope,
			Created: v.CreatedAt, LastUsed: v.LastUsedAt, Expires: v.ExpiresAt,
			RevokeURL: "/settings/tokens/" + v.ID + "/revoke"})
	}
	return d, nil
}

// postTokensPage takes the create form. The answer is the page itself with the new
// secret on it — not a redirect, so the secret never travels in a cookie or a URL —
// and like every page it is marked no-store.
func (s *Server) postTokensPage(c echo.Context) error {
	if err := s.checkCSRF(c); err != nil {
		return err
	}
	svc, err := s.tokensService()
	if err != nil {
		return err
	}
	in := tokens.Input{Name: c.FormValue("name"), Scope: strings.TrimSpace(c.FormValue("scope")),
		ExpiresIn: strings.TrimSpace(c.FormValue("expires_in"))}
	t, err := svc.Create(c.Request().Context(), userOf(c), in)
	if err != nil {
		return err
	}
	s.log.Info("api token created on page", "token_id", t.ID, "scope", t.Scope, "owner", userOf(c))
	d, err := s.tokensData(c)
	if err != nil {
		return err
	}
	d.Created = &views.CreatedToken{Name: t.Name, Secret: t.Token}
	return s.render(c, http.StatusOK, views.Tokens(d))
}

// postRevokeToken revokes a token from the list.
func (s *Server) postRevokeToken(c echo.Context) error {
	if err := s.checkCSRF(c); err != nil {
		return err
	}
	svc, err := s.tokensService()
	if err != nil {
		return err
	}
	if err := svc.Revoke(c.Request().Context(), userOf(c), c.Param("id")); err != nil {
		return err
	}
	s.log.Info("api token revoked on page", "token_id", c.Param("id"), "owner", userOf(c))
	s.setFlash(c, "Token revoked: it no longer works anywhere.")
	return s.redirect(c, "/settings/tokens")
}
