package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestApprovePagePlainPrompt: the page shows who asks and what, and each button's post
// wakes the parked hook with the right decision (allow, deny with the reason, allow
// keeping the suggested rule), then redirects (303) to the page showing the outcome.
func TestApprovePagePlainPrompt(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		b := newBrowser(t, srv, "")
		root := c.CreateSession(t, c.CreateAgent(t), "", "Refactor auth")
		child := c.CreateSession(t, c.CreateAgent(t), root, "worker-a")

		cases := []struct {
			name string
			form url.Values
			want string
			head string
		}{
			{"approve", url.Values{"action": {"accept"}}, `{"behavior":"allow"}`, "Approved"},
			{"reject with reason", url.Values{"action": {"decline"}, "feedback": {"use git stash instead"}},
				`{"behavior":"deny","message":"use git stash instead"}`, "Rejected"},
			{"approve and remember", url.Values{"action": {"accept_remember"}},
				`{"behavior":"allow","updatedPermissions":[{"behavior":"allow","destination":"session","rules":[{"ruleContent":"git reset:*","toolName":"Bash"}],"type":"addRules"}]}`, "Approved"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				body := testserver.ClaudeBody("Bash", map[string]any{"command": "git reset --hard", "description": "Drop changes"})
				body["permission_suggestions"] = []any{map[string]any{"type": "addRules", "behavior": "allow", "destination": "session",
					"rules": []any{map[string]any{"toolName": "Bash", "ruleContent": "git reset:*"}}}}
				parked, eid, _ := c.ParkAt(t, root, "/v1/sessions/"+child+"/hooks/permission-request", body)
				path := "/approve/" + child + "/" + eid
				p := b.get(t, path)
				mustStatus(t, p, http.StatusOK)
				if got := p.text("message"); got != "Claude wants to call Bash" {
					t.Errorf("message = %q", got)
				}
				if p.testid("message").Find("strong").Text() != "Bash" {
					t.Errorf("tool name not bold: %s", p.Body)
				}
				if got := p.text("vendor"); got != "Claude Code" {
					t.Errorf("vendor = %q", got)
				}
				if strings.Contains(p.Body, "claude_native_permission") {
					t.Errorf("internal policy stamp shown")
				}
				if got := strings.Join(p.testid("session-path").Find("li").Map(func(_ int, s *goquery.Selection) string { return s.Text() }), " › "); got != "Refactor auth › worker-a" {
					t.Errorf("session path = %q", got)
				}
				if p.text("agent") != "test-agent" || p.text("session-title") != "worker-a" {
					t.Errorf("agent/title = %q / %q", p.text("agent"), p.text("session-title"))
				}
				if p.text("command") != "git reset --hard" || p.text("cwd") != "/tmp/cwd" || p.text("description") != "Drop changes" {
					t.Errorf("details: command=%q cwd=%q description=%q", p.text("command"), p.text("cwd"), p.text("description"))
				}
				if p.testid("form-plain").Length() != 1 || p.testid("approve-remember").Length() != 1 {
					t.Fatalf("plain form with remember missing:\n%s", p.Body)
				}
				tc.form.Set("csrf", p.csrf(t))
				r := b.post(t, path, tc.form, false)
				mustStatus(t, r, http.StatusSeeOther)
				if loc := r.Header.Get("Location"); loc != path {
					t.Fatalf("redirect to %q, want %q", loc, path)
				}
				if got := toJSON(decision(t, parked.Wait(t, 10*time.Second))); got != tc.want {
					t.Fatalf("decision = %s\nwant       %s", got, tc.want)
				}
				after := b.get(t, path)
				mustStatus(t, after, http.StatusOK)
				if !strings.HasPrefix(after.text("outcome-headline"), tc.head) {
					t.Fatalf("outcome headline = %q, want %q", after.text("outcome-headline"), tc.head)
				}
				if !strings.Contains(after.text("outcome-detail"), "Resolved by local at") || !strings.Contains(after.text("outcome-detail"), "via the approval page") {
					t.Fatalf("outcome detail = %q", after.text("outcome-detail"))
				}
				if after.testid("decision").Length() != 0 || after.Doc.Find("form.decide").Length() != 0 {
					t.Fatalf("decided page still shows the form")
				}
			})
		}
	})
}

