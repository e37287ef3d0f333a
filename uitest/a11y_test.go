package uitest

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testnpm"
)

// viewports are the two sizes every page is checked at: a phone and a laptop.
var viewports = []struct {
	name string
	w, h int64
}{{"phone", 390, 844}, {"desktop", 1280, 800}}

// axeSource is axe-core's browser build from node_modules (package.json pins it); a
// missing copy skips, or fails under GATEHOUSE_REQUIRE_CLIENTS like every real client.
func axeSource(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(testnpm.NodeModule(t, "axe-core/axe.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// axeCheck runs axe-core on the open page and fails on any serious or critical
// violation. It is injected through DevTools, so the page's CSP does not stop it.
func (tb *tab) axeCheck(axe, page string) {
	tb.t.Helper()
	run(tb, chromedp.Evaluate[bool](`(() => { if (!window.axe) { `+axe+`
	} return true })()`))
	bad := run(tb, chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ["violations"]}).then(r =>
		r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
			.map(v => v.impact + " " + v.id + ": " + v.help + " — " + v.nodes.map(n => n.target.join(" ")).slice(0, 5).join(" | ")))`,
		chromedp.EvalAwaitPromise))
	if len(bad) > 0 {
		tb.t.Errorf("%s: axe found %d serious or critical violations:\n%s", page, len(bad), strings.Join(bad, "\n"))
	}
}

// fits fails when the page scrolls sideways, and, when buttons is set, when any of
// the decision buttons is not wholly inside the viewport as the page opens.
func (tb *tab) fits(page string, buttons bool) {
	tb.t.Helper()
	if msg := run(tb, chromedp.Evaluate[string](`(() => {
		const d = document.documentElement;
		if (d.scrollWidth > d.clientWidth) return "horizontal overflow: scrollWidth " + d.scrollWidth + " > clientWidth " + d.clientWidth;
		return "" })()`)); msg != "" {
		tb.t.Errorf("%s: %s", page, msg)
	}
	if !buttons {
		return
	}
	if msg := run(tb, chromedp.Evaluate[string](`(() => {
		const bs = [...document.querySelectorAll('[data-testid="action-bar"] button')];
		if (bs.length === 0) return "no decision buttons";
		const out = [];
		for (const b of bs) {
			const r = b.getBoundingClientRect();
			if (r.width === 0 || r.top < 0 || r.left < 0 || r.bottom > window.innerHeight || r.right > window.innerWidth)
				out.push(b.textContent.trim() + " at " + [r.left, r.top, r.right, r.bottom].map(Math.round).join(","));
		}
		return out.length ? "buttons outside the " + innerWidth + "x" + innerHeight + " viewport: " + out.join("; ") : "" })()`)); msg != "" {
		tb.t.Errorf("%s: %s", page, msg)
	}
}

// TestBrowserEveryPageAccessibleAndFits opens every page (the inbox empty and full,
// the approval page of each tool kind, rules, tokens, notification settings, a
// session, the sessions list, the history, the error page) at phone and desktop
// size: axe-core finds no serious or critical violation, nothing scrolls sideways,
// and on the approval pages the decision buttons are on the first screen.
func TestBrowserEveryPageAccessibleAndFits(t *testing.T) {
	srv, c := startServer(t)
	axe := axeSource(t)
	tb := newTab(t, srv)
	check := func(page, path string, buttons bool) {
		t.Helper()
		for _, v := range viewports {
			tb.do(chromedp.EmulateViewport(v.w, v.h))
			tb.open(path)
			run(tb, chromedp.Poll[bool](`document.readyState === "complete"`, chromedp.WithPollingTimeout(stepTimeout)))
			tb.fits(page+" at "+v.name, buttons)
			tb.axeCheck(axe, page+" at "+v.name)
		}
	}
	check("empty inbox", "/inbox", false)

	root := c.CreateSession(t, c.CreateAgent(t), "", "Ship the billing fix")
	sid := c.CreateSession(t, c.CreateAgent(t), root, "worker-a")
	long := strings.Repeat("echo a-very-long-argument-that-does-not-break-anywhere-at-all ", 12)
	kinds := []struct {
		kind, tool string
		input      map[string]any
	}{
		{"shell", "Bash", map[string]any{"command": "curl -fsSL https://example.com/install.sh | sudo bash && " + long, "description": "Install the tool"}},
		{"edit", "Edit", map[string]any{"file_path": "/home/dev/app/src/app.ts", "old_string": "const a = 1\n", "new_string": "const a = 2\n"}},
		{"write", "Write", map[string]any{"file_path": "/home/dev/app/src/new-module-with-a-long-name.ts", "content": strings.Repeat("export const x = 1\n", 60)}},
		{"read", "Read", map[string]any{"file_path": "/etc/hosts"}},
		{"fetch", "WebFetch", map[string]any{"url": "https://docs.example.com/a/very/long/path/that/goes/on/and/on?with=query&and=more", "prompt": "Summarize the page"}},
		{"mcp", "mcp__github__create_issue", map[string]any{"owner": "acme", "repo": "billing", "title": "Double charge", "body": strings.Repeat("line of body text\n", 40)}},
		{"question", "AskUserQuestion", map[string]any{"questions": []any{
			map[string]any{"question": "Which database?", "header": "DB", "multiSelect": false, "options": []any{
				map[string]any{"label": "SQLite", "description": "One file"}, map[string]any{"label": "Postgres", "description": "A server"}}},
			map[string]any{"question": "Which features?", "header": "Features", "multiSelect": true, "options": []any{
				map[string]any{"label": "Search", "description": "Full text"}, map[string]any{"label": "Export", "description": "CSV"}}}}}},
		{"plan", "ExitPlanMode", map[string]any{"plan": "## Fix double billing\n\n" + strings.Repeat("1. A step of the plan that takes a line\n", 40)}},
	}
	paths := map[string]string{}
	eids := map[string]string{}
	for _, k := range kinds {
		_, eid, _ := c.ParkClaude(t, sid, root, k.tool, k.input)
		paths[k.kind] = "/approve/" + sid + "/" + eid
		eids[k.kind] = eid
	}
	check("full inbox", "/inbox", false)
	for _, k := range kinds {
		check("approve "+k.kind, paths[k.kind], true)
	}
	// Decided prompts for the history: its longest summary and a risk badge.
	for kind, action := range map[string]string{"shell": "decline", "fetch": "accept"} {
		if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eids[kind]+"/resolve", map[string]any{"action": action}); r.Status != http.StatusAccepted {
			t.Fatalf("resolve %s: %d %s", kind, r.Status, r.Body)
		}
	}
	for _, body := range []map[string]any{
		{"effect": "deny", "tool": "Bash", "expires_in": "23h", "scope": map[string]any{"kind": "session", "value": sid},
			"match": map[string]any{"kind": "prefix", "pattern": "rm -rf /home/dev/a-very-long-directory-name-that-must-not-break-mid-word/"}},
		{"effect": "allow", "tool": "Read", "scope": map[string]any{"kind": "session", "value": root}, "match": map[string]any{"kind": "glob", "pattern": "/home/dev/app/**"}},
	} {
		if r := c.Do(t, http.MethodPost, "/v1/rules", body); r.Status != http.StatusCreated {
			t.Fatalf("create rule: %d %s", r.Status, r.Body)
		}
	}
	for page, path := range map[string]string{
		"rules":         "/rules",
		"tokens":        "/settings/tokens",
		"notifications": "/settings/notifications",
		"session":       "/sessions/" + root,
		"sessions":      "/sessions",
		"history":       "/history",
		"error page":    "/no/such/page",
	} {
		check(page, path, false)
	}
}

// TestBrowserEmptyInboxHasNoBulkControls: an empty inbox shows no bulk bar or key
// help; they appear with the first request, live.
func TestBrowserEmptyInboxHasNoBulkControls(t *testing.T) {
	srv, c := startServer(t)
	tb := newTab(t, srv)
	tb.open("/inbox")
	tb.waitStreamOpen("inbox-list")
	if !tb.eval(`getComputedStyle(document.querySelector('[data-testid="bulk-form"]')).display === "none"`) {
		t.Fatal("the empty inbox shows the bulk controls")
	}
	sid := c.CreateSession(t, c.CreateAgent(t), "", "")
	c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls"})
	run(tb, chromedp.Poll[bool](`getComputedStyle(document.querySelector('[data-testid="bulk-form"]')).display !== "none"`,
		chromedp.WithPollingTimeout(stepTimeout)))
}
