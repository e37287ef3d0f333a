package handlers

import "github.com/gatehouse-dev/gatehouse/models"

// Runner receives control events for the external runner that executes MCP tools for
// a session (§6.5): internal/runner.Events. It is optional: with no --runner-url
// nothing is forwarded.
type Runner interface {
	// Post sends an event to the runner in the background.
	Post(sid string, event any)
}

// forwardToRunner sends a control event (an interrupt) to the session's runner, if any.
func (s *Server) forwardToRunner(sess *models.Session, event any) {
	if s.runner != nil {
		s.runner.Post(sess.ID, event)
	}
}
