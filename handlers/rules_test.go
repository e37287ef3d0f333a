package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// createRule posts a rule and returns it, failing unless it is created.
func createRule(t *testing.T, c *testserver.Client, body map[string]any) map[string]any {
	t.Helper()
	r := c.Do(t, http.MethodPost, "/v1/rules", body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create rule %s: %d %s", mustJSON(body), r.Status, r.Body)
	}
	return r.JSON(t)
}

// claudeRuleBody is a Claude PermissionRequest for tool with input in cwd.
func claudeRuleBody(tool string, input map[string]any, cwd string) map[string]any {
	b := testserver.ClaudeBody(tool, input)
	b["cwd"] = cwd
	return b
}

// answeredByRule posts a hook that a rule must answer without parking: it watches the
// session's stream, expects the answer within a few seconds and returns it with the
// id of the prompt the rule recorded.
func answeredByRule(t *testing.T, c *testserver.Client, sid string, body map[string]any) (*testserver.Response, string) {
	t.Helper()
	st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
	defer st.Close()
	st.WaitHeartbeat(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := c.Send(ctx, http.MethodPost, "/v1/sessions/"+sid+"/hooks/permission-request", body)
	if err != nil {
		t.Fatalf("hook was not answered at once (a rule should have answered): %v", err)
	}
	if r.Status != http.StatusOK {
		t.Fatalf("hook: %d %s", r.Status, r.Body)
	}
	eid, _ := st.WaitFor(t, "response.elicitation_request", 5*time.Second).Map(t)["elicitation_id"].(string)
	return r, eid
}

// parksForAPerson posts a hook no rule may answer: it must park (its prompt shows on
// the stream, the request stays open); the prompt is then declined to end it.
func parksForAPerson(t *testing.T, c *testserver.Client, sid string, body map[string]any) {
	t.Helper()
	p, eid, _ := c.ParkAt(t, sid, "/v1/sessions/"+sid+"/hooks/permission-request", body)
	if p.Done() {
		r := p.Wait(t, time.Second)
		t.Fatalf("near miss answered without a person: %d %s", r.Status, r.Body)
	}
	if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "decline"}); r.Status != http.StatusAccepted {
		t.Fatalf("resolve near miss: %d %s", r.Status, r.Body)
	}
	ans := p.Wait(t, 10*time.Second)
	if !strings.Contains(string(ans.Body), `"behavior":"deny"`) {
		t.Fatalf("near miss after a person declined: %s", ans.Body)
	}
}

func ruleByID(t *testing.T, c *testserver.Client, id string) map[string]any {
	t.Helper()
	r := c.Do(t, http.MethodGet, "/v1/rules", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("list rules: %d %s", r.Status, r.Body)
	}
	list, _ := r.JSON(t)["rules"].([]any)
	for _, x := range list {
		if m := x.(map[string]any); m["id"] == id {
			return m
		}
	}
	t.Fatalf("rule %s not listed: %s", id, r.Body)
	return nil
}

