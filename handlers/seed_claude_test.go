package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestSeedChildAskUserQuestionBubblesToParentStream: an AskUserQuestion hook on a child
// is mirrored to the parent with the question and options and target = child; the
// answer given through the child reaches the hook as updatedInput.answers.
func TestSeedChildAskUserQuestionBubblesToParentStream(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		agent := c.CreateAgent(t)
		parent := c.CreateSession(t, agent, "", "")
		child := c.CreateSession(t, agent, parent, "worker:ask")
		pst := coreOpenStream(t, c, parent)
		cst := coreOpenStream(t, c, child)

		parked, ev := corePark(t, c, pst, child, coreAskUserQuestionBody())
		eid := ev["elicitation_id"].(string)
		p := coreParams(t, ev)
		if p["target_session_id"] != child || p["tool_name"] != "AskUserQuestion" {
			t.Fatalf("mirrored params = %v", p)
		}
		aq, _ := p["ask_user_question"].(map[string]any)
		qs, _ := aq["questions"].([]any)
		if len(qs) != 1 {
			t.Fatalf("ask_user_question = %v", p["ask_user_question"])
		}
		q := qs[0].(map[string]any)
		opts, _ := q["options"].([]any)
		if q["question"] != "Which database should the worker target?" || q["header"] != "Database" ||
			len(opts) != 2 || opts[0].(map[string]any)["label"] != "postgres" {
			t.Fatalf("question = %v", q)
		}
		// The child's own copy has no target (it is the owner).
		own := coreParams(t, cst.WaitFor(t, "response.elicitation_request", coreWait).Map(t))
		if _, ok := own["target_session_id"]; ok {
			t.Fatalf("owner copy carries target_session_id: %v", own)
		}

		coreMustResolve(t, c, child, eid, map[string]any{"action": "accept", "content": map[string]any{"Database": "postgres"}})
		coreWaitResolved(t, pst, eid)
		d := coreWantBehavior(t, parked, "allow")
		in, _ := d["updatedInput"].(map[string]any)
		if !jsonEqual(in["answers"], map[string]any{"Database": "postgres"}) {
			t.Fatalf("updatedInput.answers = %v", in["answers"])
		}
		// The rest of the tool input is kept.
		if qs, _ := in["questions"].([]any); len(qs) != 1 {
			t.Fatalf("updatedInput lost the questions: %v", in)
		}
	})
}

// TestSeedChildClaudePermissionBubblesToParentAndDeclines: a Bash hook on a child is
// mirrored to the parent with target and tool; a decline through the child denies.
func TestSeedChildClaudePermissionBubblesToParentAndDeclines(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		agent := c.CreateAgent(t)
		parent := c.CreateSession(t, agent, "", "")
		child := c.CreateSession(t, agent, parent, "worker:bash")
		pst := coreOpenStream(t, c, parent)

		parked, ev := corePark(t, c, pst, child, testserver.ClaudeBody("Bash", map[string]any{"command": "ls -la"}))
		eid := ev["elicitation_id"].(string)
		if p := coreParams(t, ev); p["target_session_id"] != child || p["tool_name"] != "Bash" {
			t.Fatalf("mirrored params = %v", p)
		}
		// The parent's id cannot decide the child's prompt (owner-scoped resolver).
		if out := coreResolve(t, c, parent, eid, map[string]any{"action": "accept"}); out["outcome"] != "not_found" {
			t.Fatalf("resolve via parent = %v", out)
		}
		coreMustResolve(t, c, child, eid, map[string]any{"action": "decline"})
		coreWaitResolved(t, pst, eid)
		coreWantBehavior(t, parked, "deny")
	})
}

