package views_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/gatehouse-dev/gatehouse/internal/markdown"
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/models"
	"github.com/gatehouse-dev/gatehouse/views"
)

var update = flag.Bool("update", false, "rewrite golden files")

var (
	asked   = time.Date(2026, 3, 14, 12, 4, 5, 0, time.UTC)
	decided = time.Date(2026, 3, 14, 12, 9, 0, 0, time.UTC)
	assets  = views.Assets{CSS: "/static/app.css", JS: "/static/app.js", HTMX: "/static/vendor/htmx-2.0.11.min.js", SSE: "/static/vendor/htmx-ext-sse-2.2.4.min.js"}
)

func render(t *testing.T, c templ.Component) (*goquery.Document, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc, buf.String()
}

func approvePage(t *testing.T, origin, params string) views.ApprovePage {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(params), &m); err != nil {
		t.Fatalf("params: %v", err)
	}
	return views.ApprovePage{
		Chrome: views.Chrome{Title: "Approve request", Assets: assets},
		CSRF:   "tok123", Action: "/approve/conv_a/elicit_b", EventsURL: "/approve/conv_a/elicit_b/events",
		RawURL: "/approve/conv_a/elicit_b/raw",
		ID:     "elicit_b", Agent: "builder", Created: asked,
		Path:   []views.Crumb{{ID: "conv_r", Title: "Release 2.1", URL: "/sessions/conv_r"}, {ID: "conv_a", Title: "worker-a", URL: "/sessions/conv_a"}},
		Prompt: prompt.Describe(origin, m, markdown.New()),
	}
}

func testids(doc *goquery.Document, id string) *goquery.Selection {
	return doc.Find(`[data-testid="` + id + `"]`)
}

func text(doc *goquery.Document, id string) string {
	return strings.Join(strings.Fields(testids(doc, id).First().Text()), " ")
}

// want checks that each testid appears the given number of times.
func want(t *testing.T, doc *goquery.Document, counts map[string]int) {
	t.Helper()
	for id, n := range counts {
		if got := testids(doc, id).Length(); got != n {
			t.Errorf("%s: %d elements, want %d", id, got, n)
		}
	}
}

func TestApproveClaudeTool(t *testing.T) {
	d := approvePage(t, models.OriginClaudePermission, `{"message":"Claude wants to call **Bash**","policy_name":"claude_native_permission",
		"vendor":"Claude Code","tool_name":"Bash","tool_input":{"command":"npm test","timeout":60000},"cwd":"/repo","permission_mode":"acceptEdits",
		"permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test:*"}],"behavior":"allow","destination":"localSettings"},
		{"type":"setMode","mode":"acceptEdits","destination":"session"}]}`)
	doc, html := render(t, views.Approve(d))
	want(t, doc, map[string]int{"form-plain": 1, "approve": 1, "approve-remember": 1, "reject": 1, "feedback": 1,
		"command": 1, "cwd": 1, "tool-input": 1, "permission-mode": 1, "policy": 0, "outcome": 0,
		"remember": 1, "suggestion": 2, "suggestion-choice": 2, "rule-input": 1, "rule-error": 0})
	if doc.Find(`input[name="remember"]:checked`).Length() != 0 || doc.Find(`details[data-testid="remember-box"][open]`).Length() != 0 ||
		doc.Find(`input[name="rule_0_0"]`).AttrOr("value", "") != "npm test:*" {
		t.Errorf("a suggestion pre-chosen, the remember box open, or its rule not editable: %s", testids(doc, "remember").Text())
	}
	if text(doc, "headline") != "Claude Code wants to run npm test" || text(doc, "headline-target") != "npm test" {
		t.Errorf("headline = %q", text(doc, "headline"))
	}
	if text(doc, "vendor") != "Claude Code" || text(doc, "agent") != "builder" || text(doc, "session-title") != "worker-a" {
		t.Errorf("header: vendor %q agent %q title %q", text(doc, "vendor"), text(doc, "agent"), text(doc, "session-title"))
	}
	if strings.Contains(html, "claude_native_permission") {
		t.Error("internal stamp rendered")
	}
	dec := testids(doc, "decision")
	if dec.AttrOr("hx-ext", "") != "sse" || dec.AttrOr("sse-connect", "") != d.EventsURL || dec.AttrOr("sse-swap", "") != "resolved" {
		t.Errorf("decision panel does not listen to its stream: %v", dec.Nodes)
	}
	if doc.Find(`form.decide input[name="csrf"]`).AttrOr("value", "") != "tok123" || doc.Find("form.decide").AttrOr("method", "") != "post" {
		t.Error("form lacks the CSRF token or is not a POST")
	}
	if !strings.Contains(text(doc, "tool-input"), `"timeout": 60000`) {
		t.Errorf("tool input not pretty JSON: %q", text(doc, "tool-input"))
	}
	golden(t, "approve_claude_bash.html", html)
}