// TestApprovePageCSRF: a post without the token, or with a wrong one, is refused with
// the 403 page and decides nothing.
func TestApprovePageCSRF(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		parked, eid, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls"})
		path := "/approve/" + sid + "/" + eid

		fresh := newBrowser(t, srv, "") // never loaded the page: no cookie at all
		r := fresh.post(t, path, url.Values{"action": {"accept"}}, false)
		mustStatus(t, r, http.StatusForbidden)
		if r.testid("error").Length() != 1 || !strings.Contains(r.text("error-message"), "expired") {
			t.Fatalf("403 is not the error page:\n%s", r.Body)
		}

		b := newBrowser(t, srv, "")
		tok := b.get(t, path).csrf(t)
		flipped := "0"
		if tok[0] == '0' {
			flipped = "1"
		}
		for _, bad := range []string{"", flipped + tok[1:], tok + "x", tok[:len(tok)-1]} {
			r := b.post(t, path, url.Values{"action": {"accept"}, "csrf": {bad}}, false)
			mustStatus(t, r, http.StatusForbidden)
		}
		// Another browser's valid token does not work with this browser's cookie.
		other := newBrowser(t, srv, "")
		otherTok := other.get(t, path).csrf(t)
		if otherTok == tok {
			t.Fatalf("two browsers got the same token")
		}
		mustStatus(t, b.post(t, path, url.Values{"action": {"accept"}, "csrf": {otherTok}}, false), http.StatusForbidden)

		if st := elicitationStatus(t, c, sid, eid)["status"]; st != "pending" {
			t.Fatalf("refused posts decided the prompt: status %v", st)
		}
		if parked.Done() {
			t.Fatalf("hook woke after refused posts")
		}
		mustStatus(t, b.post(t, path, url.Values{"action": {"accept"}, "csrf": {tok}}, false), http.StatusSeeOther)
		if got := toJSON(decision(t, parked.Wait(t, 10*time.Second))); got != `{"behavior":"allow"}` {
			t.Fatalf("decision = %s", got)
		}
	})
}

// TestApprovePageAskUserQuestion: radios and checkboxes per question with an "other"
// field; an incomplete post is re-rendered with errors and decides nothing; a complete
// one reaches the hook as answers keyed by question text, multi-select labels joined.
func TestApprovePageAskUserQuestion(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		input := map[string]any{"questions": []any{
			map[string]any{"question": "Which database should the worker target?", "header": "Database", "multiSelect": false,
				"options": []any{map[string]any{"label": "postgres", "description": "shared cluster"}, map[string]any{"label": "sqlite", "description": "local file"}}},
			map[string]any{"question": "Which checks should run?", "header": "Checks", "multiSelect": true,
				"options": []any{map[string]any{"label": "unit", "description": ""}, map[string]any{"label": "lint", "description": ""}, map[string]any{"label": "e2e", "description": ""}}},
		}}
		parked, eid, _ := c.ParkClaude(t, sid, sid, "AskUserQuestion", input)
		path := "/approve/" + sid + "/" + eid
		b := newBrowser(t, srv, "")
		p := b.get(t, path)
		mustStatus(t, p, http.StatusOK)
		if p.testid("form-question").Length() != 1 || p.testid("question").Length() != 2 {
			t.Fatalf("question form missing:\n%s", p.Body)
		}
		q0 := p.testid("question").Eq(0)
		if q0.Find(`input[type="radio"][name="q0"]`).Length() != 3 || q0.Find(`input[name="q0_other"]`).Length() != 1 {
			t.Fatalf("single-select question lacks radios/other: %s", p.Body)
		}
		if p.testid("question").Eq(1).Find(`input[type="checkbox"][name="q1"]`).Length() != 3 {
			t.Fatalf("multi-select question lacks checkboxes")
		}
		if p.testid("approve-remember").Length() != 0 {
			t.Fatalf("remember offered on AskUserQuestion")
		}
		tok := p.csrf(t)
		r := b.post(t, path, url.Values{"csrf": {tok}, "action": {"accept"}, "q0": {"sqlite"}}, false)
		mustStatus(t, r, http.StatusUnprocessableEntity)
		if r.testid("question-error").Length() != 1 || r.testid("form-error").Length() != 1 {
			t.Fatalf("missing answer not flagged:\n%s", r.Body)
		}
		if v, _ := r.Doc.Find(`input[name="q0"][value="sqlite"]`).Attr("checked"); r.Doc.Find(`input[name="q0"][value="sqlite"][checked]`).Length() != 1 {
			t.Fatalf("chosen answer not kept on re-render (%q)", v)
		}
		if st := elicitationStatus(t, c, sid, eid)["status"]; st != "pending" {
			t.Fatalf("invalid post decided the prompt")
		}
		r = b.post(t, path, url.Values{"csrf": {tok}, "action": {"accept"}, "q0": {"sqlite"}, "q1": {"unit", "e2e"}}, false)
		mustStatus(t, r, http.StatusSeeOther)
		d := decision(t, parked.Wait(t, 10*time.Second))
		upd, _ := d["updatedInput"].(map[string]any)
		want := `{"Which checks should run?":"unit, e2e","Which database should the worker target?":"sqlite"}`
		if d["behavior"] != "allow" || toJSON(upd["answers"]) != want {
			t.Fatalf("decision = %s", toJSON(d))
		}
		if upd["questions"] == nil {
			t.Fatalf("updatedInput lost the original questions: %s", toJSON(upd))
		}
	})
}