// TestSeedTwoChildrenElicitationsIsolatedOnParentStream: two children park at once;
// each mirror carries its own target, the parent snapshot lists both keyed by target,
// and deciding one leaves the other parked.
func TestSeedTwoChildrenElicitationsIsolatedOnParentStream(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		agent := c.CreateAgent(t)
		parent := c.CreateSession(t, agent, "", "")
		childA := c.CreateSession(t, agent, parent, "worker-a:task")
		childB := c.CreateSession(t, agent, parent, "worker-b:task")
		pst := coreOpenStream(t, c, parent)

		hookA, evA := corePark(t, c, pst, childA, testserver.ClaudeBody("Bash", map[string]any{"command": "ls -la"}))
		hookB, evB := corePark(t, c, pst, childB, testserver.ClaudeBody("Edit", map[string]any{"command": "ls -la"}))
		eidA, eidB := evA["elicitation_id"].(string), evB["elicitation_id"].(string)
		if eidA == eidB {
			t.Fatalf("both children got id %s", eidA)
		}
		if coreParams(t, evA)["target_session_id"] != childA || coreParams(t, evB)["target_session_id"] != childB {
			t.Fatalf("targets: %v / %v", evA["params"], evB["params"])
		}

		byTarget := func() map[string]string {
			out := map[string]string{}
			for _, p := range coreSessionPending(t, c, parent) {
				ev := p.(map[string]any)
				out[coreParams(t, ev)["target_session_id"].(string)] = ev["elicitation_id"].(string)
			}
			return out
		}
		if got := byTarget(); len(got) != 2 || got[childA] != eidA || got[childB] != eidB {
			t.Fatalf("parent snapshot by target = %v", got)
		}

		coreMustResolve(t, c, childA, eidA, map[string]any{"action": "accept"})
		coreWantBehavior(t, hookA, "allow")
		if hookB.Done() {
			t.Fatal("resolving child A answered child B's hook")
		}
		coreWantPending(t, c, childB, eidB)
		if got := byTarget(); len(got) != 1 || got[childB] != eidB {
			t.Fatalf("parent snapshot after A = %v", got)
		}

		coreMustResolve(t, c, childB, eidB, map[string]any{"action": "decline"})
		coreWantBehavior(t, hookB, "deny")
		if got := byTarget(); len(got) != 0 {
			t.Fatalf("parent snapshot after B = %v", got)
		}
	})
}

// TestSeedChildMCPElicitationBubblesToParentStream: an mcp_elicitation control event on
// a child mints a prompt that the parent sees with target = child; an approval event on
// the child decides it, and the parent gets exactly the resolved event.
func TestSeedChildMCPElicitationBubblesToParentStream(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		agent := c.CreateAgent(t)
		parent := c.CreateSession(t, agent, "", "")
		child := c.CreateSession(t, agent, parent, "worker:mcp")
		pst := coreOpenStream(t, c, parent)

		schema := map[string]any{"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}}
		r := c.Do(t, http.MethodPost, "/v1/sessions/"+child+"/events", map[string]any{
			"type": "mcp_elicitation",
			"data": map[string]any{"message": "MCP server asks: proceed with deletion?", "requestedSchema": schema},
		})
		if r.Status != http.StatusAccepted {
			t.Fatalf("mcp_elicitation: %d %s", r.Status, r.Body)
		}
		eid, _ := r.JSON(t)["elicitation_id"].(string)
		if eid == "" {
			t.Fatalf("mcp_elicitation answer has no elicitation_id: %s", r.Body)
		}

		ev := pst.WaitFor(t, "response.elicitation_request", coreWait).Map(t)
		p := coreParams(t, ev)
		if ev["elicitation_id"] != eid || p["target_session_id"] != child ||
			p["message"] != "MCP server asks: proceed with deletion?" || p["mode"] != "form" ||
			!jsonEqual(p["requestedSchema"], schema) {
			t.Fatalf("parent event = %v", ev)
		}
		coreWantPending(t, c, child, eid)

		r = c.Do(t, http.MethodPost, "/v1/sessions/"+child+"/events", map[string]any{
			"type": "approval", "data": map[string]any{"elicitation_id": eid, "action": "accept", "content": map[string]any{"confirm": true}},
		})
		if r.Status != http.StatusAccepted || r.JSON(t)["outcome"] != "resolved" {
			t.Fatalf("approval: %d %s", r.Status, r.Body)
		}
		coreWaitResolved(t, pst, eid)
		got := coreGetElicitation(t, c, child, eid)
		if got["action"] != "accept" || got["resolved_via"] != "event" {
			t.Fatalf("stored verdict = %v", got)
		}
	})
}

