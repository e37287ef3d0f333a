package clienttest

// Real Claude Code 2.1.332 in auto mode, with the hooks `gatehouse setup claude`
// installs (as http hooks), against a Gatehouse that escalates refusals: auto mode
// refuses a Bash call, its PermissionDenied hook parks a prompt, and the person's
// verdict decides whether the model's retry runs.
//
// Auto mode's check cannot be driven by the fake model API: Claude Code 2.1.332 asks
// Anthropic's API to classify each call server-side (a beta header and a safeguards
// field on the Messages request, the verdict carried back with the response), a
// private protocol a stand-in API does not speak. Claude Code then reports "its safety
// check does not run for this session" and refuses the call itself — a refusal of
// auto mode (decision reason: classifier auto-mode, reason "Classifier unavailable")
// that fires the same PermissionDenied hook and, on retry: true, tells the model it
// may make the call once more through the same permission check. So these tests run
// the real binary end to end on a real auto-mode refusal; only the classifier's
// verdict is not a real one.

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/agents/claude"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/fakemodel"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// escalation is one run: Gatehouse escalating refusals, the fake model asking for
// `echo ran >> marker` (and retrying with retry, when told it may), Claude Code in
// auto mode with the default Claude settings.
type escalation struct {
	srv    *testserver.Server
	c      *testserver.Client
	model  *fakemodel.Server
	run    *claudeRun
	marker string
}

func startEscalation(t *testing.T, db testserver.DB, retry func(marker string) string) *escalation {
	t.Helper()
	bin := claudeBinary(t, claudeVersions[0])
	e := &escalation{srv: testserver.Start(t, db.NewURL(t), "--escalate-denials")}
	e.c = e.srv.Client("")
	e.marker = filepath.Join(t.TempDir(), "ran")
	command := "echo ran >> " + e.marker
	e.model = fakemodel.Start(t, fakemodel.Script{Tool: "Bash", FinalText: "Done.",
		Input:      map[string]any{"command": command, "description": "Mark the run"},
		RetryInput: map[string]any{"command": retry(e.marker), "description": "Mark the run"}})
	s, err := claude.Agent{}.Settings(models.SettingsOptions{URL: e.srv.URL, Auth: "none", Wait: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(settings, []byte(s.Text), 0o600); err != nil {
		t.Fatal(err)
	}
	e.run = startClaudeWithSettings(t, bin, e.model.URL, settings, "mark the run", nil, claudeRunLimit, "--permission-mode", "auto")
	return e
}

// prompt waits for a pending prompt other than those in seen, failing at once if
// Claude Code exits first; it returns the session, the prompt and its params.
func (e *escalation) prompt(t *testing.T, seen ...string) (sid, eid string, params map[string]any) {
	t.Helper()
	deadline := time.Now().Add(claudeWait)
	for time.Now().Before(deadline) {
		select {
		case <-e.run.done:
			t.Fatalf("claude exited (%v) before Gatehouse asked a person\n%s", e.run.err, e.run.Output())
		default:
		}
		list, _ := e.c.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)["sessions"].([]any)
		for _, s := range list {
			sid, _ := s.(map[string]any)["id"].(string)
			pending, _ := e.c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil).JSON(t)["pending_elicitations"].([]any)
			for _, p := range pending {
				m, _ := p.(map[string]any)
				id, _ := m["elicitation_id"].(string)
				if !contains(seen, id) {
					params, _ := m["params"].(map[string]any)
					return sid, id, params
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no new prompt within %s", claudeWait)
	return "", "", nil
}

func (e *escalation) decide(t *testing.T, sid, eid, action string, content map[string]any) {
	t.Helper()
	body := map[string]any{"action": action}
	if content != nil {
		body["content"] = content
	}
	if r := e.c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", body); r.Status != http.StatusAccepted {
		t.Fatalf("resolve %s: %d %s", eid, r.Status, r.Body)
	}
}

// runs is how many times the command ran.
func (e *escalation) runs() int {
	b, _ := os.ReadFile(e.marker)
	return strings.Count(string(b), "ran\n")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestClaudeCodeApprovedRefusalRetriesOnce: auto mode refuses; the prompt names the
// command and the reason; a person approves; the model's retry passes PreToolUse on
// the grant and runs exactly once.
func TestClaudeCodeApprovedRefusalRetriesOnce(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		e := startEscalation(t, db, func(marker string) string { return "echo ran >> " + marker })
		sid, eid, params := e.prompt(t)
		if msg, _ := params["message"].(string); !strings.HasPrefix(msg, "Auto mode refused: `echo ran >> ") || !strings.Contains(msg, "reason: ") {
			t.Fatalf("prompt message %q", msg)
		}
		if e.runs() != 0 {
			t.Fatal("the command ran before anyone approved")
		}
		e.decide(t, sid, eid, "accept", nil)
		res := e.run.Wait(t, claudeWait)
		first := e.model.WaitToolResultFor(t, fakemodel.ToolUseID, time.Second)
		retried := e.model.WaitToolResultFor(t, fakemodel.RetryToolUseID, time.Second)
		if !first.IsError || retried.IsError {
			t.Fatalf("tool results: refused %+v, retry %+v; want the refusal then a run\n%s", first, retried, e.run.Output())
		}
		if n := e.runs(); n != 1 {
			t.Fatalf("the command ran %d times, want exactly once", n)
		}
		if res.Result != "Done." {
			t.Fatalf("claude result = %+v", res)
		}
		sess, err := e.srv.App.Store.GetSession(context.Background(), sid)
		if err != nil {
			t.Fatal(err)
		}
		if pending, _ := e.srv.App.Store.PendingInSubtree(context.Background(), sess.Path); len(pending) != 0 {
			t.Fatalf("prompts still pending after the run: %d", len(pending))
		}
	})
}

// TestClaudeCodeRejectedRefusalNeverRuns: a person rejects; the hook answers without
// retry, the model is not told it may retry, and the command never runs.
func TestClaudeCodeRejectedRefusalNeverRuns(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		e := startEscalation(t, db, func(marker string) string { return "echo ran >> " + marker })
		sid, eid, _ := e.prompt(t)
		e.decide(t, sid, eid, "decline", map[string]any{"feedback": "not now"})
		e.run.Wait(t, claudeWait)
		if n := e.runs(); n != 0 {
			t.Fatalf("a rejected refusal ran %d times", n)
		}
		for _, r := range e.model.Requests() {
			if r.Kind == "retry" {
				t.Fatalf("the model was told it may retry after a rejection:\n%s", e.model.Summary())
			}
		}
	})
}

// TestClaudeCodeChangedRetryGetsNoGrant: the person approves one command, and the
// model's retry is a different one: the grant does not fit it, so auto mode refuses
// it again and it is escalated as a refusal of its own; rejected, nothing ever ran.
func TestClaudeCodeChangedRetryGetsNoGrant(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		e := startEscalation(t, db, func(marker string) string { return "echo ran >> " + marker + " && echo sneaky" })
		sid, eid, _ := e.prompt(t)
		e.decide(t, sid, eid, "accept", nil)
		sid2, eid2, params := e.prompt(t, eid)
		input, _ := json.Marshal(params["tool_input"])
		if !strings.Contains(string(input), "sneaky") {
			t.Fatalf("the second refusal is not the changed call: %s", input)
		}
		if n := e.runs(); n != 0 {
			t.Fatalf("the changed retry ran %d times on another call's grant", n)
		}
		e.decide(t, sid2, eid2, "decline", nil)
		e.run.Wait(t, claudeWait)
		if n := e.runs(); n != 0 {
			t.Fatalf("the command ran %d times", n)
		}
	})
}