// mcpTestSchema covers every field kind an MCP form may ask for.
func mcpTestSchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{
		"email":    map[string]any{"type": "string", "format": "email", "title": "Contact email"},
		"name":     map[string]any{"type": "string", "minLength": 2, "maxLength": 20, "default": "deploy-bot"},
		"replicas": map[string]any{"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
		"dry_run":  map[string]any{"type": "boolean", "default": true},
		"env":      map[string]any{"type": "string", "enum": []any{"staging", "prod"}, "enumNames": []any{"Staging", "Production"}},
		"size":     map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "s", "title": "Small"}, map[string]any{"const": "l", "title": "Large"}}},
		"regions":  map[string]any{"type": "array", "items": map[string]any{"enum": []any{"eu", "us", "ap"}}, "minItems": 1},
		"window":   map[string]any{"type": "string", "format": "date-time", "description": "When to roll out"},
	}, "required": []any{"email", "env", "regions"}}
}

// TestApprovePageMCPForm: the form is built from requestedSchema; an invalid post is
// re-rendered with field errors and decides nothing; a valid one resolves with the
// typed content.
func TestApprovePageMCPForm(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		eid := openMCPForm(t, c, sid, "Deploy **now**?", mcpTestSchema())
		path := "/approve/" + sid + "/" + eid
		b := newBrowser(t, srv, "")
		p := b.get(t, path)
		mustStatus(t, p, http.StatusOK)
		if p.testid("form-form").Length() != 1 || p.testid("field").Length() != 8 {
			t.Fatalf("MCP form missing fields:\n%s", p.Body)
		}
		if typ, _ := p.Doc.Find(`input[name="field.email"]`).Attr("type"); typ != "email" {
			t.Errorf("email input type = %q", typ)
		}
		rep := p.Doc.Find(`input[name="field.replicas"]`)
		if v, _ := rep.Attr("value"); v != "2" {
			t.Errorf("integer default = %q", v)
		}
		if mn, _ := rep.Attr("min"); mn != "1" {
			t.Errorf("integer min = %q", mn)
		}
		if p.Doc.Find(`input[name="field.dry_run"][checked]`).Length() != 1 {
			t.Errorf("boolean default not checked")
		}
		if p.Doc.Find(`input[name="field.env"][value="prod"]`).Parent().Text() == "" ||
			!strings.Contains(p.testid("field").FilterFunction(func(_ int, s *goquery.Selection) bool { return s.AttrOr("data-field", "") == "env" }).Text(), "Production") {
			t.Errorf("enumNames not used as labels")
		}
		if !strings.Contains(p.Body, "Large") || p.Doc.Find(`input[name="field.regions"][type="checkbox"]`).Length() != 3 {
			t.Errorf("oneOf titles or multi-select checkboxes missing")
		}
		tok := p.csrf(t)
		bad := url.Values{"csrf": {tok}, "action": {"accept"}, "field.email": {"not-an-email"}, "field.name": {"x"},
			"field.replicas": {"9"}, "field.env": {"prod"}, "field.window": {"tomorrow"}}
		r := b.post(t, path, bad, false)
		mustStatus(t, r, http.StatusUnprocessableEntity)
		flagged := map[string]bool{}
		r.testid("field").Each(func(_ int, s *goquery.Selection) {
			if s.Find(`[data-testid="field-error"]`).Length() > 0 {
				flagged[s.AttrOr("data-field", "")] = true
			}
		})
		for _, f := range []string{"email", "name", "replicas", "regions", "window"} {
			if !flagged[f] {
				t.Errorf("no error shown on %s (flagged %v)", f, flagged)
			}
		}
		if flagged["env"] || flagged["size"] {
			t.Errorf("valid fields flagged: %v", flagged)
		}
		if v, _ := r.Doc.Find(`input[name="field.email"]`).Attr("value"); v != "not-an-email" {
			t.Errorf("typed value not kept: %q", v)
		}
		if st := elicitationStatus(t, c, sid, eid)["status"]; st != "pending" {
			t.Fatalf("invalid form decided the prompt: %v", st)
		}
		good := url.Values{"csrf": {tok}, "action": {"accept"}, "field.email": {"ops@example.com"}, "field.name": {"deploy-bot"},
			"field.replicas": {"3"}, "field.env": {"prod"}, "field.size": {"l"}, "field.regions": {"eu", "ap"},
			"field.window": {"2026-12-01T09:30:00Z"}}
		mustStatus(t, b.post(t, path, good, false), http.StatusSeeOther)
		row, err := srv.App.Elicit.Get(context.Background(), eid)
		if err != nil {
			t.Fatal(err)
		}
		var content any
		_ = json.Unmarshal(row.Content, &content)
		want := `{"dry_run":false,"email":"ops@example.com","env":"prod","name":"deploy-bot","regions":["eu","ap"],"replicas":3,"size":"l","window":"2026-12-01T09:30:00Z"}`
		if row.Status != "resolved" || *row.Action != "accept" || toJSON(content) != want || *row.ResolvedVia != "page" {
			t.Fatalf("row = %s %v %s via %v", row.Status, *row.Action, toJSON(content), *row.ResolvedVia)
		}
	})
}

