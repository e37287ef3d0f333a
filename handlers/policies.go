package handlers

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Answers of POST /policies/evaluate.
const (
	policyResultAllow = "POLICY_ACTION_ALLOW"
	policyResultDeny  = "POLICY_ACTION_DENY"
	policyResultAsk   = "POLICY_ACTION_ASK"
)

// Reasons given when a parked policy ASK ends without an approval.
const (
	reasonDeclined   = "Approval was declined."
	reasonNotGranted = "Approval was not granted."
)

// evaluateBody is the body of POST /policies/evaluate.
type evaluateBody struct {
	Event *struct {
		Type    string          `json:"type"`
		Target  string          `json:"target"`
		Data    json.RawMessage `json:"data"`
		Context json.RawMessage `json:"context"`
	} `json:"event"`
}

// evaluatePolicies answers whether an agent may go on. An ASK on a phase a person can
// approve (tool call, LLM request, request), from a caller who may decide, parks a
// prompt and answers with the person's verdict; anyone else gets the ASK back.
//
// As for agent hooks, the work (decode, authorize, evaluate, attach the prompt) runs on
// a short-lived goroutine and the request's goroutine only waits, so a parked evaluate
// keeps a small stack (see elicit.Waiter).
func (s *Server) evaluatePolicies(c echo.Context) error {
	type ready struct {
		answer map[string]any
		w      *elicit.Waiter
		err    error
	}
	ch := make(chan ready, 1)
	go func() {
		answer, w, err := s.prepareEvaluate(c)
		ch <- ready{answer, w, err}
	}()
	r := <-ch
	if r.err != nil {
		return r.err
	}
	if r.w == nil {
		return c.JSON(http.StatusOK, r.answer)
	}
	v, err := r.w.Wait(c.Request().Context())
	if errors.Is(err, elicit.ErrClientGone) {
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case v.Decided() && v.Result.Action == elicit.ActionAccept:
		return c.JSON(http.StatusOK, policyAnswer(policyResultAllow, ""))
	case v.Decided() && v.Result.Action == elicit.ActionDecline:
		return c.JSON(http.StatusOK, policyAnswer(policyResultDeny, reasonDeclined))
	default:
		return c.JSON(http.StatusOK, policyAnswer(policyResultDeny, reasonNotGranted))
	}
}

// prepareEvaluate validates and evaluates; it returns either the answer to send now or
// the waiter of the prompt it parked.
func (s *Server) prepareEvaluate(c echo.Context) (map[string]any, *elicit.Waiter, error) {
	body, err := readBody(c)
	if err != nil {
		return nil, nil, err
	}
	var in evaluateBody
	if err := decodeJSON(body, &in); err != nil {
		return nil, nil, err
	}
	phase, data, evCtx, err := parseEvaluateEvent(in)
	if err != nil {
		return nil, nil, err
	}
	ctx := c.Request().Context()
	sess, level, err := s.sessions.AuthorizeLevel(ctx, userOf(c), c.Param("sid"), auth.Read)
	if err != nil {
		return nil, nil, err
	}
	ev := policyEvent(sess, userOf(c), phase, in.Event.Target, data, evCtx)
	res := s.policies.EvaluateContext(ctx, ev)
	switch res.Action {
	case policy.Deny:
		return policyAnswer(policyResultDeny, res.Reason), nil, nil
	case policy.Allow:
		return policyAnswer(policyResultAllow, ""), nil, nil
	}
	if level < auth.Edit || !parkablePhase(phase) {
		return policyAnswer(policyResultAsk, res.Reason), nil, nil
	}
	w, err := s.elicit.Attach(ctx, elicit.Prompt{Session: sess, Origin: models.OriginPolicy,
		Params: policy.PromptParams(ev, res, s.mode == mcp.ModeURL), URLMode: s.mode == mcp.ModeURL})
	if err != nil {
		return nil, nil, err
	}
	return nil, w, nil
}

func policyAnswer(result, reason string) map[string]any {
	out := map[string]any{"result": result}
	if reason != "" {
		out["reason"] = reason
	}
	return out
}

// parkablePhase: a person can approve what the agent is about to do, not what has
// already happened (tool results, LLM responses).
func parkablePhase(phase string) bool {
	return phase == policy.PhaseToolCall || phase == policy.PhaseLLMRequest || phase == policy.PhaseRequest
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

// objectField decodes an optional JSON object; required fields must be present.
func objectField(raw json.RawMessage, field string, required bool) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		if required {
			return nil, bad(field, "is required and must be an object")
		}
		return map[string]any{}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, bad(field, "must be an object")
	}
	return m, nil
}

// policyEvent builds the V0 event for a request in sess by user.
func policyEvent(sess *models.Session, user, phase, target string, data, evCtx map[string]any) policy.Event {
	return policy.NewEvent(policy.SessionInfo{ID: sess.ID, Depth: sess.Depth, RootID: sess.RootID}, user, phase, target, data, evCtx)
}
