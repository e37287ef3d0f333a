package handlers

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Runner is the external process that executes MCP tools for a session (§6.5). It is
// optional: with no --runner-url, /mcp answers 503 and nothing is forwarded.
type Runner interface {
	// Execute posts {"method","params"} to {runner}/v1/sessions/{sid}/mcp/execute and
	// returns the raw JSON answer.
	Execute(ctx context.Context, sid, method string, params any) (json.RawMessage, error)
	// PostEvent posts a control event to {runner}/v1/sessions/{sid}/events.
	PostEvent(ctx context.Context, sid string, event any) error
}

// runnerForwardTimeout bounds how long forwarding an event to the runner may take.
const runnerForwardTimeout = 5 * time.Second

// forwardToRunner sends a control event (an interrupt, a verdict on a runner-owned
// prompt) to the runner in the background; errors are logged, never surfaced: the
// verdict is already stored, and the runner can read it back.
func (s *Server) forwardToRunner(sess *models.Session, event any) {
	if s.runner == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), runnerForwardTimeout)
		defer cancel()
		if err := s.runner.PostEvent(ctx, sess.ID, event); err != nil {
			s.log.Warn("forward event to runner", "session_id", sess.ID, "err", err)
		}
	}()
}