// TestClaudePermissionRequestShapes drives the PermissionRequest hook with bodies as
// real Claude Code sends them (unknown fields included) and checks the published params
// and each kind of hook answer: remember, feedback, ExitPlanMode, long inputs.
func TestClaudePermissionRequestShapes(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		st := coreOpenStream(t, c, sid)

		t.Run("params and remember", func(t *testing.T) {
			body := testserver.ClaudeBody("Bash", map[string]any{"command": "npm test", "description": "Run tests"})
			body["prompt_id"] = "p_123"
			body["effort"] = map[string]any{"level": "high"}
			body["agent_id"] = "a_1"
			body["agent_type"] = "general-purpose"
			body["permission_suggestions"] = []any{map[string]any{"type": "addRules",
				"rules": []any{map[string]any{"toolName": "Bash", "ruleContent": "npm test"}}, "behavior": "allow", "destination": "localSettings"}}
			parked, ev := corePark(t, c, st, sid, body)
			eid := ev["elicitation_id"].(string)
			p := coreParams(t, ev)
			want := map[string]any{
				"mode": "form", "message": "Claude wants to call **Bash**", "phase": "pre_tool_use",
				"policy_name": "claude_native_permission", "tool_name": "Bash", "cwd": "/tmp/cwd",
				"permission_mode": "default", "approve_path": "/approve/" + sid + "/" + eid,
				"content_preview": `Bash({"command":"npm test","description":"Run tests"})`,
			}
			for k, v := range want {
				if p[k] != v {
					t.Errorf("params.%s = %v, want %v", k, p[k], v)
				}
			}
			coreMustResolve(t, c, sid, eid, map[string]any{"action": "accept", "content": map[string]any{"remember": true}})
			d := coreWantBehavior(t, parked, "allow")
			// remember:true keeps the first suggestion exactly as Claude Code sent it (SPEC
			// §6.1) — never a bare {"toolName":"Bash"}, which would allow every command.
			wantPerms := body["permission_suggestions"]
			if !jsonEqual(d["updatedPermissions"], wantPerms) || d["updatedInput"] != nil {
				t.Fatalf("remembered allow = %v", d)
			}
		})

		t.Run("deny with feedback", func(t *testing.T) {
			parked, ev := corePark(t, c, st, sid, testserver.ClaudeBody("Write", map[string]any{"file_path": "/etc/passwd", "content": "x"}))
			coreMustResolve(t, c, sid, ev["elicitation_id"].(string), map[string]any{"action": "decline", "content": map[string]any{"feedback": "  write to ./tmp instead "}})
			d := coreWantBehavior(t, parked, "deny")
			if d["message"] != "write to ./tmp instead" {
				t.Fatalf("deny = %v", d)
			}
			// Blank feedback: the message names who denied (SPEC §6.1).
			parked, ev = corePark(t, c, st, sid, testserver.ClaudeBody("Write", map[string]any{"file_path": "/x"}))
			coreMustResolve(t, c, sid, ev["elicitation_id"].(string), map[string]any{"action": "cancel", "content": map[string]any{"feedback": "   "}})
			if d := coreWantBehavior(t, parked, "deny"); len(d) != 2 || d["message"] != "Denied by local in Gatehouse." {
				t.Fatalf("deny with blank feedback = %v", d)
			}
		})

		t.Run("exit plan mode", func(t *testing.T) {
			plan := "# Plan\n\n1. Add the index\n2. Backfill"
			parked, ev := corePark(t, c, st, sid, testserver.ClaudeBody("ExitPlanMode", map[string]any{"plan": plan}))
			p := coreParams(t, ev)
			epm, _ := p["exit_plan_mode"].(map[string]any)
			if epm["plan"] != plan {
				t.Fatalf("exit_plan_mode = %v", p["exit_plan_mode"])
			}
			// remember is not offered for plans: a plain allow.
			coreMustResolve(t, c, sid, ev["elicitation_id"].(string), map[string]any{"action": "accept", "content": map[string]any{"remember": true}})
			if d := coreWantBehavior(t, parked, "allow"); len(d) != 1 {
				t.Fatalf("plan allow = %v", d)
			}
		})

		t.Run("long input preview", func(t *testing.T) {
			long := strings.Repeat("é", 5000)
			parked, ev := corePark(t, c, st, sid, testserver.ClaudeBody("Bash", map[string]any{"command": long}))
			p := coreParams(t, ev)
			preview, _ := p["content_preview"].(string)
			if n := utf8.RuneCountInString(preview); n > 1024 || n < 1000 || !strings.HasPrefix(preview, `Bash({"command":"éé`) {
				t.Fatalf("content_preview has %d characters: %.60q…", n, preview)
			}
			coreMustResolve(t, c, sid, ev["elicitation_id"].(string), map[string]any{"action": "accept"})
			coreWantBehavior(t, parked, "allow")
		})

		t.Run("ask without answers", func(t *testing.T) {
			parked, ev := corePark(t, c, st, sid, coreAskUserQuestionBody())
			coreMustResolve(t, c, sid, ev["elicitation_id"].(string), map[string]any{"action": "accept"})
			if d := coreWantBehavior(t, parked, "allow"); len(d) != 1 {
				t.Fatalf("allow without answers = %v", d)
			}
		})
	})
}