// TestRulesAnswerMatchingRequestsOnly: an allow rule answers the next matching request
// without parking, recorded as decided by the rule (resolved_via rule, rule id, on the
// session page too) and counted; near misses — another command, another directory,
// another agent, another session tree — park for a person. A deny rule denies naming
// itself.
func TestRulesAnswerMatchingRequestsOnly(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		agentA, agentB := c.CreateAgent(t), c.CreateAgent(t)
		sid := c.CreateSession(t, agentA, "", "")
		other := c.CreateSession(t, agentB, "", "")

		npm := createRule(t, c, map[string]any{"effect": "allow", "tool": "Bash",
			"match": map[string]any{"kind": "prefix", "pattern": "npm run "},
			"scope": map[string]any{"kind": "session", "value": sid}, "expires_in": "1h"})
		if npm["state"] != "active" || npm["fire_count"] != 0.0 || npm["created_by"] != "local" || npm["expires_at"] == nil {
			t.Fatalf("created rule: %s", mustJSON(npm))
		}
		ans, eid := answeredByRule(t, c, sid, claudeRuleBody("Bash", map[string]any{"command": "npm run build"}, "/repo"))
		if !strings.Contains(string(ans.Body), `"behavior":"allow"`) {
			t.Fatalf("rule answer: %s", ans.Body)
		}
		got := c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t)
		if got["status"] != "resolved" || got["action"] != "accept" || got["resolved_via"] != "rule" || got["rule_id"] != npm["id"] {
			t.Fatalf("recorded decision: %s", mustJSON(got))
		}
		// The fire is counted in the decision's own commit: at its time.
		if r := ruleByID(t, c, npm["id"].(string)); r["fire_count"] != 1.0 || r["last_fired_at"] == nil || !sameInstant(t, r["last_fired_at"], got["resolved_at"]) {
			t.Fatalf("fire count after one match: %s (decided %v)", mustJSON(r), got["resolved_at"])
		}
		// A retry of a request the rule answered gets that answer; it is not another fire.
		retry := claudeRuleBody("Bash", map[string]any{"command": "npm run build"}, "/repo")
		retry["_gatehouse_elicitation_id"] = "elicit_retry_" + strings.Repeat("ab", 16)
		for i := 0; i < 2; i++ {
			if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/hooks/permission-request", retry); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"behavior":"allow"`) {
				t.Fatalf("request %d with one id: %d %s", i+1, r.Status, r.Body)
			}
		}
		if r := ruleByID(t, c, npm["id"].(string)); r["fire_count"] != 2.0 {
			t.Fatalf("fire count after a request and its retry: %s", mustJSON(r))
		}
		b := newBrowser(t, srv, "")
		row := b.get(t, "/sessions/"+sid).Doc.Find(`[data-testid="audit-row"][data-eid="` + eid + `"]`)
		if v, _ := row.Attr("data-via"); v != "rule" {
			t.Fatalf("session page audit row via = %q", v)
		}
		if r, _ := row.Attr("data-rule"); r != npm["id"] {
			t.Fatalf("session page audit row rule = %q", r)
		}
		if !strings.Contains(row.Text(), npm["id"].(string)) {
			t.Fatalf("session page does not name the rule: %q", row.Text())
		}

		// Near misses park.
		parksForAPerson(t, c, sid, claudeRuleBody("Bash", map[string]any{"command": "npm test"}, "/repo"))
		parksForAPerson(t, c, sid, claudeRuleBody("Write", map[string]any{"file_path": "npm run build", "content": "x"}, "/repo"))
		parksForAPerson(t, c, other, claudeRuleBody("Bash", map[string]any{"command": "npm run build"}, "/repo"))

		// A directory rule: denies, naming itself; not in another directory.
		secrets := createRule(t, c, map[string]any{"effect": "deny", "tool": "Write",
			"match": map[string]any{"kind": "glob", "pattern": "/repo/secrets/**"},
			"scope": map[string]any{"kind": "cwd", "value": "/repo"}})
		ans, _ = answeredByRule(t, c, sid, claudeRuleBody("Write", map[string]any{"file_path": "/repo/secrets/k/a.pem", "content": "x"}, "/repo/sub"))
		if !strings.Contains(string(ans.Body), `"behavior":"deny"`) || !strings.Contains(string(ans.Body), secrets["id"].(string)) {
			t.Fatalf("deny rule answer: %s", ans.Body)
		}
		parksForAPerson(t, c, sid, claudeRuleBody("Write", map[string]any{"file_path": "/repo/secrets/a.pem", "content": "x"}, "/elsewhere"))
		parksForAPerson(t, c, sid, claudeRuleBody("Write", map[string]any{"file_path": "/repo/public/a.txt", "content": "x"}, "/repo"))

		// An agent rule: not for a session of another agent.
		createRule(t, c, map[string]any{"effect": "allow", "tool": "Bash",
			"match": map[string]any{"kind": "exact", "pattern": "date"}, "scope": map[string]any{"kind": "agent", "value": agentA}})
		answeredByRule(t, c, sid, claudeRuleBody("Bash", map[string]any{"command": "date"}, "/repo"))
		parksForAPerson(t, c, other, claudeRuleBody("Bash", map[string]any{"command": "date"}, "/repo"))
		parksForAPerson(t, c, sid, claudeRuleBody("Bash", map[string]any{"command": "date; rm -rf /"}, "/repo"))
	})
}

