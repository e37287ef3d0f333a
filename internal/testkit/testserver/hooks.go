package testserver

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// ClaudeBody is a realistic Claude Code PermissionRequest hook body.
func ClaudeBody(tool string, input map[string]any) map[string]any {
	return map[string]any{
		"session_id":      "7d1f0a52-5b6e-4f8e-9a51-2f0f6c2b1c11",
		"transcript_path": "/home/dev/.claude/projects/demo/7d1f0a52.jsonl",
		"cwd":             "/tmp/cwd",
		"permission_mode": "default",
		"hook_event_name": "PermissionRequest",
		"tool_name":       tool,
		"tool_input":      input,
	}
}

// Parked is a request running in the background.
type Parked struct {
	done   chan struct{}
	resp   *Response
	err    error
	cancel context.CancelFunc
}

// ParkAsync posts body to path in the background.
func (c *Client) ParkAsync(path string, body any) *Parked {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Parked{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(p.done)
		p.resp, p.err = c.Send(ctx, http.MethodPost, path, body)
	}()
	return p
}

// Cancel hangs up the parked request's connection.
func (p *Parked) Cancel() { p.cancel() }

// Wait returns the answer, failing the test after the deadline.
func (p *Parked) Wait(t testing.TB, within time.Duration) *Response {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		t.Fatalf("parked request did not answer within %s", within)
	}
	if p.err != nil {
		t.Fatalf("parked request failed: %v", p.err)
	}
	return p.resp
}

// Done reports whether the request has answered.
func (p *Parked) Done() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// DoneChan is closed when the request has answered.
func (p *Parked) DoneChan() <-chan struct{} { return p.done }

// ParkClaude subscribes to watch's stream, parks a Claude PermissionRequest hook on
// session sid and returns the parked request with the elicitation id from the first
// request event on watch (with that event's frame).
func (c *Client) ParkClaude(t testing.TB, sid, watch, tool string, input map[string]any) (*Parked, string, map[string]any) {
	t.Helper()
	st := c.OpenStream(t, "/v1/sessions/"+watch+"/stream")
	defer st.Close()
	st.WaitHeartbeat(t)
	p := c.ParkAsync("/v1/sessions/"+sid+"/hooks/permission-request", ClaudeBody(tool, input))
	f := st.WaitFor(t, "response.elicitation_request", 10*time.Second)
	ev := f.Map(t)
	return p, ev["elicitation_id"].(string), ev
}
