package handlers

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"
)

// answeredAtOnce are the routes an agent waits on — hooks, policy checks, the MCP
// proxy — which read no prompt another request decided, and the ones that read
// nothing stored at all. Every other request first waits for the rule answers given
// before it to be stored (settled).
var answeredAtOnce = map[string]bool{
	"/healthz": true,
	"/v1/sessions/:sid/hooks/permission-request":        true,
	"/v1/sessions/:sid/hooks/pre-tool-use":              true,
	"/v1/sessions/:sid/hooks/elicitation":               true,
	"/v1/sessions/:sid/hooks/codex-elicitation-request": true,
	"/v1/hooks/claude":                                  true,
	"/v1/hooks/codex":                                   true,
	"/v1/hooks/:agent":                                  true,
	"/v1/hooks/:agent/:event":                           true,
	"/v1/sessions/:sid/policies/evaluate":               true,
	"/v1/sessions/:sid/mcp":                             true,
	"/static/*":                                         true,
}

// settleWait bounds how long a read waits for rule answers to be stored (the database
// being down, say): past it, the read goes ahead without them.
const settleWait = 5 * time.Second

// settled makes a read see every rule answer this server gave before it arrived: a
// rule's answer leaves once its decision is journaled, and its prompt row, audit link,
// fire count and events are stored a moment later (elicit.Service.Settle).
func (s *Server) settled(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.elicit != nil && !answeredAtOnce[c.Path()] && s.elicit.Behind() {
			ctx, cancel := context.WithTimeout(c.Request().Context(), settleWait)
			s.elicit.Settle(ctx)
			cancel()
		}
		return next(c)
	}
}