// TestRulesStopWhenRevokedOrExpired: a revoked rule and an expired one no longer answer
// (the request parks), and the list says which.
func TestRulesStopWhenRevokedOrExpired(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		body := claudeRuleBody("Bash", map[string]any{"command": "make test"}, "/repo")
		rule := func() string {
			return createRule(t, c, map[string]any{"effect": "allow", "tool": "Bash",
				"match": map[string]any{"kind": "exact", "pattern": "make test"}, "scope": map[string]any{"kind": "global"}})["id"].(string)
		}

		revoked := rule()
		answeredByRule(t, c, sid, body)
		if r := c.Do(t, http.MethodDelete, "/v1/rules/"+revoked, nil); r.Status != http.StatusNoContent {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		parksForAPerson(t, c, sid, body)
		if r := ruleByID(t, c, revoked); r["state"] != "revoked" || r["revoked_by"] != "local" || r["fire_count"] != 1.0 {
			t.Fatalf("revoked rule: %s", mustJSON(r))
		}

		expired := rule()
		answeredByRule(t, c, sid, body)
		sqlDB, err := srv.App.Store.SQL()
		if err != nil {
			t.Fatal(err)
		}
		// The clock moves past the expiry: set it a second into the past. The program
		// never changes an expiry, so the store's rule cache is told as it would be of
		// another replica's change (the store's own tests run the cache's clock past an
		// expiry).
		if _, err := sqlDB.Exec("UPDATE rules SET expires_at = $1 WHERE id = $2", time.Now().UTC().Add(-time.Second), expired); err != nil {
			t.Fatal(err)
		}
		srv.App.Store.DropRules()
		parksForAPerson(t, c, sid, body)
		if r := ruleByID(t, c, expired); r["state"] != "expired" {
			t.Fatalf("expired rule: %s", mustJSON(r))
		}
		if r := c.Do(t, http.MethodGet, "/v1/rules/rule_nope", nil); r.Status != http.StatusNotFound {
			t.Fatalf("unknown rule: %d %s", r.Status, r.Body)
		}
	})
}