func TestApproveCodexCommand(t *testing.T) {
	d := approvePage(t, models.OriginCodex, `{"message":"Codex wants to run **git push --force**","vendor":"Codex","policy_name":"codex_app_server",
		"command":"git push --force","cwd":"/repo","reason":"Publish the fix","allow_remember":true,"phase":"codex_command_approval"}`)
	doc, html := render(t, views.Approve(d))
	want(t, doc, map[string]int{"form-plain": 1, "approve-remember": 1, "command": 1, "cwd": 1, "reason": 1, "tool-input": 0})
	if text(doc, "command") != "git push --force" || text(doc, "reason") != "Publish the fix" || text(doc, "vendor") != "Codex" {
		t.Errorf("codex details: %q %q %q", text(doc, "command"), text(doc, "reason"), text(doc, "vendor"))
	}
	if strings.Contains(html, "codex_app_server") {
		t.Error("internal stamp rendered")
	}
}

func TestApproveCodexFileChangeAndPermissions(t *testing.T) {
	doc, _ := render(t, views.Approve(approvePage(t, models.OriginCodex, `{"vendor":"Codex","message":"Codex wants to change 2 files",
		"fileChanges":{"b.go":{"type":"update"},"a.go":{"type":"add"}},"grantRoot":"/repo/src","allow_remember":true}`)))
	if text(doc, "files") != "a.go (add) b.go (update)" || text(doc, "grant-root") != "/repo/src" {
		t.Errorf("files %q grant %q", text(doc, "files"), text(doc, "grant-root"))
	}
	doc, _ = render(t, views.Approve(approvePage(t, models.OriginCodex, `{"vendor":"Codex","message":"Codex asks for more permissions",
		"permissions":{"network":{"enabled":true}},"allow_remember":false}`)))
	want(t, doc, map[string]int{"permissions": 1, "approve-remember": 0})
}

func TestApprovePolicyPrompt(t *testing.T) {
	doc, _ := render(t, views.Approve(approvePage(t, models.OriginPolicy, `{"message":"admin__ask_bash: Approve child tool call",
		"policy_name":"admin__ask_bash","phase":"tool_call","requestedSchema":{},"mode":"url","url":"/approve/conv_a/elicit_b",
		"content_preview":"Bash({\"command\":\"date\"})"}`)))
	want(t, doc, map[string]int{"form-plain": 1, "url-consent": 0, "preview": 1, "approve-remember": 0})
	if text(doc, "policy") != "admin__ask_bash" || text(doc, "vendor") != "Gatehouse policy" {
		t.Errorf("policy %q vendor %q", text(doc, "policy"), text(doc, "vendor"))
	}
}