// TestApprovePageRealHooks: prompts parked through the real Codex and Claude
// PreToolUse hooks render with their own details, and "approve and remember" appears
// only where the protocol can keep the grant (Codex: acceptForSession).
func TestApprovePageRealHooks(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		b := newBrowser(t, srv, "")

		parked, eid, _ := c.ParkAt(t, sid, "/v1/sessions/"+sid+"/hooks/codex-elicitation-request",
			testserver.CodexCommandBody(7, []string{"git", "push", "--force"}))
		path := "/approve/" + sid + "/" + eid
		p := b.get(t, path)
		mustStatus(t, p, http.StatusOK)
		if p.text("vendor") != "Codex" || p.text("command") != "git push --force" || p.text("cwd") != "/tmp/workspace" || p.text("reason") != "Verify the clock" {
			t.Fatalf("codex page: vendor %q command %q cwd %q reason %q", p.text("vendor"), p.text("command"), p.text("cwd"), p.text("reason"))
		}
		if p.testid("approve-remember").Length() != 1 {
			t.Fatalf("codex command lacks approve-and-remember")
		}
		r := b.post(t, path, url.Values{"csrf": {p.csrf(t)}, "action": {"accept_remember"}}, false)
		mustStatus(t, r, http.StatusSeeOther)
		ans := parked.Wait(t, 10*time.Second)
		if !strings.Contains(string(ans.Body), `"acceptForSession"`) {
			t.Fatalf("codex answer: %s", ans.Body)
		}

		body := testserver.ClaudeBody("Bash", map[string]any{"command": "ls"})
		body["hook_event_name"] = "PreToolUse"
		body["tool_use_id"] = "toolu_1"
		_, pre, _ := c.ParkAt(t, sid, "/v1/sessions/"+sid+"/hooks/pre-tool-use", body)
		p = b.get(t, "/approve/"+sid+"/"+pre)
		if p.testid("form-plain").Length() != 1 || p.testid("approve-remember").Length() != 0 {
			t.Fatalf("PreToolUse prompt offers remember (its answer cannot carry it)")
		}
	})
}