// TestRulesBadInput: a rule whose pattern does not compile, whose scope names nothing
// the person may manage, or whose expiry is in the past is a 400 naming the field.
func TestRulesBadInput(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--trusted-proxies", "127.0.0.1/32")
		alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
		bobAgent := bob.CreateAgent(t)
		bobSession := bob.CreateSession(t, bobAgent, "", "")
		ok := func(m map[string]any) map[string]any {
			base := map[string]any{"effect": "allow", "tool": "Bash",
				"match": map[string]any{"kind": "prefix", "pattern": "npm "}, "scope": map[string]any{"kind": "cwd", "value": "/repo"}}
			for k, v := range m {
				base[k] = v
			}
			return base
		}
		cases := []struct {
			name, field string
			body        map[string]any
		}{
			{"regex does not compile", "match.pattern", ok(map[string]any{"match": map[string]any{"kind": "regex", "pattern": "npm (run"}})},
			{"glob does not compile", "match.pattern", ok(map[string]any{"match": map[string]any{"kind": "glob", "pattern": "/repo/[abc"}})},
			{"empty pattern", "match.pattern", ok(map[string]any{"match": map[string]any{"kind": "exact", "pattern": ""}})},
			{"unknown match kind", "match.kind", ok(map[string]any{"match": map[string]any{"kind": "fuzzy", "pattern": "x"}})},
			{"someone else's session", "scope.value", ok(map[string]any{"scope": map[string]any{"kind": "session", "value": bobSession}})},
			{"no such session", "scope.value", ok(map[string]any{"scope": map[string]any{"kind": "session", "value": "conv_00000000000000000000000000000000"}})},
			{"someone else's agent", "scope.value", ok(map[string]any{"scope": map[string]any{"kind": "agent", "value": bobAgent}})},
			{"relative directory", "scope.value", ok(map[string]any{"scope": map[string]any{"kind": "cwd", "value": "repo"}})},
			{"unknown scope", "scope.kind", ok(map[string]any{"scope": map[string]any{"kind": "planet"}})},
			{"expiry in the past", "expires_at", ok(map[string]any{"expires_at": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)})},
			{"negative expiry", "expires_in", ok(map[string]any{"expires_in": "-1h"})},
			{"unknown effect", "effect", ok(map[string]any{"effect": "maybe"})},
			{"timeout on an allow rule", "timeout", ok(map[string]any{"timeout": "5m"})},
			{"bad timeout answer", "on_timeout", ok(map[string]any{"effect": "ask", "on_timeout": "shrug"})},
			{"no tool", "tool", ok(map[string]any{"tool": " "})},
		}
		for _, tc := range cases {
			r := alice.Do(t, http.MethodPost, "/v1/rules", tc.body)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("%s: %d %s", tc.name, r.Status, r.Body)
			}
			e, _ := r.JSON(t)["error"].(map[string]any)
			if msg, _ := e["message"].(string); e["code"] != "invalid_input" || !strings.HasPrefix(msg, tc.field+":") {
				t.Fatalf("%s: error %s does not name %s", tc.name, r.Body, tc.field)
			}
		}
		// Bob's rule is not Alice's to see or revoke.
		bobs := createRule(t, bob, map[string]any{"effect": "allow", "tool": "Bash",
			"match": map[string]any{"kind": "prefix", "pattern": "npm "}, "scope": map[string]any{"kind": "session", "value": bobSession}})
		if r := alice.Do(t, http.MethodDelete, "/v1/rules/"+bobs["id"].(string), nil); r.Status != http.StatusNotFound {
			t.Fatalf("alice revoking bob's rule: %d %s", r.Status, r.Body)
		}
	})
}

// TestAskRuleTimeoutIsNamed: an ask rule with its own wait and "deny" on timeout
// parks; the approval page shows the remaining time and what happens then; when the
// wait runs out the agent is denied with a message naming the timeout — not a
// person's refusal — and the row names the rule.
func TestAskRuleTimeoutIsNamed(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		rule := createRule(t, c, map[string]any{"effect": "ask", "tool": "Bash",
			"match": map[string]any{"kind": "prefix", "pattern": "deploy "}, "scope": map[string]any{"kind": "global"},
			"timeout": "2s", "on_timeout": "deny"})
		if rule["timeout"] != "2s" || rule["on_timeout"] != "deny" {
			t.Fatalf("ask rule: %s", mustJSON(rule))
		}
		p, eid, _ := c.ParkAt(t, sid, "/v1/sessions/"+sid+"/hooks/permission-request",
			claudeRuleBody("Bash", map[string]any{"command": "deploy prod"}, "/repo"))
		pg := newBrowser(t, srv, "").get(t, "/approve/"+sid+"/"+eid)
		if pg.testid("remaining").Length() != 1 || !strings.Contains(pg.testid("on-timeout").Text(), "denied, as a timeout") ||
			!strings.Contains(pg.testid("on-timeout").Text(), rule["id"].(string)) {
			t.Fatalf("approve page does not show the wait: remaining=%q on-timeout=%q",
				pg.testid("remaining").Text(), pg.testid("on-timeout").Text())
		}
		ans := p.Wait(t, 15*time.Second)
		body := string(ans.Body)
		if !strings.Contains(body, `"behavior":"deny"`) || !strings.Contains(body, "Timed out") ||
			!strings.Contains(body, "No person declined") || strings.Contains(body, "Rejected") {
			t.Fatalf("timeout answer: %s", body)
		}
		got := c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t)
		if got["outcome"] != "expired" || got["rule_id"] != rule["id"] {
			t.Fatalf("timed-out prompt: %s", mustJSON(got))
		}
	})
}

