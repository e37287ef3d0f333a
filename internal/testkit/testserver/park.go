package testserver

import (
	"testing"
	"time"
)

// ParkAt subscribes to watch's stream, posts body to path in the background and
// returns the parked request with the first response.elicitation_request event seen on
// watch (its elicitation_id and the whole event). It works for every hook route.
func (c *Client) ParkAt(t testing.TB, watch, path string, body any) (*Parked, string, map[string]any) {
	t.Helper()
	st := c.OpenStream(t, "/v1/sessions/"+watch+"/stream")
	defer st.Close()
	st.WaitHeartbeat(t)
	p := c.ParkAsync(path, body)
	f := st.WaitFor(t, "response.elicitation_request", 10*time.Second)
	ev := f.Map(t)
	eid, _ := ev["elicitation_id"].(string)
	if eid == "" {
		t.Fatalf("request event without elicitation_id: %s", f.Data)
	}
	return p, eid, ev
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
