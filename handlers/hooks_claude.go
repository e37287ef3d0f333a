package handlers

import (
	"context"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/agents/claude"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/rules"
	"github.com/gatehouse-dev/gatehouse/models"
)

// claudeEvent is how one Claude Code hook event is read, shown and answered. Every
// Claude route — per session or zero-config — goes through claudeEventFor and parkClaude,
// so the events differ only in these four functions.
type claudeEvent struct {
	origin string
	decode func(body []byte) (*claude.Payload, error)
	params func(p *claude.Payload) map[string]any
	answer func(p *claude.Payload, v claude.Verdict) map[string]any
}

// claudeEvents names the hook events Gatehouse parks, for error messages.
const claudeEvents = "PermissionRequest, PreToolUse or Elicitation"

// claudeEventFor returns the handling of a hook event; false for events Gatehouse does
// not park.
func claudeEventFor(name string) (claudeEvent, bool) {
	switch name {
	case claude.EventPermissionRequest:
		return claudeEvent{origin: models.OriginClaudePermission, decode: claude.Decode,
			params: (*claude.Payload).Params, answer: (*claude.Payload).PermissionDecision}, true
	case claude.EventPreToolUse:
		return claudeEvent{origin: models.OriginClaudePreToolUse, decode: claude.Decode,
			params: (*claude.Payload).Params, answer: (*claude.Payload).PreToolUseDecision}, true
	case claude.EventElicitation:
		return claudeEvent{origin: models.OriginClaudeElicit, decode: claude.DecodeElicitation,
			params: func(p *claude.Payload) map[string]any {
				return withPropertyOrder(p.ElicitationParams(), p.RequestedSchema)
			},
			answer: func(_ *claude.Payload, v claude.Verdict) map[string]any { return claude.ElicitationDecision(v) }}, true
	}
	return claudeEvent{}, false
}

// claudePermissionRequest parks Claude Code's PermissionRequest hook (§6.1).
func (s *Server) claudePermissionRequest(c echo.Context) error {
	return s.claudeSessionHook(c, claude.EventPermissionRequest)
}

// claudePreToolUse parks Claude Code's PreToolUse hook (§6.1b).
func (s *Server) claudePreToolUse(c echo.Context) error {
	return s.claudeSessionHook(c, claude.EventPreToolUse)
}

// claudeElicitation parks Claude Code's Elicitation hook: one of Claude's own MCP
// servers asks the user for input (§6.1b).
func (s *Server) claudeElicitation(c echo.Context) error {
	return s.claudeSessionHook(c, claude.EventElicitation)
}

// claudeSessionHook handles a hook posted under /v1/sessions/:sid/hooks/…: the route
// names the event, so the body's hook_event_name is not consulted (a command hook that
// forwards a trimmed payload works too).
func (s *Server) claudeSessionHook(c echo.Context, event string) error {
	return s.parkHook(c, func(c echo.Context) (*hookPark, error) {
		ev, _ := claudeEventFor(event)
		sess, level, err := s.sessions.AuthorizeLevel(c.Request().Context(), userOf(c), c.Param("sid"), auth.Read)
		if err != nil {
			return nil, err
		}
		body, err := readBody(c)
		if err != nil {
			return nil, err
		}
		p, err := decodeClaude(ev, body)
		if err != nil {
			return nil, err
		}
		return claudePark(ev, sess, level, p), nil
	})
}

// claudeZeroConfig is POST /v1/hooks/claude: any parked hook event, routed by
// hook_event_name, without a Gatehouse session in the path. Claude Code's session_id
// maps to a top-level session owned by the caller (created on first sight); a payload
// from a sub-agent (agent_id) parks on a child session under it, titled
// "<agent_type>:<agent_id>", so the prompt also shows on the parent's stream.
//
// Events Gatehouse does not park (Stop, PostToolUse, …) are a 400 naming the ones it
// does: Claude Code treats any non-2xx as "no decision" and carries on, and whoever
// wired the hook sees why in Claude Code's debug output or with curl.
func (s *Server) claudeZeroConfig(c echo.Context) error {
	return s.parkHook(c, func(c echo.Context) (*hookPark, error) { return s.prepareClaudeZeroConfig(c) })
}

