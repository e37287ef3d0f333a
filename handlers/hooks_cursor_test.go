package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// cursorBody is a Cursor hook payload for event, asking to run command, in the shape
// of Cursor's published hook reference (no Cursor client runs here).
func cursorBody(event, command string) map[string]any {
	b := map[string]any{"hook_event_name": event, "conversation_id": "c0a1-77", "generation_id": "gen-" + command,
		"workspace_roots": []string{"/work/app"}, "model": "gpt-5", "cursor_version": "2.1.0"}
	switch event {
	case "beforeShellExecution":
		b["command"], b["cwd"] = command, "/work/app"
	case "beforeMCPExecution":
		b["tool_name"], b["tool_input"], b["command"] = "MCP:deploy:run", `{"target":"`+command+`"}`, "npx deploy-mcp"
	case "preToolUse":
		b["tool_name"], b["tool_input"] = "Shell", map[string]any{"command": command}
	}
	return b
}

// TestCursorHooks: a Cursor shell command parks in the session of its conversation,
// says who asks and carries its risk; Cursor's preToolUse and beforeShellExecution for
// the same command are one prompt, so the person answers once; the answer is Cursor's
// {"permission":…} shape; a malformed payload is a 400 naming the field.
func TestCursorHooks(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		c := srv.Client("alice@example.com")
		pre := c.ParkAsync("/v1/hooks/cursor", cursorBody("preToolUse", "git push --force origin main"))
		sid, eid := firstPending(t, c)
		st := elicitationStatus(t, c, sid, eid)
		params, _ := st["params"].(map[string]any)
		if params["message"] != "Cursor wants to run **git push --force origin main**" || params["vendor"] != "Cursor" {
			t.Fatalf("params %v", params)
		}
		if level, code := riskOf(t, st["risk"]); level != "high" || code != "force_push" {
			t.Fatalf("risk %v", st["risk"])
		}
		shell := c.ParkAsync("/v1/hooks/cursor", cursorBody("beforeShellExecution", "git push --force origin main"))
		resolveAs(t, c, sid, eid, "decline", map[string]any{"feedback": "not on main"})
		for name, p := range map[string]*testserver.Parked{"preToolUse": pre, "beforeShellExecution": shell} {
			r := p.Wait(t, 10*time.Second)
			if r.Status != http.StatusOK || canonJSON(t, r.Body) != `{"agent_message":"not on main","permission":"deny","user_message":"not on main"}` {
				t.Fatalf("%s: %d %s", name, r.Status, r.Body)
			}
		}
		if n := len(pendingOf(t, c, sid)); n != 0 {
			t.Fatalf("%d prompts still pending: the two events were not one prompt", n)
		}

		r := c.Do(t, http.MethodPost, "/v1/hooks/cursor", map[string]any{"hook_event_name": "beforeShellExecution", "conversation_id": "c", "command": ""})
		if env, _ := r.JSON(t)["error"].(map[string]any); r.Status != http.StatusBadRequest || !strings.Contains(env["message"].(string), "command must be a non-empty string") {
			t.Fatalf("empty command: %d %s", r.Status, r.Body)
		}
	})
}