func TestApproveAskUserQuestion(t *testing.T) {
	d := approvePage(t, models.OriginClaudePermission, `{"tool_name":"AskUserQuestion","message":"Claude wants to call **AskUserQuestion**",
		"ask_user_question":{"questions":[
		 {"question":"Which database?","header":"Database","multiSelect":false,"options":[{"label":"postgres","description":"shared"},{"label":"sqlite","description":"local"}]},
		 {"question":"Which checks?","header":"Checks","multiSelect":true,"options":[{"label":"unit"},{"label":"lint"}]}]}}`)
	doc, _ := render(t, views.Approve(d))
	want(t, doc, map[string]int{"form-question": 1, "question": 2, "option": 4, "option-other": 1, "other-text": 2, "approve-remember": 0, "feedback": 1})
	q0, q1 := testids(doc, "question").Eq(0), testids(doc, "question").Eq(1)
	if q0.Find(`input[type="radio"][required]`).Length() != 3 || q1.Find(`input[type="checkbox"]`).Length() != 2 {
		t.Error("single choice should be required radios, multi choice checkboxes")
	}
	if !strings.Contains(q0.Find("legend").Text(), "Which database?") || !strings.Contains(q0.Text(), "shared") {
		t.Errorf("question text/description missing: %q", q0.Text())
	}
	if testids(doc, "approve").AttrOr("disabled", "none") != "none" {
		t.Error("submit must not be disabled in HTML (it works without JavaScript)")
	}
	if _, ok := testids(doc, "approve").Attr("data-needs-answers"); !ok {
		t.Error("submit is not marked for the answer check")
	}
	// Re-render after a failed submit keeps choices and shows the errors.
	d.Prompt.Submit(map[string][]string{"action": {"accept"}, "q0": {"__other__"}, "q0_other": {"mysql"}})
	doc, _ = render(t, views.Approve(d))
	if doc.Find(`input[name="q0"][value="__other__"][checked]`).Length() != 1 || doc.Find(`input[name="q0_other"]`).AttrOr("value", "") != "mysql" {
		t.Error("other answer not kept")
	}
	want(t, doc, map[string]int{"question-error": 1, "form-error": 1})
}

func TestApproveCodexFreeTextQuestion(t *testing.T) {
	doc, _ := render(t, views.Approve(approvePage(t, models.OriginCodex, `{"vendor":"Codex","message":"Codex has a question",
		"ask_user_question":{"questions":[{"id":"tok","question":"Paste the token","header":"Token","isOther":false,"isSecret":true,"options":[]}]}}`)))
	in := testids(doc, "other-text")
	if in.AttrOr("type", "") != "password" || in.AttrOr("required", "none") == "none" || testids(doc, "option").Length() != 0 {
		t.Errorf("free-text secret question: %v", in.Nodes)
	}
}

func TestApproveMCPForm(t *testing.T) {
	d := approvePage(t, models.OriginMCPEvent, `{"vendor":"MCP server","server_name":"deploy","message":"Configure the deploy","requestedSchema":{"type":"object","properties":{
		"email":{"type":"string","format":"email","title":"Contact"},
		"note":{"type":"string","maxLength":80,"description":"Shown in the log"},
		"count":{"type":"integer","minimum":1,"maximum":9,"default":3},
		"ratio":{"type":"number"},
		"force":{"type":"boolean"},
		"env":{"type":"string","enum":["a","b","c","d","e","f"]},
		"tier":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}],"default":"l"},
		"tags":{"type":"array","items":{"anyOf":[{"const":"x","title":"Ex"},{"const":"y","title":"Why"}]},"default":["y"]}},
		"required":["email","env"]}}`)
	doc, _ := render(t, views.Approve(d))
	want(t, doc, map[string]int{"form-form": 1, "field": 8, "server-name": 1, "feedback": 0, "approve-remember": 0})
	field := func(name string) *goquery.Selection {
		return doc.Find(`[data-testid="field"][data-field="` + name + `"]`)
	}
	checks := []struct {
		name, sel string
	}{
		{"email", `input[type="email"][required]`},
		{"note", `input[type="text"][maxlength="80"]`},
		{"count", `input[type="number"][min="1"][max="9"][step="1"][value="3"]`},
		{"ratio", `input[type="number"][step="any"]`},
		{"force", `input[type="checkbox"][value="true"]`},
		{"env", `select[required] option[value="f"]`},
		{"tier", `input[type="radio"][value="l"][checked]`},
		{"tags", `input[type="checkbox"][value="y"][checked]`},
	}
	for _, c := range checks {
		if field(c.name).Find(c.sel).Length() != 1 {
			t.Errorf("%s lacks %s", c.name, c.sel)
		}
	}
	if !strings.Contains(field("tier").Text(), "Large") || !strings.Contains(field("note").Text(), "Shown in the log") {
		t.Error("titles or descriptions missing")
	}
	for _, name := range []string{"email", "note", "count"} {
		id := field(name).Find("input").AttrOr("id", "")
		if id == "" || doc.Find(`label[for="`+id+`"]`).Length() != 1 {
			t.Errorf("%s input is not labelled", name)
		}
	}
	d.Prompt.Submit(map[string][]string{"action": {"accept"}, "field.email": {"nope"}, "field.env": {"b"}})
	doc, _ = render(t, views.Approve(d))
	if field("email").Find(`[data-testid="field-error"]`).Length() != 1 || field("email").Find(`input[aria-invalid]`).Length() != 1 {
		t.Error("field error not rendered on email")
	}
}

