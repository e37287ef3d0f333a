package runner

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// forwardTimeout bounds how long forwarding one event to the runner may take.
const forwardTimeout = 5 * time.Second

// Events forwards control events (an interrupt, a verdict on a prompt the runner owns)
// to the runner in the background. Errors are logged, never surfaced: the verdict is
// already stored, and the runner can read it back.
type Events struct {
	client *Client
	log    *slog.Logger
}

// NewEvents returns a forwarder over client.
func NewEvents(client *Client, log *slog.Logger) *Events {
	if log == nil {
		log = slog.Default()
	}
	return &Events{client: client, log: log}
}

// Post sends event to {runner}/v1/sessions/{sid}/events without waiting for it.
func (e *Events) Post(sid string, event any) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), forwardTimeout)
		defer cancel()
		if err := e.client.PostEvent(ctx, sid, event); err != nil {
			e.log.Warn("forward event to runner", "session_id", sid, "err", err)
		}
	}()
}

// ForwardVerdict tells the runner how a prompt it owns (an mcp_elicitation control
// event) ended, as the approval event it would have received had the person posted it
// to the runner directly. Registered as an elicit.OnResolved callback, it covers every
// path a verdict takes (API, event, page, inbox); a prompt that expired or was
// abandoned is reported as declined, the MCP answer for "no verdict".
func (e *Events) ForwardVerdict(row *models.Elicitation) {
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
	e.Post(row.SessionID, map[string]any{"type": "approval", "data": data})
}
