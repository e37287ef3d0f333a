package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// acpBody is a session/request_permission's params as claude-code-acp sends them, with
// what `gatehouse acp` adds (cwd, agent).
func acpBody(toolCallID, command string) map[string]any {
	return map[string]any{"sessionId": "acp-sess-1", "cwd": "/work/app", "agent": "Claude Code",
		"toolCall": map[string]any{"toolCallId": toolCallID, "title": "`" + command + "`",
			"rawInput": map[string]any{"command": command, "description": "Run it"}},
		"options": []any{
			map[string]any{"kind": "allow_always", "name": "Always Allow", "optionId": "allow_always"},
			map[string]any{"kind": "allow_once", "name": "Allow", "optionId": "allow"},
			map[string]any{"kind": "reject_once", "name": "Reject", "optionId": "reject"},
		}}
}

// TestACPRequests: an ACP permission request parks in the agent's session as "Claude
// Code wants to run …"; approve-and-remember answers the agent's own allow-always
// option, a plain approval its allow-once, a rejection its reject option; a request
// without a reject option is a 400 naming the options.
func TestACPRequests(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		c := srv.Client("alice@example.com")
		for _, tc := range []struct {
			verdict map[string]any
			want    string
		}{
			{map[string]any{"action": "accept", "content": map[string]any{"remember": map[string]any{"suggestion": 0}}}, `"allow_always"`},
			{map[string]any{"action": "accept"}, `"allow"`},
			{map[string]any{"action": "decline"}, `"reject"`},
		} {
			p := c.ParkAsync("/v1/hooks/acp", acpBody("toolu_"+tc.want, "make deploy"))
			sid, eid := firstPending(t, c)
			st := elicitationStatus(t, c, sid, eid)
			if params, _ := st["params"].(map[string]any); params["message"] != "Claude Code wants to run **make deploy**" {
				t.Fatalf("params %v", params)
			}
			if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", tc.verdict); r.Status >= 300 {
				t.Fatalf("resolve %v: %d %s", tc.verdict, r.Status, r.Body)
			}
			r := p.Wait(t, 10*time.Second)
			if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"optionId":`+tc.want) {
				t.Fatalf("%v answered %d %s, want option %s", tc.verdict, r.Status, r.Body, tc.want)
			}
		}
		bad := acpBody("toolu_bad", "ls")
		bad["options"] = []any{map[string]any{"kind": "allow_once", "name": "Allow", "optionId": "allow"}}
		r := c.Do(t, http.MethodPost, "/v1/hooks/acp", bad)
		if env, _ := r.JSON(t)["error"].(map[string]any); r.Status != http.StatusBadRequest || !strings.Contains(env["message"].(string), "options") {
			t.Fatalf("no reject option: %d %s", r.Status, r.Body)
		}
	})
}