// TestApproveAndMakeARule: the approval page offers "approve and make a rule…"
// pre-filled with the tool and the exact command; submitting it approves the prompt
// and the next identical request is answered by the rule.
func TestApproveAndMakeARule(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		body := claudeRuleBody("Bash", map[string]any{"command": "npm run deploy"}, "/repo")
		p, eid, _ := c.ParkAt(t, sid, "/v1/sessions/"+sid+"/hooks/permission-request", body)
		b := newBrowser(t, srv, "")
		pg := b.get(t, "/approve/"+sid+"/"+eid)
		form := pg.testid("rule-offer-form")
		if v, _ := form.Find(`input[name="pattern"]`).Attr("value"); v != "npm run deploy" {
			t.Fatalf("offer pattern = %q", v)
		}
		if v, _ := form.Find(`input[name="tool"]`).Attr("value"); v != "Bash" {
			t.Fatalf("offer tool = %q", v)
		}
		csrf, _ := form.Find(`input[name="csrf"]`).Attr("value")
		action, _ := form.Attr("action")
		res := b.post(t, action, url.Values{"csrf": {csrf}, "match_kind": {"exact"}, "pattern": {"npm run deploy"},
			"scope_kind": {"session"}, "expires_in": {"24h"}}, false)
		if res.Status != http.StatusSeeOther {
			t.Fatalf("approve and make a rule: %d %s", res.Status, res.Body)
		}
		if ans := p.Wait(t, 10*time.Second); !strings.Contains(string(ans.Body), `"behavior":"allow"`) {
			t.Fatalf("parked hook: %s", ans.Body)
		}
		got := c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t)
		if got["resolved_via"] != "page" {
			t.Fatalf("the person's own approval: %s", mustJSON(got))
		}
		ans, next := answeredByRule(t, c, sid, body)
		if !strings.Contains(string(ans.Body), `"behavior":"allow"`) {
			t.Fatalf("next request: %s", ans.Body)
		}
		if got := c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+next, nil).JSON(t); got["resolved_via"] != "rule" {
			t.Fatalf("next request recorded: %s", mustJSON(got))
		}
		parksForAPerson(t, c, sid, claudeRuleBody("Bash", map[string]any{"command": "npm run deploy --force"}, "/repo"))
		rulesPage := b.get(t, "/rules")
		if rulesPage.testid("rule-row").Length() != 1 || strings.TrimSpace(rulesPage.testid("rule-pattern").Text()) != "npm run deploy" {
			t.Fatalf("rules page: %s", rulesPage.testid("rules").Text())
		}
		// A date says how far off it is: the 24 h rule lapses "in 23 h, <day> <time>".
		expires := strings.Join(strings.Fields(rulesPage.Doc.Find(`td[data-label="Expires"]`).Text()), " ")
		if !strings.HasPrefix(expires, "in 23 h, ") || !strings.HasSuffix(expires, " UTC") {
			t.Fatalf("expires cell %q, want \"in 23 h, <day> <time> UTC\"", expires)
		}
	})
}

// TestRuleChangesReachTheOtherReplica: two replicas on one Postgres, each keeping the
// live rules in memory. B, which has read the rules (and found none), answers with a
// rule made on A once it hears A's note; revoked on A, the rule no longer applies on B
// once B hears of that, while the count B shows is the table's.
func TestRuleChangesReachTheOtherReplica(t *testing.T) {
	db := testserver.PostgresDB(t)
	url := db.NewURL(t)
	a, b := testserver.Start(t, url), testserver.Start(t, url)
	ca, cb := a.Client(""), b.Client("")
	sid := ca.CreateSession(t, ca.CreateAgent(t), "", "")
	body := claudeRuleBody("Bash", map[string]any{"command": "go test ./..."}, "/repo")
	parksForAPerson(t, cb, sid, body) // B reads the rules: none yet

	heard := heardRuleChange(t, b)
	rule := createRule(t, ca, map[string]any{"effect": "allow", "tool": "Bash",
		"match": map[string]any{"kind": "prefix", "pattern": "go test"}, "scope": map[string]any{"kind": "session", "value": sid}})
	heard()
	answeredByRule(t, cb, sid, body)

	heard = heardRuleChange(t, b)
	if r := ca.Do(t, http.MethodDelete, "/v1/rules/"+rule["id"].(string), nil); r.Status != http.StatusNoContent {
		t.Fatalf("revoke on A: %d %s", r.Status, r.Body)
	}
	heard()
	parksForAPerson(t, cb, sid, body)
	if r := ruleByID(t, cb, rule["id"].(string)); r["state"] != "revoked" || r["fire_count"] != 1.0 {
		t.Fatalf("rule seen on B: %s", mustJSON(r))
	}
}

