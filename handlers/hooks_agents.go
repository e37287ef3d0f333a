package handlers

import (
	"context"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/agents"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/park"
	"github.com/gatehouse-dev/gatehouse/internal/rules"
	"github.com/gatehouse-dev/gatehouse/models"
)

// agentHook is POST /v1/hooks/:agent and /v1/hooks/:agent/:event: a hook of any agent
// in the registry (internal/agents), without a Gatehouse session in the path. The
// event is the URL's, or else the one the payload names. The agent's own session id
// maps to a top-level session owned by the caller (created on first sight); a payload
// from a sub-agent parks on a child session under it, titled "<type>:<id>", so the
// prompt also shows on the parent's stream.
//
// Events an agent does not park are a 400 naming the ones it does: the agents treat
// any non-2xx as "no decision" and carry on, and whoever wired the hook sees why in
// the agent's debug output or with curl.
func (s *Server) agentHook(c echo.Context) error {
	return s.agentHookNamed(c, c.Param("agent"), c.Param("event"))
}

// agentRoute is agentHook for one agent's own route (/v1/hooks/claude, …), which
// older clients post to: the same handling, the event from the payload.
func (s *Server) agentRoute(agent string) echo.HandlerFunc {
	return func(c echo.Context) error { return s.agentHookNamed(c, agent, "") }
}

func (s *Server) agentHookNamed(c echo.Context, agent, event string) error {
	a, ok := s.agents.Lookup(agent)
	if !ok {
		return errs.NotFound("no agent %q (agents: %s)", truncateRunes(agent, 64), strings.Join(s.agents.Names(), ", "))
	}
	if event != "" && !agents.Parks(a, event) {
		return bad("event", "%s hooks Gatehouse handles are %s, not %q", a.Vendor(), agents.JoinOr(agents.Handled(a)), truncateRunes(event, 64))
	}
	return s.parkHook(c, func(c echo.Context) (*park.Job, error) { return s.prepareZeroConfig(c, a, event) })
}

// sessionHook serves a hook of agent posted under /v1/sessions/:sid/hooks/…: the route
// names the event (for Claude Code the body's hook_event_name is then not consulted,
// so a command hook that forwards a trimmed payload works too).
func (s *Server) sessionHook(agent, event string) echo.HandlerFunc {
	a, ok := s.agents.Lookup(agent)
	if !ok {
		panic("handlers: no agent " + agent + " in the registry")
	}
	return func(c echo.Context) error {
		return s.parkHook(c, func(c echo.Context) (*park.Job, error) {
			sess, level, err := s.sessions.AuthorizeLevel(c.Request().Context(), userOf(c), c.Param("sid"), auth.Read)
			if err != nil {
				return nil, err
			}
			body, err := readBody(c)
			if err != nil {
				return nil, err
			}
			req, err := decodeHook(a, event, body)
			if err != nil {
				return nil, err
			}
			return s.parkJobOf(c, sess, level, req)
		})
	}
}

// prepareZeroConfig reads, decodes and places a zero-config hook on its session.
func (s *Server) prepareZeroConfig(c echo.Context, a agents.Agent, event string) (*park.Job, error) {
	body, err := readBody(c)
	if err != nil {
		return nil, err
	}
	req, err := decodeHook(a, event, body)
	if err != nil {
		return nil, err
	}
	if err := checkExternalID("session_id", req.ExternalSession); err != nil {
		return nil, err
	}
	if req.SubAgent != "" {
		if err := checkExternalID("agent_id", req.SubAgent); err != nil {
			return nil, err
		}
	}
	ctx := c.Request().Context()
	user := userOf(c)
	sess, err := s.externalSessionFor(ctx, user, req)
	if err != nil {
		return nil, err
	}
	level, err := s.sessions.LevelOn(ctx, sess, user)
	if err != nil {
		return nil, err
	}
	return s.parkJobOf(c, sess, level, req)
}

// decodeHook decodes a hook body for event; every problem is a 400.
func decodeHook(a agents.Agent, event string, body []byte) (*agents.Request, error) {
	req, err := a.Decode(event, body)
	if err != nil {
		return nil, bad("", "%s", err.Error())
	}
	if req.ReattachID != "" && !ids.ValidReattach(req.ReattachID) {
		return nil, bad("_gatehouse_elicitation_id", "must look like elicit_<origin>_<32 hex>")
	}
	return req, nil
}

