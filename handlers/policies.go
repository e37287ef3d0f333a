package handlers

import (
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/evaluate"
	"github.com/gatehouse-dev/gatehouse/internal/park"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/rules"
	"github.com/gatehouse-dev/gatehouse/models"
)

// evaluateBody is the body of POST /policies/evaluate. Data and Context are decoded in
// the same pass as the rest (any, checked to be objects by objectField): decoding them
// again from raw JSON was a fifth of an ALLOW's CPU.
type evaluateBody struct {
	Event *struct {
		Type    string `json:"type"`
		Target  string `json:"target"`
		Data    any    `json:"data"`
		Context any    `json:"context"`
	} `json:"event"`
}

// evaluatePolicies answers whether an agent may go on (internal/evaluate): at once, or
// — for an ASK a person decides — after the verdict, through the one park path.
func (s *Server) evaluatePolicies(c echo.Context) error {
	return s.parkHook(c, func(c echo.Context) (*park.Job, error) {
		body, err := readBody(c)
		if err != nil {
			return nil, err
		}
		var in evaluateBody
		if err := decodeJSON(body, &in); err != nil {
			return nil, err
		}
		phase, data, evCtx, err := parseEvaluateEvent(in)
		if err != nil {
			return nil, err
		}
		ctx := c.Request().Context()
		sess, level, err := s.sessions.AuthorizeLevel(ctx, userOf(c), c.Param("sid"), auth.Read)
		if err != nil {
			return nil, err
		}
		answer, ask := s.evaluate.Evaluate(ctx, evaluate.Request{Session: sess, User: userOf(c), Level: level,
			Phase: phase, Target: in.Event.Target, Data: data, Context: evCtx})
		if ask == nil {
			return &park.Job{Immediate: answer}, nil
		}
		h := &park.Job{Level: level, Prompt: ask.Prompt, NoVerdict: evaluate.NoVerdict, TimedOut: evaluate.TimedOut,
			OwnWait: ask.OwnWait, OnTimeout: ask.OnTimeout,
			Answer: func(r models.Verdict, _ string) any { return evaluate.Decided(r) }}
		if phase == policy.PhaseToolCall {
			name, _ := data["name"].(string)
			args, _ := data["arguments"].(map[string]any)
			cwd, _ := evCtx["cwd"].(string)
			h.Subject = &rules.Subject{Tool: name, Input: args, Cwd: cwd}
		}
		return h, nil
	})
}

// parseEvaluateEvent validates the event: a PHASE_* type, an object data (for tool
// calls {name, arguments}) and an object context.
func parseEvaluateEvent(in evaluateBody) (string, map[string]any, map[string]any, error) {
	if in.Event == nil {
		return "", nil, nil, bad("event", "is required")
	}
	typ := in.Event.Type
	phase := strings.ToLower(strings.TrimPrefix(typ, "PHASE_"))
	if !strings.HasPrefix(typ, "PHASE_") || !policy.ValidPhase(phase) {
		return "", nil, nil, bad("event.type", "must be one of PHASE_TOOL_CALL, PHASE_TOOL_RESULT, PHASE_LLM_REQUEST, PHASE_LLM_RESPONSE, PHASE_REQUEST, not %q", typ)
	}
	data, err := objectField(in.Event.Data, "event.data", true)
	if err != nil {
		return "", nil, nil, err
	}
	evCtx, err := objectField(in.Event.Context, "event.context", false)
	if err != nil {
		return "", nil, nil, err
	}
	if phase == policy.PhaseToolCall {
		name, ok := data["name"].(string)
		if !ok || strings.TrimSpace(name) == "" {
			return "", nil, nil, bad("event.data.name", "is required for PHASE_TOOL_CALL (the tool's name)")
		}
		if args, present := data["arguments"]; !present {
			data["arguments"] = map[string]any{}
		} else if _, ok := args.(map[string]any); !ok {
			return "", nil, nil, bad("event.data.arguments", "must be an object")
		}
	}
	return phase, data, evCtx, nil
}

// objectField checks an optional JSON object (absent or null: empty, unless required).
func objectField(v any, field string, required bool) (map[string]any, error) {
	if v == nil {
		if required {
			return nil, bad(field, "is required and must be an object")
		}
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, bad(field, "must be an object")
	}
	return m, nil
}
