package testserver

import (
	"testing"
	"time"
)

// ParkAt subscribes to watch's stream, posts body to path in the background and
// returns the parked request with the first response.elicitation_request event seen on
// watch for a prompt that was not already pending (its elicitation_id and the whole
// event). It works for every hook route.
func (c *Client) ParkAt(t testing.TB, watch, path string, body any) (*Parked, string, map[string]any) {
	t.Helper()
	// The prompts already pending are replayed first, and the server does not send
	// their request events again: one whose event is logged only after this stream
	// opened (a park's event follows its row) is not taken for the new one.
	st := c.OpenStream(t, "/v1/sessions/"+watch+"/stream?replay=pending")
	defer st.Close()
	before := map[string]bool{}
	for {
		f := st.Next(t, 10*time.Second)
		if f.Event == "session.heartbeat" {
			break
		}
		if f.Event == "response.elicitation_request" {
			id, _ := f.Map(t)["elicitation_id"].(string)
			before[id] = true
		}
	}
	p := c.ParkAsync(path, body)
	for {
		f := st.WaitFor(t, "response.elicitation_request", 10*time.Second)
		ev := f.Map(t)
		eid, _ := ev["elicitation_id"].(string)
		if eid == "" {
			t.Fatalf("request event without elicitation_id: %s", f.Data)
		}
		if !before[eid] {
			return p, eid, ev
		}
	}
}

// CodexCommandBody is a realistic Codex app-server command approval request.
func CodexCommandBody(id any, command []string) map[string]any {
	return map[string]any{
		"id":     id,
		"method": "item/commandExecution/requestApproval",
		"params": map[string]any{
			"threadId": "thread_child", "turnId": "turn_1", "itemId": "item_cmd",
			"command": command, "cwd": "/tmp/workspace", "reason": "Verify the clock",
		},
	}
}