func TestApprovePlan(t *testing.T) {
	doc, html := render(t, views.Approve(approvePage(t, models.OriginClaudePermission, `{"tool_name":"ExitPlanMode","message":"Claude wants to call **ExitPlanMode**",
		"exit_plan_mode":{"plan":"## Steps\n\n1. **Write** tests\n2. <script>alert(1)</script>\n\n[x](javascript:alert(1))"}}`)))
	want(t, doc, map[string]int{"plan": 1, "form-plan": 1, "feedback": 1, "approve-remember": 0})
	plan := testids(doc, "plan")
	if plan.Find("h2").Last().Text() != "Steps" || plan.Find("ol li strong").Text() != "Write" {
		t.Errorf("plan markdown not rendered: %s", html)
	}
	// The plan's source is shown as text beside the rendering, so the words appear;
	// no live script or javascript: link may.
	rendered, _ := plan.Find(".markdown").Html()
	if strings.Contains(html, "<script>alert") || strings.Contains(rendered, "javascript:") ||
		doc.Find(`a[href^="javascript"], script:not([src])`).Length() != 0 {
		t.Error("plan not sanitized")
	}
	if src := text(doc, "plan-source"); !strings.Contains(src, "<script>alert(1)</script>") || !strings.Contains(src, "[x](javascript:alert(1))") {
		t.Errorf("plan source not shown as text: %q", src)
	}
	if !strings.Contains(text(doc, "reject"), "feedback") {
		t.Errorf("reject button = %q", text(doc, "reject"))
	}
}

func TestApproveURLMode(t *testing.T) {
	doc, _ := render(t, views.Approve(approvePage(t, models.OriginCodex, `{"vendor":"Codex","mode":"url","message":"Sign in to GitHub",
		"url":"https://github.com/login/device?code=X","server_name":"github"}`)))
	want(t, doc, map[string]int{"url-consent": 1, "url-host": 1, "url-link": 1, "form-url": 1})
	host := testids(doc, "url-host")
	link := testids(doc, "url-link")
	if host.Text() != "github.com" || link.AttrOr("href", "") != "https://github.com/login/device?code=X" || !strings.Contains(link.AttrOr("rel", ""), "noreferrer") {
		t.Errorf("url prompt: host %q link %v", host.Text(), link.Nodes)
	}
	// The host is named before the link, so a person reads where they are going first.
	consent, _ := testids(doc, "url-consent").Html()
	if strings.Index(consent, "github.com</strong>") > strings.Index(consent, "<a ") {
		t.Error("host is not shown before the link")
	}
	doc, _ = render(t, views.Approve(approvePage(t, models.OriginCodex, `{"mode":"url","url":"javascript:alert(document.domain)"}`)))
	want(t, doc, map[string]int{"url-unsafe": 1, "url-link": 0})
}

func TestOutcomePanel(t *testing.T) {
	cases := []struct {
		o        views.Outcome
		headline string
		detail   string
	}{
		{views.Outcome{Status: "resolved", Action: "accept", By: "bob@example.com", Via: "inbox", At: &decided},
			"Approved — you can close this page", "Resolved by bob@example.com at 14 Mar 12:09 UTC via inbox."},
		{views.Outcome{Status: "resolved", Action: "decline", By: "ann", Via: "page", At: &decided}, "Rejected", "Resolved by ann at 14 Mar 12:09 UTC via the approval page."},
		{views.Outcome{Status: "expired", At: &decided}, "Expired — nobody answered in time", "Ended at 14 Mar 12:09 UTC"},
		{views.Outcome{Status: "abandoned", At: &decided}, "Abandoned — the agent stopped waiting", "Ended at 14 Mar 12:09 UTC"},
	}
	for _, c := range cases {
		doc, _ := render(t, views.OutcomePanel(c.o))
		if got := text(doc, "outcome-headline"); got != c.headline {
			t.Errorf("headline = %q, want %q", got, c.headline)
		}
		if got := text(doc, "outcome-detail"); got != c.detail {
			t.Errorf("detail = %q, want %q", got, c.detail)
		}
		if testids(doc, "outcome").AttrOr("id", "") != "decision" {
			t.Error("outcome must replace the decision panel (same id)")
		}
	}
}