func (s *Server) prepareClaudeZeroConfig(c echo.Context) (*hookPark, error) {
	body, err := readBody(c)
	if err != nil {
		return nil, err
	}
	probe, err := claude.DecodeAny(body)
	if err != nil {
		return nil, bad("", "%s", err.Error())
	}
	if probe.HookEventName == "" {
		return nil, bad("hook_event_name", "is required (%s)", claudeEvents)
	}
	ev, ok := claudeEventFor(probe.HookEventName)
	if !ok {
		return nil, bad("hook_event_name", "Gatehouse does not handle %q hooks; send only %s to this URL",
			truncateRunes(probe.HookEventName, 64), claudeEvents)
	}
	p, err := decodeClaude(ev, body)
	if err != nil {
		return nil, err
	}
	if err := checkExternalID("session_id", p.SessionID); err != nil {
		return nil, err
	}
	if p.AgentID != "" {
		if err := checkExternalID("agent_id", p.AgentID); err != nil {
			return nil, err
		}
	}
	ctx := c.Request().Context()
	user := userOf(c)
	sess, err := s.claudeSessionFor(ctx, user, p)
	if err != nil {
		return nil, err
	}
	level, err := s.sessions.LevelOn(ctx, sess, user)
	if err != nil {
		return nil, err
	}
	return claudePark(ev, sess, level, p), nil
}

// claudeSessionFor finds or creates the session a zero-config payload parks on.
func (s *Server) claudeSessionFor(ctx context.Context, user string, p *claude.Payload) (*models.Session, error) {
	short := p.SessionID
	if len(short) > 8 {
		short = short[:8]
	}
	title := "Claude Code " + short
	if p.Cwd != "" {
		title += " in " + truncateRunes(p.Cwd, 200)
	}
	root, err := s.sessions.FindOrCreateExternal(ctx, user, p.SessionID, "Claude Code", title)
	if err != nil || p.AgentID == "" {
		return root, err
	}
	kind := p.AgentType
	if kind == "" {
		kind = "subagent"
	}
	return s.sessions.FindOrCreateChild(ctx, user, root, truncateRunes(kind, 100)+":"+p.AgentID)
}

// decodeClaude reads a hook body for ev; every problem is a 400.
func decodeClaude(ev claudeEvent, body []byte) (*claude.Payload, error) {
	p, err := ev.decode(body)
	if err != nil {
		return nil, bad("", "%s", err.Error())
	}
	if p.ElicitationID != "" && !ids.ValidReattach(p.ElicitationID) {
		return nil, bad("_gatehouse_elicitation_id", "must look like elicit_<origin>_<32 hex>")
	}
	return p, nil
}

// claudePark describes how to park a decoded Claude hook and answer it in Claude
// Code's hook format.
func claudePark(ev claudeEvent, sess *models.Session, level auth.Level, p *claude.Payload) *hookPark {
	h := &hookPark{level: level, prompt: elicit.Prompt{Session: sess, ID: p.ElicitationID, Origin: ev.origin, Params: ev.params(p)},
		answer: func(r elicit.Result, by string) any {
			return ev.answer(p, claude.Verdict{Action: r.Action, Content: r.Content, By: by})
		}}
	if ev.origin != models.OriginClaudeElicit {
		h.subject = &rules.Subject{Tool: p.ToolName, Input: p.Input(), Cwd: p.Cwd}
	}
	return h
}

// checkExternalID insists on a usable external id (Claude's session_id, agent_id).
func checkExternalID(field, v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return bad(field, "is required")
	case len(v) > 200:
		return bad(field, "is longer than 200 characters")
	}
	return nil
}
