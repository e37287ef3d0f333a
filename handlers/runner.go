package handlers

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Runner is the external process that executes MCP tools for a session (§6.5); the
// MCP proxy (internal/mcpproxy) runs tools on it, the handlers forward it control
// events. It is optional: with no --runner-url nothing is forwarded.
type Runner interface {
	// PostEvent posts a control event to {runner}/v1/sessions/{sid}/events.
	PostEvent(ctx context.Context, sid string, event any) error
}

// runnerForwardTimeout bounds how long forwarding an event to the runner may take.
const runnerForwardTimeout = 5 * time.Second

// forwardToRunner sends a control event (an interrupt, a verdict on a runner-owned
// prompt) to the runner in the background; errors are logged, never surfaced: the
// verdict is already stored, and the runner can read it back.
func (s *Server) forwardToRunner(sess *models.Session, event any) {
	s.postToRunner(sess.ID, event)
}

// postToRunner is forwardToRunner by session id, bounded by runnerForwardTimeout.
func (s *Server) postToRunner(sid string, event any) {
	if s.runner == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), runnerForwardTimeout)
		defer cancel()
		if err := s.runner.PostEvent(ctx, sid, event); err != nil {
			s.log.Warn("forward event to runner", "session_id", sid, "err", err)
		}
	}()
}

// forwardVerdictToRunner tells the runner how a prompt it owns (an mcp_elicitation
// control event) ended, as the approval event it would have received had the person
// posted it to the runner directly. It runs as an elicit.OnResolved callback, so every
// path a verdict takes (API, event, page, inbox) is covered; a prompt that expired or
// was abandoned is reported as declined, the MCP answer for "no verdict".
func (s *Server) forwardVerdictToRunner(row *models.Elicitation) {
	if row.Origin != models.OriginMCPEvent {
		return
	}
	data := map[string]any{"elicitation_id": row.ID, "action": "decline"}
	if row.Status == models.StatusResolved && row.Action != nil {
		data["action"] = *row.Action
		if len(row.Content) > 0 && string(row.Content) != "null" {
			data["content"] = json.RawMessage(row.Content)
		}
	}
	s.postToRunner(row.SessionID, map[string]any{"type": "approval", "data": data})
}
