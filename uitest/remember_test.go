package uitest

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserRememberEditedRule: the approval page offers Claude Code's suggestions;
// a rule widened in the browser is refused with its field marked while the hook keeps
// waiting, and the narrowed rule the person then types is what the parked hook gets.
func TestBrowserRememberEditedRule(t *testing.T) {
	srv, c := startServer(t)
	sid := c.CreateSession(t, c.CreateAgent(t), "", "deploys")
	body := map[string]any{
		"session_id": "7d1f0a52", "transcript_path": "/tmp/t.jsonl", "cwd": "/srv/app", "permission_mode": "default",
		"hook_event_name": "PermissionRequest", "tool_name": "Bash",
		"tool_input": map[string]any{"command": "npm run deploy", "description": "Deploy"},
		"permission_suggestions": []any{
			map[string]any{"type": "addRules", "rules": []any{map[string]any{"toolName": "Bash", "ruleContent": "npm run deploy:*"}},
				"behavior": "allow", "destination": "localSettings"},
			map[string]any{"type": "setMode", "mode": "acceptEdits", "destination": "session"},
		},
	}
	parked, eid, _ := c.ParkAt(t, sid, "/v1/sessions/"+sid+"/hooks/permission-request", body)
	tb := newTab(t, srv)
	tb.open("/approve/" + sid + "/" + eid)
	rule := `input[name="rule_0_0"]`
	// The remember box opens collapsed, nothing chosen: the person opens it to edit.
	if tb.eval(`document.querySelector('[data-testid="remember-box"]').open || !!document.querySelector('input[name="remember"]:checked')`) {
		t.Fatal("the remember box is open or a suggestion pre-chosen")
	}
	tb.do(chromedp.Click(chromedp.CSS(`[data-testid="remember-box"] > summary`)), chromedp.WaitVisible(chromedp.CSS(rule)))
	tb.screenshot("approve-remember-suggestions")
	clear := func() {
		if !tb.eval(`(() => { const el = document.querySelector(` + quote(rule) + `); el.value = ""; return true })()`) {
			t.Fatal("could not clear the rule")
		}
	}
	clear()
	tb.do(
		chromedp.SendKeys(chromedp.CSS(rule), "*"),
		chromedp.Click(chromedp.CSS(`[data-testid="approve-remember"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="rule-error"]`)),
	)
	if got := tb.text(`[data-testid="rule-error"]`); !strings.Contains(got, "npm run deploy") {
		t.Fatalf("rule error = %q", got)
	}
	if status(t, c, sid, eid) != "pending" {
		t.Fatalf("a widened rule decided the prompt")
	}
	tb.screenshot("approve-remember-refused")
	clear()
	tb.do(
		chromedp.SendKeys(chromedp.CSS(rule), "npm run deploy --prod"),
		chromedp.Click(chromedp.CSS(`[data-testid="approve-remember"]`)),
		chromedp.WaitVisible(chromedp.CSS(outcome)),
	)
	want := `{"behavior":"allow","updatedPermissions":[{"behavior":"allow","destination":"localSettings",` +
		`"rules":[{"ruleContent":"npm run deploy --prod","toolName":"Bash"}],"type":"addRules"}]}`
	if d := hookDecision(t, parked); asJSON(d) != want {
		t.Fatalf("decision = %s\nwant       %s", asJSON(d), want)
	}
}