func TestMissingAndErrorPages(t *testing.T) {
	doc, _ := render(t, views.Approve(views.ApprovePage{Chrome: views.Chrome{Title: "x", Assets: assets}, Missing: true}))
	want(t, doc, map[string]int{"missing": 1, "request": 0})
	doc, _ = render(t, views.Error(views.ErrorPage{Chrome: views.Chrome{Title: "Sign in", Assets: assets}, Status: 401,
		Heading: "Sign in through your proxy", Message: "m"}))
	if doc.Find("h1").Text() != "Sign in through your proxy" || testids(doc, "error").AttrOr("data-status", "") != "401" {
		t.Error("error page")
	}
}

func TestInboxList(t *testing.T) {
	doc, _ := render(t, views.Inbox(views.InboxPage{Chrome: views.Chrome{Title: views.CountTitle(0), Assets: assets}}))
	want(t, doc, map[string]int{"inbox-empty": 1, "card": 0})
	if doc.Find("title").Text() != "Inbox — Gatehouse" {
		t.Errorf("title %q", doc.Find("title").Text())
	}
	card := views.Card{ID: "elicit_1", ApproveURL: "/approve/conv_c/elicit_1", DecideURL: "/inbox/conv_c/elicit_1", Next: "/inbox",
		Message: "Claude wants to call **Bash**", Vendor: "Claude Code", Summary: "Bash({})", Created: asked, QuickApprove: true, CanDecide: true,
		Owner: []views.Crumb{{ID: "conv_c", Title: "worker"}}}
	answer := card
	answer.ID, answer.QuickApprove = "elicit_2", false
	d := views.InboxPage{Chrome: views.Chrome{Title: views.CountTitle(2), Assets: assets}, CSRF: "tok", Count: 2,
		Groups: []views.InboxGroup{{Root: views.Crumb{ID: "conv_r", Title: "root", URL: "/sessions/conv_r"}, Agent: "a", Cards: []views.Card{card, answer}}}}
	doc, _ = render(t, views.Inbox(d))
	want(t, doc, map[string]int{"group": 1, "card": 2, "card-approve": 1, "card-answer": 1, "card-reject": 2, "card-owner": 2})
	if doc.Find("title").Text() != "(2) Inbox — Gatehouse" {
		t.Errorf("title %q", doc.Find("title").Text())
	}
	c := testids(doc, "card").First()
	if c.AttrOr("tabindex", "") != "0" || c.AttrOr("data-open", "") != card.ApproveURL {
		t.Error("cards must be focusable and know where Enter goes")
	}
	form := c.Find("form")
	if form.AttrOr("hx-post", "") != card.DecideURL || form.AttrOr("action", "") != card.DecideURL || form.Find(`input[name="csrf"]`).AttrOr("value", "") != "tok" {
		t.Error("inline form must post (with and without htmx) and carry the token")
	}
	list := testids(doc, "inbox-list")
	if list.AttrOr("sse-connect", "") != "/inbox/events" || list.AttrOr("sse-swap", "") != "inbox" {
		t.Error("inbox list does not listen to its stream")
	}
}

func TestLayoutHasNoInlineScripts(t *testing.T) {
	doc, _ := render(t, views.Approve(approvePage(t, models.OriginClaudePermission, `{"tool_name":"Bash","tool_input":{"command":"ls"}}`)))
	if doc.Find("script:not([src])").Length() != 0 || doc.Find("[style]").Length() != 0 || doc.Find("[onclick],[onload]").Length() != 0 {
		t.Error("inline script or style found (the CSP forbids them)")
	}
	if doc.Find(`meta[name="viewport"]`).Length() != 1 || doc.Find(`html[lang="en"]`).Length() != 1 {
		t.Error("page lacks viewport or language")
	}
}

// golden compares html with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, html string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run go test ./views -update)", name, err)
	}
	if string(want) != html {
		t.Errorf("%s differs from the golden file (run go test ./views -update and review the diff)\n got: %s", name, html)
	}
}
