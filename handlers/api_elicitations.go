package handlers

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/models"
)

// resolveElicitation is the URL-mode resolve endpoint. A body that is not an
// ElicitationResult is refused (422) before the session is even looked up.
func (s *Server) resolveElicitation(c echo.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	result, err := elicit.ParseVerdict(body)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	sess, err := s.sessions.Authorize(ctx, userOf(c), c.Param("sid"), auth.Edit)
	if err != nil {
		return err
	}
	if err := s.checkRemember(c, sess.ID, c.Param("eid"), result); err != nil {
		return err
	}
	out, err := s.elicit.Resolve(ctx, sess.ID, c.Param("eid"), result, userOf(c), models.ViaAPI)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, outcomeJSON(out))
}

// checkRemember refuses (400, naming the field) a verdict whose content.remember names
// a suggestion the prompt did not offer, or edits one wider than suggested — the check
// the approval page makes, for verdicts given through the API. Verdicts that remember
// nothing skip the read; an unknown or decided prompt is left to Resolve to report.
func (s *Server) checkRemember(c echo.Context, sid, eid string, r models.Verdict) error {
	if _, ok := r.Content[models.RememberKey]; !ok || r.Action != models.ActionAccept {
		return nil
	}
	row, err := s.elicit.GetInSession(c.Request().Context(), sid, eid)
	if errors.Is(err, errs.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !row.IsPending() {
		return nil
	}
	err = prompt.Describe(row.Origin, row.DecodeParams().All, s.md).CheckRemember(r.Content)
	var fe *models.FieldError
	if errors.As(err, &fe) {
		return bad(fe.Field, "%s", fe.Msg)
	}
	return err
}

func outcomeJSON(o elicit.Outcome) map[string]any {
	m := map[string]any{"queued": false, "outcome": o.Outcome}
	if o.Outcome == elicit.OutcomeAlreadyResolved {
		m["resolved_by"] = o.ResolvedBy
		m["resolved_at"] = o.ResolvedAt
	}
	return m
}

// getElicitation reports a prompt's state to the session's editors.
func (s *Server) getElicitation(c echo.Context) error {
	ctx := c.Request().Context()
	sess, err := s.sessions.Authorize(ctx, userOf(c), c.Param("sid"), auth.Edit)
	if err != nil {
		return err
	}
	row, err := s.elicit.GetParkedWith(ctx, sess.ID, c.Param("eid"), hooksTokenOf(c))
	if errors.Is(err, errs.ErrNotFound) {
		// Unknown, another session's, or — to a hooks-only token — not parked with
		// it: nothing to decide here.
		return c.JSON(http.StatusOK, map[string]any{"status": "resolved"})
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, elicitationState(row))
}

func elicitationState(row *models.Elicitation) map[string]any {
	switch row.Status {
	case models.StatusPending:
		p := row.DecodeParams()
		out := map[string]any{"status": "pending", "message": p.Message, "phase": p.Phase,
			"policy_name": p.PolicyName, "content_preview": p.ContentPreview, "params": p.All}
		if r, ok := p.All["risk"]; ok {
			out["risk"] = r
		}
		return out
	case models.StatusResolved:
		out := map[string]any{"status": "resolved", "resolved_at": row.ResolvedAt}
		if row.Action != nil {
			out["action"] = *row.Action
		}
		if row.ResolvedBy != nil {
			out["resolved_by"] = *row.ResolvedBy
		}
		if row.ResolvedVia != nil {
			out["resolved_via"] = *row.ResolvedVia
		}
		if row.RuleID != nil {
			out["rule_id"] = *row.RuleID
		}
		return out
	default:
		out := map[string]any{"status": "resolved", "outcome": row.Status, "resolved_at": row.ResolvedAt}
		if row.RuleID != nil {
			out["rule_id"] = *row.RuleID
		}
		return out
	}
}

// controlEvent is the envelope of POST /events.
type controlEvent struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// postEvent accepts control events: verdicts (approval), MCP elicitations and
// interrupts.
func (s *Server) postEvent(c echo.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	var ev controlEvent
	if err := decodeJSON(body, &ev); err != nil {
		return err
	}
	switch ev.Type {
	case "approval", "mcp_elicitation", "interrupt":
	case "":
		return bad("type", "is required")
	default:
		return bad("type", "unknown event type %q (want approval, mcp_elicitation or interrupt)", ev.Type)
	}
	var data map[string]json.RawMessage
	if ev.Type != "interrupt" {
		if len(ev.Data) == 0 || json.Unmarshal(ev.Data, &data) != nil || data == nil {
			if ev.Type == "approval" {
				return errs.Validation("data", "must be an object {\"elicitation_id\",\"action\",\"content\"?}")
			}
			return bad("data", "must be an object")
		}
	}
	var result models.Verdict
	var eid string
	if ev.Type == "approval" {
		// A malformed verdict is refused before anything else, as on the resolve URL.
		if err := json.Unmarshal(data["elicitation_id"], &eid); err != nil || eid == "" {
			return errs.Validation("data.elicitation_id", "is required")
		}
		if result, err = elicit.VerdictFromMap(data); err != nil {
			return err
		}
	}
	ctx := c.Request().Context()
	sess, err := s.sessions.Authorize(ctx, userOf(c), c.Param("sid"), auth.Edit)
	if err != nil {
		return err
	}
	switch ev.Type {
	case "approval":
		if err := s.checkRemember(c, sess.ID, eid, result); err != nil {
			return err
		}
		out, err := s.elicit.Resolve(ctx, sess.ID, eid, result, userOf(c), models.ViaEvent)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, outcomeJSON(out))
	case "mcp_elicitation":
		params, err := mcpElicitationParams(data)
		if err != nil {
			return err
		}
		row, err := s.elicit.Open(ctx, elicit.Prompt{Session: sess, Origin: models.OriginMCPEvent, Params: params})
		if err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, map[string]any{"queued": false, "elicitation_id": row.ID})
	default: // interrupt
		data, _ := json.Marshal(map[string]string{"type": elicit.EventInterrupted, "session_id": sess.ID})
		s.elicit.Publish(sess, elicit.EventInterrupted, data)
		s.forwardToRunner(sess, map[string]any{"type": "interrupt"})
		return c.JSON(http.StatusAccepted, map[string]any{"queued": false})
	}
}

// mcpElicitationParams validates an mcp_elicitation event's data into prompt params.
func mcpElicitationParams(data map[string]json.RawMessage) (map[string]any, error) {
	var msg string
	if err := json.Unmarshal(data["message"], &msg); err != nil || msg == "" {
		return nil, bad("data.message", "is required and must be a string")
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{}}
	if raw, ok := data["requestedSchema"]; ok && string(raw) != "null" {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			return nil, bad("data.requestedSchema", "must be an object")
		}
		schema = m
	}
	return withPropertyOrder(map[string]any{
		"mode": "form", "message": msg, "requestedSchema": schema, "phase": "mcp_elicitation",
		"policy_name": "mcp_elicitation", "content_preview": truncateRunes(msg, 1024), "vendor": "MCP server",
	}, data["requestedSchema"]), nil
}

// withPropertyOrder records the order of a raw requestedSchema's properties in the
// params, which lose it once decoded and stored, so the form shows the server's order.
func withPropertyOrder(params map[string]any, rawSchema []byte) map[string]any {
	if order := prompt.PropertyOrder(rawSchema); len(order) > 0 {
		params[prompt.ParamPropertyOrder] = order
	}
	return params
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
