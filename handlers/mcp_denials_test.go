package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// wantDenial checks the structured authorization denial in meta (a result's _meta, or
// an error's data._meta): the envelope's fixed reason, its remediation posture, hints
// only when a remedy is available (and then exactly hintURL), and Gatehouse's account
// of who or what decided. It returns that account.
func wantDenial(t *testing.T, meta any, remediation, hintURL, kind string) map[string]any {
	t.Helper()
	m, ok := meta.(map[string]any)
	if !ok {
		t.Fatalf("no _meta on the denial: %v", meta)
	}
	env, ok := m["io.modelcontextprotocol/authorization"].(map[string]any)
	if !ok || env["reason"] != "insufficient_authorization" || env["remediation"] != remediation {
		t.Fatalf("authorization envelope = %v, want remediation %s", m["io.modelcontextprotocol/authorization"], remediation)
	}
	if id, _ := env["authorizationContextId"].(string); id == "" {
		t.Fatalf("no authorizationContextId: %v", env)
	}
	hints, _ := env["remediationHints"].([]any)
	switch {
	case hintURL == "" && len(hints) != 0:
		t.Fatalf("hints on a denial without a url remedy: %v", env)
	case hintURL != "" && (len(hints) != 1 || mustJSON(hints[0]) != `{"type":"url","url":"`+hintURL+`"}`):
		t.Fatalf("hints = %v, want one url hint %s", hints, hintURL)
	}
	d, ok := m["dev.gatehouse/decision"].(map[string]any)
	if !ok || d["kind"] != kind {
		t.Fatalf("decision = %v, want kind %s", m["dev.gatehouse/decision"], kind)
	}
	return d
}

// TestMCPDenialsSayHowToGetApproval: every "no" the MCP proxy gives carries the
// structured authorization denial — a policy DENY (in the JSON-RPC error's data), a
// Gatehouse rule's deny (its remedy: the rules page), a person's decline (who, why,
// and the approval page that records it) and an approval that expired (asking again
// is the remedy) — and none of them runs the tool.
func TestMCPDenialsSayHowToGetApproval(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		const base = "https://gatehouse.example"
		f := newMRTRFixture(t, db, "--public-url", base, "--mcp-approval-ttl", "1s")

		body := rpcPost(t, f.c, f.sid, rpcCall(1, "nuke", map[string]any{}, nil))
		if code, msg := rpcError(t, body); code != -32000 || msg != "Denied by policy: nobody nukes" {
			t.Fatalf("deny: %v", body)
		}
		d := wantDenial(t, dig(t, body, "error", "data", "_meta"), "unavailable", "", "policy")
		if d["decidedBy"] != "never_nuke" || d["reason"] != "nobody nukes" {
			t.Fatalf("policy decision = %v", d)
		}

		eid, _, state, _ := f.ask(t, 3, map[string]any{"env": "prod"}, nil)
		if r := f.c.Do(t, http.MethodPost, "/v1/sessions/"+f.sid+"/elicitations/"+eid+"/resolve",
			map[string]any{"action": "decline", "content": map[string]any{"feedback": "not on a Friday"}}); r.Status != 202 {
			t.Fatalf("decline: %d %s", r.Status, r.Body)
		}
		body = rpcPost(t, f.c, f.sid, rpcCall(4, "deploy", map[string]any{"env": "prod"}, map[string]any{"requestState": state}))
		wantToolError(t, body, "Declined by local in Gatehouse: not on a Friday")
		d = wantDenial(t, dig(t, body, "result", "_meta"), "unavailable", "", "person")
		if d["decidedBy"] != "local" || d["reason"] != "not on a Friday" || d["url"] != base+"/approve/"+f.sid+"/"+eid ||
			dig(t, body, "result", "_meta", "io.modelcontextprotocol/authorization", "authorizationContextId") != eid {
			t.Fatalf("decline decision = %v", body)
		}

		eid, _, state, _ = f.ask(t, 5, map[string]any{"env": "qa"}, nil)
		for {
			ev := f.stream.WaitFor(t, "response.elicitation_resolved", 15*time.Second).Map(t)
			if ev["elicitation_id"] == eid {
				break
			}
		}
		body = rpcPost(t, f.c, f.sid, rpcCall(6, "deploy", map[string]any{"env": "qa"}, map[string]any{"requestState": state}))
		wantToolError(t, body, "expired before anyone decided")
		d = wantDenial(t, dig(t, body, "result", "_meta"), "available", "", "timeout")
		if d["decidedBy"] != nil || !strings.HasSuffix(d["url"].(string), eid) {
			t.Fatalf("timeout decision = %v", d)
		}
		rule := createRule(t, f.c, map[string]any{"effect": "deny", "tool": "deploy",
			"match": map[string]any{"kind": "exact", "pattern": `{"env":"dev"}`}, "scope": map[string]any{"kind": "session", "value": f.sid}})
		body = rpcPost(t, f.c, f.sid, rpcCall(7, "deploy", map[string]any{"env": "dev"}, nil))
		wantToolError(t, body, "The tool did not run")
		d = wantDenial(t, dig(t, body, "result", "_meta"), "available", base+"/rules", "rule")
		if d["decidedBy"] != rule["id"] || d["url"] != base+"/rules" {
			t.Fatalf("rule decision = %v", d)
		}

		if n := f.runner.ToolRuns(); n != 0 {
			t.Fatalf("a denied call ran: %d runs", n)
		}
	})
}
