package handlers_test

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestToolKindStoredWithPrompt: a parked tool call keeps the kind its agent gave it in
// the prompt's params, so the views show it by kind: Claude's Edit is an edit, a Codex
// command approval a shell command; a Codex file change, which rules leave alone,
// carries none.
func TestToolKindStoredWithPrompt(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "kinds")
		kindOf := func(eid string) any {
			params, _ := coreGetElicitation(t, c, sid, eid)["params"].(map[string]any)
			return params[models.ParamToolKind]
		}

		edit, ee, _ := c.ParkClaude(t, sid, sid, "Edit", map[string]any{"file_path": "/repo/a.go", "old_string": "a", "new_string": "b"})
		defer edit.Cancel()
		if k := kindOf(ee); k != string(models.KindEdit) {
			t.Errorf("Claude Edit: tool_kind %v, want edit", k)
		}

		reqs := codexRequests()
		cmd := reqs["command"]
		cmd["id"] = "req-kind-1"
		command, ec, _ := c.ParkAt(t, sid, codexPath(sid), cmd)
		defer command.Cancel()
		if k := kindOf(ec); k != string(models.KindShell) {
			t.Errorf("Codex command: tool_kind %v, want shell", k)
		}

		file := reqs["file"]
		file["id"] = "req-kind-2"
		change, ef, _ := c.ParkAt(t, sid, codexPath(sid), file)
		defer change.Cancel()
		if k := kindOf(ef); k != nil {
			t.Errorf("Codex file change: tool_kind %v, want none", k)
		}
	})
}