// heardRuleChange returns a function that waits until srv has dropped the rules it
// keeps in memory after the call — on another replica's note, for a change made after
// this call.
func heardRuleChange(t *testing.T, srv *testserver.Server) func() {
	t.Helper()
	dropped := srv.App.Store.RuleCacheDropped()
	return func() {
		t.Helper()
		select {
		case <-dropped:
		case <-time.After(10 * time.Second):
			t.Fatal("the replica did not hear of the rule change within 10s")
		}
	}
}

// answeredAt posts body to path and expects an answer at once (a rule answered).
func answeredAt(t *testing.T, c *testserver.Client, path string, body any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := c.Send(ctx, http.MethodPost, path, body)
	if err != nil || r.Status != http.StatusOK {
		t.Fatalf("%s was not answered at once: %v %v", path, err, r)
	}
	return canonJSON(t, r.Body)
}

// TestRulesAnswerCodexAndPolicyEvaluations: Codex command approvals (tool "shell") and
// a policy's ASK for a tool call are answered by rules too, and near misses park.
func TestRulesAnswerCodexAndPolicyEvaluations(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--policy-file", policyFile(t, askBashPolicy), "--elicitation-mode", "form")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		createRule(t, c, map[string]any{"effect": "allow", "tool": "shell",
			"match": map[string]any{"kind": "prefix", "pattern": "go test "}, "scope": map[string]any{"kind": "cwd", "value": "/tmp/workspace"}})
		codexPath := "/v1/sessions/" + sid + "/hooks/codex-elicitation-request"
		if got := answeredAt(t, c, codexPath, testserver.CodexCommandBody(1, []string{"go", "test", "./..."})); got != `{"decision":"accept"}` {
			t.Fatalf("codex answer: %s", got)
		}
		p, eid, _ := c.ParkAt(t, sid, codexPath, testserver.CodexCommandBody(2, []string{"go", "generate", "./..."}))
		c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "decline"})
		p.Wait(t, 10*time.Second)

		deny := createRule(t, c, map[string]any{"effect": "deny", "tool": "Bash",
			"match": map[string]any{"kind": "glob", "pattern": "rm *"}, "scope": map[string]any{"kind": "session", "value": sid}})
		evalPath := "/v1/sessions/" + sid + "/policies/evaluate"
		got := answeredAt(t, c, evalPath, toolCallEvent("Bash", map[string]any{"command": "rm build"}))
		if !strings.Contains(got, `"result":"POLICY_ACTION_DENY"`) || !strings.Contains(got, deny["id"].(string)) || strings.Contains(got, "declined") {
			t.Fatalf("evaluate answer: %s", got)
		}
		p, ev := parkPolicyASK(t, c, sid) // "date": no rule
		c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+ev["elicitation_id"].(string)+"/resolve", map[string]any{"action": "accept"})
		p.Wait(t, 10*time.Second)
	})
}

// TestAskRuleTimeoutOnEvaluate: a policy ASK under an ask rule whose wait runs out with
// no decision is a DENY whose reason names the timeout.
func TestAskRuleTimeoutOnEvaluate(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--policy-file", policyFile(t, askBashPolicy), "--elicitation-mode", "form")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		createRule(t, c, map[string]any{"effect": "ask", "tool": "Bash",
			"match": map[string]any{"kind": "exact", "pattern": "date"}, "scope": map[string]any{"kind": "global"}, "timeout": "1s"})
		p, _ := parkPolicyASK(t, c, sid)
		ans := p.Wait(t, 15*time.Second)
		if got := canonJSON(t, ans.Body); got != `{"reason":"Timed out: nobody decided in time. No person declined this request.","result":"POLICY_ACTION_DENY"}` {
			t.Fatalf("timeout answer: %s", got)
		}
	})
}

