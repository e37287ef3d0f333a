package handlers

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/agents/codexcli"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/rules"
	"github.com/gatehouse-dev/gatehouse/models"
)

// codexCLIHook is POST /v1/hooks/codex: the Codex CLI's PermissionRequest and
// PreToolUse command hooks (forwarded as is by `gatehouse hook codex` or curl), routed
// by hook_event_name, without a Gatehouse session in the path. Codex's session_id maps
// to a top-level session owned by the caller under one "Codex" agent, created on first
// sight, as on Claude's zero-config route.
//
// The prompt id is deterministic (codexcli.Key): Codex's PreToolUse and its
// PermissionRequest for the same command in the same turn share one prompt, so a
// person answers once, and a retried hook re-attaches. The answer is Codex's hook
// output (codexcli.Answer); "no verdict" is an empty 200, after which Codex goes on as
// without the hook (an approved PreToolUse, which Codex cannot be told to allow, is
// "{}", which decides nothing either).
//
// Other events are a 400 naming the ones handled: Codex treats a failed hook as no
// decision, and whoever wired it sees why.
func (s *Server) codexCLIHook(c echo.Context) error {
	return s.parkHook(c, func(c echo.Context) (*hookPark, error) { return s.prepareCodexCLI(c) })
}

func (s *Server) prepareCodexCLI(c echo.Context) (*hookPark, error) {
	body, err := readBody(c)
	if err != nil {
		return nil, err
	}
	p, err := codexcli.Decode(body)
	if err != nil {
		return nil, bad("", "%s", err.Error())
	}
	if err := checkExternalID("session_id", p.SessionID); err != nil {
		return nil, err
	}
	ctx := c.Request().Context()
	user := userOf(c)
	sess, err := s.codexCLISessionFor(ctx, user, p)
	if err != nil {
		return nil, err
	}
	level, err := s.sessions.LevelOn(ctx, sess, user)
	if err != nil {
		return nil, err
	}
	prompt := elicit.Prompt{Session: sess, ID: ids.Deterministic(codexcli.IDPrefix, p.Key(sess.ID)),
		Origin: codexcli.Origin, Params: p.Params()}
	h := &hookPark{level: level, prompt: prompt,
		answer: func(r elicit.Result, by string) any {
			return p.Answer(codexcli.Verdict{Action: r.Action, Content: r.Content, By: by})
		},
		subject: &rules.Subject{Tool: p.ToolName, Input: p.Input(), Cwd: p.Cwd}}
	return h, nil
}

// codexCLISessionFor finds or creates the session a Codex hook parks on. The external
// id is namespaced ("codex:<session_id>") so a Codex and a Claude session never share
// a Gatehouse session.
func (s *Server) codexCLISessionFor(ctx context.Context, user string, p *codexcli.Payload) (*models.Session, error) {
	short := p.SessionID
	if len(short) > 8 {
		short = short[:8]
	}
	title := "Codex " + short
	if p.Cwd != "" {
		title += " in " + truncateRunes(p.Cwd, 200)
	}
	return s.sessions.FindOrCreateExternal(ctx, user, "codex:"+p.SessionID, codexcli.Vendor, title)
}