// externalSessionFor finds or creates the session a zero-config request parks on:
// "<vendor> <first 8 of its session id> in <cwd>", and for a sub-agent a child
// session under it.
func (s *Server) externalSessionFor(ctx context.Context, user string, req *agents.Request) (*models.Session, error) {
	short := req.ExternalSession
	if len(short) > 8 {
		short = short[:8]
	}
	title := req.Vendor + " " + short
	if req.Cwd != "" {
		title += " in " + truncateRunes(req.Cwd, 200)
	}
	key := req.ExternalKey
	if key == "" {
		key = req.ExternalSession
	}
	root, err := s.sessions.FindOrCreateExternal(ctx, user, key, req.Vendor, title)
	if err != nil || req.SubAgent == "" {
		return root, err
	}
	kind := req.SubAgentType
	if kind == "" {
		kind = "subagent"
	}
	return s.sessions.FindOrCreateChild(ctx, user, root, truncateRunes(kind, 100)+":"+req.SubAgent)
}

// parkJobOf describes how to park a decoded hook on sess and answer it in the
// agent's format.
func (s *Server) parkJobOf(c echo.Context, sess *models.Session, level auth.Level, req *agents.Request) (*park.Job, error) {
	ctx := c.Request().Context()
	if req.Retire != nil {
		if level < auth.Edit {
			return nil, errs.Forbidden("retiring prompts needs edit access to the session")
		}
		retired, err := s.park.Retire(ctx, sess, req.Origin, req.Retire, req.RetiredBy, hooksTokenOf(c))
		if err != nil {
			return nil, err
		}
		return &park.Job{Immediate: map[string]any{"retired": retired}}, nil
	}
	if req.Notice != nil {
		// Not a request to decide: forwarded (or not: coalesced, or a Gatehouse prompt
		// of the session is already with the person) and answered at once.
		out, err := s.waiting.Forward(ctx, userOf(c), sess, *req.Notice, req.Vendor, req.Cwd)
		if err != nil {
			return nil, err
		}
		s.log.Debug("agent notice", "session_id", sess.ID, "outcome", string(out))
		return &park.Job{Immediate: req.Answer(models.Verdict{}, "")}, nil
	}
	grantsOnly, err := grantsOnlyOf(c)
	if err != nil {
		return nil, err
	}
	eid := req.ReattachID
	if req.IDPrefix != "" {
		eid = ids.Deterministic(req.IDPrefix, req.IDKey(sess.ID))
	}
	params := req.Params
	if req.Tool != nil && req.Tool.Kind != "" && params != nil {
		// The views show the call by its kind, whatever the agent names the tool.
		params[models.ParamToolKind] = string(req.Tool.Kind)
	}
	if len(req.RequestedSchema) > 0 {
		params = withPropertyOrder(params, req.RequestedSchema)
	}
	h := &park.Job{Level: level, Prompt: elicit.Prompt{Session: sess, ID: eid, Origin: req.Origin, Params: params},
		NoVerdict: req.NoVerdict, Fingerprint: req.Fingerprint,
		Refusal: req.Refusal, Retry: req.MayRetry, GrantsOnly: grantsOnly, Answer: s.answerOf(sess, req)}
	if req.Tool != nil {
		h.Subject = &rules.Subject{Tool: req.Tool.Name, Kind: req.Tool.Kind, Input: req.Tool.Input, Cwd: req.Cwd}
	}
	return h, nil
}

// answerOf is how a parked hook is answered. It keeps only what answering reads — the
// agent's answer and, for an agent whose turn a decline interrupts, the session — not
// the decoded request: a parked request keeps its answer for as long as it waits,
// thousands of them at once.
func (s *Server) answerOf(sess *models.Session, req *agents.Request) func(v models.Verdict, by string) any {
	answer := req.Answer
	if !req.InterruptOnDecline {
		return answer
	}
	return func(v models.Verdict, by string) any {
		if v.Action == models.ActionDecline {
			s.forwardToRunner(sess, map[string]any{"type": "interrupt"})
		}
		return answer(v, by)
	}
}

// checkExternalID insists on a usable external id (an agent's session_id, agent_id).
func checkExternalID(field, v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return bad(field, "is required")
	case len(v) > 200:
		return bad(field, "is longer than 200 characters")
	}
	return nil
}

// grantsOnlyOf reads a hook URL's ?only=grants: the hook is installed only to let the
// retry of an escalated refusal through (its grant spent and answered "allow"), and a
// call without a grant is answered "no decision" at once instead of parked — so a
// PreToolUse hook beside auto mode does not make every tool call wait for a person.
func grantsOnlyOf(c echo.Context) (bool, error) {
	switch v := c.QueryParam("only"); v {
	case "":
		return false, nil
	case "grants":
		return true, nil
	default:
		return false, bad("only", "want grants (answer only the retries a person approved), got %q", truncateRunes(v, 64))
	}
}