// TestPolicyOwnTimeout: a policy in the YAML may set its own wait and the answer when
// it runs out; "deny" names the timeout and the policy, "allow" allows.
func TestPolicyOwnTimeout(t *testing.T) {
	const policies = `policies:
  - name: slow_deploys
    on: [tool_call]
    when: 'data.name == "Deploy"'
    action: ASK
    timeout: 1s
    on_timeout: deny
  - name: quiet_reads
    on: [tool_call]
    when: 'data.name == "Read"'
    action: ASK
    timeout: 1s
    on_timeout: allow
`
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--policy-file", policyFile(t, policies), "--elicitation-mode", "form")
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		evalPath := "/v1/sessions/" + sid + "/policies/evaluate"
		deploy, ev := func() (*testserver.Parked, map[string]any) {
			p, _, ev := c.ParkAt(t, sid, evalPath, toolCallEvent("Deploy", nil))
			return p, ev
		}()
		params, _ := ev["params"].(map[string]any)
		if params["on_timeout"] != "deny" || params["timeout_seconds"] != 1.0 {
			t.Fatalf("published params: %s", mustJSON(params))
		}
		got := canonJSON(t, deploy.Wait(t, 15*time.Second).Body)
		if !strings.Contains(got, `"result":"POLICY_ACTION_DENY"`) || !strings.Contains(got, "Timed out") ||
			!strings.Contains(got, "slow_deploys") || strings.Contains(got, "Approval was declined") {
			t.Fatalf("deny on timeout: %s", got)
		}
		read, _, _ := c.ParkAt(t, sid, evalPath, toolCallEvent("Read", nil))
		if got := canonJSON(t, read.Wait(t, 15*time.Second).Body); got != `{"result":"POLICY_ACTION_ALLOW"}` {
			t.Fatalf("allow on timeout: %s", got)
		}
	})
}

// TestRulesAnswerMCPPolicyAsk: on the MCP proxy, a policy ASK for a call an allow rule
// matches runs the tool without asking anyone; a deny rule's match is an isError result
// naming the rule; another call still asks.
func TestRulesAnswerMCPPolicyAsk(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		f := newMRTRFixture(t, db)
		createRule(t, f.c, map[string]any{"effect": "allow", "tool": "deploy",
			"match": map[string]any{"kind": "exact", "pattern": `{"env":"staging"}`}, "scope": map[string]any{"kind": "session", "value": f.sid}})
		deny := createRule(t, f.c, map[string]any{"effect": "deny", "tool": "deploy",
			"match": map[string]any{"kind": "exact", "pattern": `{"env":"dev"}`}, "scope": map[string]any{"kind": "global"}})
		body := rpcPost(t, f.c, f.sid, rpcCall(1, "deploy", map[string]any{"env": "staging"}, nil))
		res, ok := body["result"].(map[string]any)
		if !ok || res["resultType"] == "input_required" || res["isError"] == true {
			t.Fatalf("allowed by rule: %v", body)
		}
		wantToolError(t, rpcPost(t, f.c, f.sid, rpcCall(2, "deploy", map[string]any{"env": "dev"}, nil)), "Denied by Gatehouse rule "+deny["id"].(string))
		body = rpcPost(t, f.c, f.sid, rpcCall(3, "deploy", map[string]any{"env": "prod"}, nil))
		if res, _ := body["result"].(map[string]any); res["resultType"] != "input_required" {
			t.Fatalf("a call no rule matches must ask: %v", body)
		}
	})
}

// sameInstant reports whether two RFC 3339 times from JSON answers name the same instant.
func sameInstant(t *testing.T, a, b any) bool {
	t.Helper()
	as, _ := a.(string)
	bs, _ := b.(string)
	at, err1 := time.Parse(time.RFC3339Nano, as)
	bt, err2 := time.Parse(time.RFC3339Nano, bs)
	if err1 != nil || err2 != nil {
		t.Fatalf("not times: %v, %v", a, b)
	}
	return at.Equal(bt)
}
