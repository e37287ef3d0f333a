package uitest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

func startServer(t *testing.T) (*testserver.Server, *testserver.Client) {
	t.Helper()
	srv := testserver.Start(t, "sqlite://"+t.TempDir()+"/gatehouse.db")
	return srv, srv.Client("")
}

// hookDecision reads a parked PermissionRequest hook's decision.
func hookDecision(t *testing.T, p *testserver.Parked) map[string]any {
	t.Helper()
	r := p.Wait(t, stepTimeout)
	var out struct {
		HookSpecificOutput struct {
			Decision map[string]any `json:"decision"`
		} `json:"hookSpecificOutput"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &out) != nil || out.HookSpecificOutput.Decision == nil {
		t.Fatalf("hook answered %d %s", r.Status, r.Body)
	}
	return out.HookSpecificOutput.Decision
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func status(t *testing.T, c *testserver.Client, sid, eid string) string {
	t.Helper()
	r := c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil)
	s, _ := r.JSON(t)["status"].(string)
	return s
}

const outcome = `[data-testid="outcome"]`

// TestBrowserApproveClaudeHook: park a Claude hook, open its approval page, click
// Approve: the parked hook returns allow and the page says so.
func TestBrowserApproveClaudeHook(t *testing.T) {
	srv, c := startServer(t)
	root := c.CreateSession(t, c.CreateAgent(t), "", "Release 2.1")
	child := c.CreateSession(t, c.CreateAgent(t), root, "worker-a")
	parked, eid, _ := c.ParkClaude(t, child, root, "Bash", map[string]any{"command": "npm publish --tag next", "description": "Publish the release"})
	tb := newTab(t, srv)
	tb.open("/approve/" + child + "/" + eid)
	if got := tb.text(`[data-testid="message"]`); got != "Claude wants to call Bash" {
		t.Fatalf("message = %q", got)
	}
	tb.screenshot("approve-claude-bash")
	tb.do(chromedp.Click(chromedp.CSS(`[data-testid="approve"]`)), chromedp.WaitVisible(chromedp.CSS(outcome)))
	if got := tb.text(`[data-testid="outcome-headline"]`); !strings.HasPrefix(got, "Approved") {
		t.Fatalf("headline = %q", got)
	}
	if d := hookDecision(t, parked); asJSON(d) != `{"behavior":"allow"}` {
		t.Fatalf("decision = %s", asJSON(d))
	}
	tb.screenshot("approve-approved")
}

// TestBrowserRejectWithReason: a typed reason travels to the agent with the deny.
func TestBrowserRejectWithReason(t *testing.T) {
	srv, c := startServer(t)
	sid := c.CreateSession(t, c.CreateAgent(t), "", "cleanup")
	parked, eid, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "rm -rf build/"})
	tb := newTab(t, srv)
	tb.open("/approve/" + sid + "/" + eid)
	tb.do(
		chromedp.SendKeys(chromedp.ID("feedback"), "Use make clean instead"),
		chromedp.Click(chromedp.CSS(`[data-testid="reject"]`)),
		chromedp.WaitVisible(chromedp.CSS(outcome)),
	)
	if got := tb.text(`[data-testid="outcome-headline"]`); got != "Rejected" {
		t.Fatalf("headline = %q", got)
	}
	if d := hookDecision(t, parked); asJSON(d) != `{"behavior":"deny","message":"Use make clean instead"}` {
		t.Fatalf("decision = %s", asJSON(d))
	}
	tb.screenshot("approve-rejected")
}

// TestBrowserAskUserQuestion: "Submit answers" stays disabled until every question is
// answered; typing an "other" answer picks it; the answers reach the hook keyed by
// question text.
func TestBrowserAskUserQuestion(t *testing.T) {
	srv, c := startServer(t)
	sid := c.CreateSession(t, c.CreateAgent(t), "", "migrations")
	parked, eid, _ := c.ParkClaude(t, sid, sid, "AskUserQuestion", map[string]any{"questions": []any{
		map[string]any{"question": "Which database should the worker target?", "header": "Database", "multiSelect": false,
			"options": []any{map[string]any{"label": "postgres", "description": "The shared cluster"}, map[string]any{"label": "sqlite", "description": "A local file"}}},
		map[string]any{"question": "Which checks should run?", "header": "Checks", "multiSelect": true,
			"options": []any{map[string]any{"label": "unit", "description": "Fast tests"}, map[string]any{"label": "lint", "description": "gofmt and vet"}, map[string]any{"label": "e2e", "description": "Browser tests"}}},
	}})
	tb := newTab(t, srv)
	tb.open("/approve/" + sid + "/" + eid)
	const submit = `[data-testid="approve"]`
	if !tb.eval(`document.querySelector('[data-testid="approve"]').disabled`) {
		t.Fatal("submit is enabled before any answer")
	}
	tb.screenshot("approve-question")
	tb.do(
		chromedp.SendKeys(chromedp.ID("q0_other"), "mysql"),
		chromedp.Click(chromedp.CSS(`input[name="q1"][value="unit"]`)),
	)
	if !tb.eval(`document.querySelector('input[name="q0"][value="__other__"]').checked`) {
		t.Fatal("typing an other answer did not select it")
	}
	if !tb.eval(`document.querySelector('[data-testid="approve"]').disabled === false`) {
		t.Fatal("submit still disabled with every question answered")
	}
	tb.do(
		chromedp.Click(chromedp.CSS(`input[name="q1"][value="e2e"]`)),
		chromedp.Click(chromedp.CSS(submit)),
		chromedp.WaitVisible(chromedp.CSS(outcome)),
	)
	d := hookDecision(t, parked)
	upd, _ := d["updatedInput"].(map[string]any)
	if want := `{"Which checks should run?":"unit, e2e","Which database should the worker target?":"mysql"}`; asJSON(upd["answers"]) != want {
		t.Fatalf("answers = %s, want %s", asJSON(upd["answers"]), want)
	}
}

// TestBrowserMCPForm: a server-side validation error is shown beside its field and
// decides nothing; the corrected form resolves with typed content.
func TestBrowserMCPForm(t *testing.T) {
	srv, c := startServer(t)
	sid := c.CreateSession(t, c.CreateAgent(t), "", "deploys")
	r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/events", map[string]any{"type": "mcp_elicitation", "data": map[string]any{
		"message": "The deploy server needs **details**",
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
			"email":    map[string]any{"type": "string", "format": "email", "title": "Contact email"},
			"replicas": map[string]any{"type": "integer", "minimum": 1, "maximum": 5, "default": 2, "title": "Replicas"},
			"env":      map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "staging", "title": "Staging"}, map[string]any{"const": "prod", "title": "Production"}}, "title": "Environment"},
			"regions":  map[string]any{"type": "array", "items": map[string]any{"enum": []any{"eu", "us"}}, "minItems": 1, "title": "Regions"},
			"window":   map[string]any{"type": "string", "format": "date-time", "title": "Rollout window"},
			"notify":   map[string]any{"type": "boolean", "default": true, "title": "Notify the team"},
		}, "required": []any{"email", "env"}}}})
	if r.Status != http.StatusAccepted {
		t.Fatalf("mcp_elicitation: %d %s", r.Status, r.Body)
	}
	eid := r.JSON(t)["elicitation_id"].(string)
	tb := newTab(t, srv)
	tb.open("/approve/" + sid + "/" + eid)
	tb.screenshot("approve-mcp-form")
	tb.do(
		chromedp.SendKeys(chromedp.CSS(`input[name="field.email"]`), "ops@example.com"),
		chromedp.Click(chromedp.CSS(`input[name="field.env"][value="prod"]`)),
		chromedp.Click(chromedp.CSS(`input[name="field.regions"][value="eu"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="field.window"]`), "tomorrow morning"),
		chromedp.Click(chromedp.CSS(`[data-testid="approve"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-field="window"] [data-testid="field-error"]`)),
	)
	if got := tb.text(`[data-field="window"] [data-testid="field-error"]`); !strings.Contains(got, "date and time") {
		t.Fatalf("window error = %q", got)
	}
	if status(t, c, sid, eid) != "pending" {
		t.Fatal("an invalid form decided the prompt")
	}
	tb.screenshot("approve-mcp-form-errors")
	tb.do(
		chromedp.Clear(chromedp.CSS(`input[name="field.window"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="field.window"]`), "2026-12-01T09:30:00Z"),
		chromedp.Click(chromedp.CSS(`[data-testid="approve"]`)),
		chromedp.WaitVisible(chromedp.CSS(outcome)),
	)
	row, err := srv.App.Elicit.Get(context.Background(), eid)
	if err != nil {
		t.Fatal(err)
	}
	var content any
	_ = json.Unmarshal(row.Content, &content)
	want := `{"email":"ops@example.com","env":"prod","notify":true,"regions":["eu"],"replicas":2,"window":"2026-12-01T09:30:00Z"}`
	if row.Status != "resolved" || asJSON(content) != want {
		t.Fatalf("row %s content %s, want %s", row.Status, asJSON(content), want)
	}
}

// TestBrowserPageUpdatesItself: a page left open is replaced in place when the prompt
// is decided elsewhere (through the API).
func TestBrowserPageUpdatesItself(t *testing.T) {
	srv, c := startServer(t)
	sid := c.CreateSession(t, c.CreateAgent(t), "", "")
	parked, eid, _ := c.ParkClaude(t, sid, sid, "Edit", map[string]any{"file_path": "/repo/main.go", "old_string": "a", "new_string": "b"})
	tb := newTab(t, srv)
	tb.open("/approve/" + sid + "/" + eid)
	tb.waitStreamOpen("decision")
	// Mark the document: a reload would lose the mark, an in-place swap keeps it.
	tb.do(chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))
	r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
	if r.Status != http.StatusAccepted {
		t.Fatalf("resolve: %d", r.Status)
	}
	tb.do(chromedp.WaitVisible(chromedp.CSS(outcome)), chromedp.WaitNotPresent(chromedp.CSS("form.decide")))
	if got := tb.text(`[data-testid="outcome-detail"]`); !strings.Contains(got, "via the API") {
		t.Fatalf("detail = %q", got)
	}
	if !tb.eval(`window.__sameDocument === true`) {
		t.Fatal("the page reloaded instead of updating in place")
	}
	hookDecision(t, parked)
	tb.screenshot("approve-decided-elsewhere")
}

// TestBrowserUntrustedTextRunsNothing: script and event-handler payloads in tool
// input, tool name, titles, agent name, plan and MCP message show as text and run
// nothing, on every page.
func TestBrowserUntrustedTextRunsNothing(t *testing.T) {
	srv, c := startServer(t)
	const payload = `<script>window.__pwned=1;document.title="pwned"</script><img src=x onerror="window.__pwned=1;document.title='pwned'">`
	r := c.Do(t, http.MethodPost, "/v1/agents", map[string]any{"name": "agent " + payload})
	sid := c.CreateSession(t, r.JSON(t)["id"].(string), "", "title "+payload)
	_, eid, _ := c.ParkClaude(t, sid, sid, "Bash"+payload, map[string]any{"command": "echo " + payload, "extra": payload})
	_, planID, _ := c.ParkClaude(t, sid, sid, "ExitPlanMode", map[string]any{"plan": "# Plan\n\n" + payload + "\n\n<a href=\"javascript:window.__pwned=1\">link</a>"})
	r = c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/events", map[string]any{"type": "mcp_elicitation", "data": map[string]any{
		"message": "**" + payload + "**", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
			"x" + payload: map[string]any{"type": "string", "title": payload, "description": payload, "default": payload}}}}})
	mcpID := r.JSON(t)["elicitation_id"].(string)

	tb := newTab(t, srv)
	pages := map[string]string{
		"approve": "/approve/" + sid + "/" + eid, "plan": "/approve/" + sid + "/" + planID,
		"mcp": "/approve/" + sid + "/" + mcpID, "inbox": "/inbox", "session": "/sessions/" + sid,
	}
	for name, path := range pages {
		tb.open(path)
		if !tb.eval(`window.__pwned === undefined && document.title !== "pwned"`) {
			t.Fatalf("%s: the payload ran", name)
		}
		if tb.eval(`document.querySelectorAll('img[src="x"], script:not([src]), [onerror]').length > 0`) {
			t.Fatalf("%s: the payload became markup", name)
		}
		if name != "plan" && !tb.eval(`document.body.textContent.includes('<script>window.__pwned=1')`) {
			t.Fatalf("%s: the payload is not shown as text", name)
		}
	}
	tb.open(pages["plan"])
	if tb.eval(`[...document.querySelectorAll('a')].some(a => a.href.startsWith('javascript:'))`) {
		t.Fatal("plan kept a javascript: link")
	}
	tb.open(pages["approve"])
	tb.screenshot("approve-hostile-text")
}

// TestBrowserScreenshotsOfEveryKind renders the remaining prompt kinds and pages for
// the artifacts (Codex command, plan, URL mode, nothing-to-approve, 404).
func TestBrowserScreenshotsOfEveryKind(t *testing.T) {
	srv, c := startServer(t)
	root := c.CreateSession(t, c.CreateAgent(t), "", "Ship the billing fix")
	sid := c.CreateSession(t, c.CreateAgent(t), root, "codex-worker")
	sess, err := srv.App.Store.GetSession(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	open := func(origin string, params map[string]any) string {
		row, err := srv.App.Elicit.Open(context.Background(), elicitPrompt(sess, origin, params))
		if err != nil {
			t.Fatal(err)
		}
		return row.ID
	}
	codex := open("codex", map[string]any{"mode": "form", "vendor": "Codex", "policy_name": "codex_app_server", "phase": "codex_command_approval",
		"message": "Codex wants to run **git push --force-with-lease origin fix/billing**", "command": "git push --force-with-lease origin fix/billing",
		"cwd": "/home/dev/billing", "reason": "Publish the rebased branch so CI can run", "allow_remember": true,
		"content_preview": "git push --force-with-lease origin fix/billing"})
	url := open("codex", map[string]any{"mode": "url", "vendor": "Codex", "server_name": "github", "message": "Sign in to GitHub to continue",
		"url": "https://github.com/login/device?user_code=WDJB-MJHT", "content_preview": "github: https://github.com/login/device"})
	_, plan, _ := c.ParkClaude(t, sid, root, "ExitPlanMode", map[string]any{"plan": "## Fix double billing\n\n1. Add an idempotency key to `charge()`\n" +
		"2. Backfill keys for open invoices\n3. **Deploy** behind the `billing_v2` flag\n\n| step | risk |\n|---|---|\n| backfill | medium |\n\n```go\nkey := invoice.ID + \":\" + attempt\n```"})
	tb := newTab(t, srv)
	for name, path := range map[string]string{
		"approve-codex-command": "/approve/" + sid + "/" + codex,
		"approve-url-mode":      "/approve/" + sid + "/" + url,
		"approve-plan":          "/approve/" + sid + "/" + plan,
		"approve-nothing-here":  "/approve/" + sid + "/elicit_00000000000000000000000000000000",
		"error-404":             "/no/such/page",
		"session":               "/sessions/" + root,
		"inbox":                 "/inbox",
	} {
		tb.open(path)
		tb.screenshot(name)
	}
	tb.open("/approve/" + sid + "/" + url)
	if got := tb.text(`[data-testid="url-host"]`); got != "github.com" {
		t.Fatalf("url host = %q", got)
	}
	tb.open("/approve/" + sid + "/" + codex)
	if got := tb.text(`[data-testid="command"]`); got != "git push --force-with-lease origin fix/billing" {
		t.Fatalf("command = %q", got)
	}
}

func elicitPrompt(sess *models.Session, origin string, params map[string]any) elicit.Prompt {
	return elicit.Prompt{Session: sess, Origin: origin, Params: params}
}

// TestBrowserLivePagesReleaseTheirStreams: moving between live pages closes each
// page's event stream. A browser allows six connections per host, so streams kept
// open by pages in the back/forward cache would stall the seventh page load.
func TestBrowserLivePagesReleaseTheirStreams(t *testing.T) {
	srv, c := startServer(t)
	sid := c.CreateSession(t, c.CreateAgent(t), "", "")
	_, e1, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "a"})
	_, e2, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "b"})
	tb := newTab(t, srv)
	for i := 0; i < 5; i++ {
		for _, path := range []string{"/approve/" + sid + "/" + e1, "/inbox", "/approve/" + sid + "/" + e2, "/sessions/" + sid} {
			tb.open(path)
		}
	}
	tb.do(chromedp.NavigateBack(), chromedp.WaitVisible(chromedp.CSS(`[data-testid="form-plain"]`)))
	tb.waitStreamOpen("decision")
}
