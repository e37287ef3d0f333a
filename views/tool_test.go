package views_test

import (
	"fmt"
	"strings"

	"github.com/PuerkitoBio/goquery"

	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/markdown"
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/models"
	"github.com/gatehouse-dev/gatehouse/views"
)

// toolCases are one request of each tool kind, as the adapters publish them.
var toolCases = []struct {
	name, origin, params string
}{
	{"bash", models.OriginClaudePermission, `{"tool_name":"Bash","cwd":"/repo","tool_input":{"command":"npm test -- --grep \"api\"\nnpm run lint","description":"Run the API tests, then lint","timeout":60000}}`},
	{"edit", models.OriginClaudePermission, `{"tool_name":"Edit","cwd":"/repo","tool_input":{"file_path":"/repo/src/app.go","old_string":"func main() {\n\tserve(\":8080\")\n}","new_string":"func main() {\n\tserve(addr())\n}\n\nfunc addr() string { return \":\" + port }","replace_all":false}}`},
	{"edit_all", models.OriginClaudePermission, `{"tool_name":"Edit","tool_input":{"file_path":"/repo/a.txt","old_string":"foo","new_string":"bar","replace_all":true}}`},
	{"multiedit", models.OriginClaudePermission, `{"tool_name":"MultiEdit","tool_input":{"file_path":"/repo/go.mod","edits":[{"old_string":"go 1.25","new_string":"go 1.26"},{"old_string":"\tgithub.com/a/b v1.0.0\n","new_string":"\tgithub.com/a/b v1.1.0\n","replace_all":true}]}}`},
	{"write", models.OriginClaudePermission, `{"tool_name":"Write","tool_input":{"file_path":"/repo/NOTES.md","content":"# Notes\n\n- first\n- second\n"}}`},
	{"write_previous", models.OriginClaudePermission, `{"tool_name":"Write","tool_input":{"file_path":"/repo/NOTES.md","content":"# Notes\n\n- first\n- third\n","original_content":"# Notes\n\n- first\n- second\n"}}`},
	{"apply_patch", models.OriginClaudePreToolUse, `{"tool_name":"apply_patch","tool_input":{"input":"*** Begin Patch\n*** Add File: hello.txt\n+Hello\n+world\n*** Update File: src/main.rs\n*** Move to: src/bin.rs\n@@ fn main() {\n-    println!(\"hi\");\n+    println!(\"hello\");\n }\n*** Delete File: old.txt\n*** End Patch"}}`},
	{"codex_patch", models.OriginCodex, `{"vendor":"Codex","message":"Codex wants to change 3 files","fileChanges":{
		"a.go":{"type":"add","content":"package a\n"},
		"b.go":{"type":"update","unified_diff":"@@ -1,3 +1,3 @@\n package b\n-var x = 1\n+var x = 2\n // end\n","move_path":null},
		"c.go":{"type":"delete","content":"package c\n"}},"reason":"Bump x","grantRoot":"/repo","allow_remember":true}`},
	{"webfetch", models.OriginClaudePermission, `{"tool_name":"WebFetch","tool_input":{"url":"https://gіthub.com/login","prompt":"Summarise the page"}}`},
	{"question", models.OriginClaudePermission, `{"tool_name":"AskUserQuestion","ask_user_question":{"questions":[{"question":"Which database?","header":"Database","multiSelect":false,"options":[{"label":"postgres"},{"label":"sqlite"}]}]},"tool_input":{"questions":[]}}`},
	{"plan", models.OriginClaudePermission, `{"tool_name":"ExitPlanMode","exit_plan_mode":{"plan":"## Steps\n1. Write tests\n2. Ship"},"tool_input":{"plan":"## Steps\n1. Write tests\n2. Ship"}}`},
	{"fields", models.OriginClaudePermission, `{"tool_name":"Grep","tool_input":{"pattern":"TODO","path":"/repo","-n":true}}`},
	{"json", models.OriginClaudePermission, `{"tool_name":"mcp__db__query","tool_input":{"sql":"select 1","params":[1,{"k":"v"}]}}`},
	{"codex_command", models.OriginCodex, `{"vendor":"Codex","command":"git push --force","cwd":"/repo","reason":"Publish the fix","allow_remember":true}`},
}

func params(t *testing.T, js string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatalf("params: %v", err)
	}
	return m
}

// TestToolGolden: each tool kind's page view and card view, as golden HTML.
func TestToolGolden(t *testing.T) {
	for _, c := range toolCases {
		t.Run(c.name, func(t *testing.T) {
			p := prompt.Describe(c.origin, params(t, c.params), markdown.New())
			var buf bytes.Buffer
			buf.WriteString("<!-- page -->\n")
			if err := views.ToolView(p.Tool).Render(context.Background(), &buf); err != nil {
				t.Fatal(err)
			}
			buf.WriteString("\n<!-- card -->\n")
			if p.CardTool == nil {
				t.Fatal("no card tool view")
			}
			if err := views.ToolCard(p.CardTool).Render(context.Background(), &buf); err != nil {
				t.Fatal(err)
			}
			buf.WriteString("\n")
			golden(t, "tool_"+c.name+".html", buf.String())
		})
	}
}

// TestApproveEditDiff: an Edit's approval page shows the file and its diff with line
// numbers in place of the raw tool input.
func TestApproveEditDiff(t *testing.T) {
	doc, _ := render(t, views.Approve(approvePage(t, models.OriginClaudePermission, toolCases[1].params)))
	want(t, doc, map[string]int{"tool": 1, "diff-file": 1, "tool-input": 0, "file": 0, "approve": 1})
	if text(doc, "diff-path") != "/repo/src/app.go" || text(doc, "diff-stat") != "+3 −1" {
		t.Errorf("path %q stat %q", text(doc, "diff-path"), text(doc, "diff-stat"))
	}
	del, add := doc.Find("tr.d-del"), doc.Find("tr.d-add")
	if del.Length() != 1 || del.Find("td.tx").Text() != "\tserve(\":8080\")" || del.Find("td.ln").First().Text() != "2" {
		t.Errorf("removed line: %q", del.Text())
	}
	if add.Length() != 3 || add.Last().Find("td.ln").Eq(1).Text() != "5" {
		t.Errorf("added lines: %q", add.Text())
	}
}

// TestDiffHostileContentInert: HTML, script and bidi controls in an edit's strings are
// shown as text: no element is created from them and no control reaches the page live.
func TestDiffHostileContentInert(t *testing.T) {
	const rlo = "\u202E"
	in := map[string]any{"file_path": "/repo/x" + rlo + "lmth.go",
		"old_string": "<script>alert(1)</script>\n</td></tr></table><b>bold</b>",
		"new_string": "<img src=x onerror=alert(2)>\n<details open><summary>x</summary>\nsafe " + rlo + "evil"}
	js, _ := json.Marshal(map[string]any{"tool_name": "Edit", "tool_input": in})
	d := approvePage(t, models.OriginClaudePermission, string(js))
	doc, html := render(t, views.Approve(d))
	if doc.Find("script:not([src]), img, b, table.diff details").Length() != 0 {
		t.Fatalf("agent text became markup:\n%s", html)
	}
	if strings.Contains(html, rlo) {
		t.Error("a live U+202E reached the page")
	}
	if got := doc.Find("tr.d-del td.tx").First().Text(); got != "<script>alert(1)</script>" {
		t.Errorf("removed line = %q", got)
	}
	if got := doc.Find("tr.d-add td.tx").Last().Text(); got != "safe ⟨U+202E⟩evil" {
		t.Errorf("added line = %q", got)
	}
	if !strings.Contains(text(doc, "diff-path"), "⟨U+202E⟩") {
		t.Errorf("path = %q", text(doc, "diff-path"))
	}
	card := views.Card{ID: "e1", Message: "m", CanDecide: true, Tool: d.Prompt.CardTool, NeedsReview: d.Prompt.NeedsReview(), QuickApprove: d.Prompt.QuickApprove()}
	cdoc, chtml := render(t, views.CardItem(card, "tok"))
	if cdoc.Find("script:not([src]), img, b").Length() != 0 || strings.Contains(chtml, rlo) || cdoc.Find("tr.d-add").Length() == 0 {
		t.Errorf("card: %s", chtml)
	}
}

// TestDiffFoldsLongFiles: a one-line change in a 1,000-line file shows the change
// with a little context; the unchanged runs fold into <details>, still in the page.
// A 1,000-line new file shows FoldAfter lines and folds the rest.
func TestDiffFoldsLongFiles(t *testing.T) {
	var old, changed strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&old, "line %d\n", i)
		if i == 500 {
			changed.WriteString("line five hundred\n")
		} else {
			fmt.Fprintf(&changed, "line %d\n", i)
		}
	}
	js, _ := json.Marshal(map[string]any{"tool_name": "Write", "tool_input": map[string]any{
		"file_path": "/r/big.txt", "content": changed.String(), "original_content": old.String()}})
	doc, _ := render(t, views.Approve(approvePage(t, models.OriginClaudePermission, string(js))))
	folds := testids(doc, "diff-fold")
	if folds.Length() != 2 || !strings.Contains(folds.First().Find("summary").Text(), "496 unchanged lines") {
		t.Fatalf("folds: %d %q", folds.Length(), folds.Find("summary").Text())
	}
	open := doc.Find(".diff-file > table.diff")    // the tables outside the folds
	if got := open.Find("tr").Length(); got != 8 { // 3 + removed + added + 3
		t.Errorf("%d lines outside the folds, want 8", got)
	}
	if open.Find("tr.d-add td.tx").Text() != "line five hundred" || open.Find("tr.d-add td.ln").Eq(1).Text() != "500" {
		t.Errorf("change not shown open: %q", open.Text())
	}

	js, _ = json.Marshal(map[string]any{"tool_name": "Write", "tool_input": map[string]any{"file_path": "/r/new.txt", "content": old.String()}})
	doc, _ = render(t, views.Approve(approvePage(t, models.OriginClaudePermission, string(js))))
	want(t, doc, map[string]int{"diff-fold": 1, "diff-note": 1, "cut-notice": 0})
	if s := testids(doc, "diff-fold").Find("summary").Text(); s != fmt.Sprintf("%d more lines (%d changed)", 1000-prompt.FoldAfter, 1000-prompt.FoldAfter) {
		t.Errorf("fold summary %q", s)
	}
}

// TestDiffHugeFileBounded: a 1 MiB Write renders a bounded page that says it is cut
// and links the raw request.
func TestDiffHugeFileBounded(t *testing.T) {
	content := strings.Repeat(strings.Repeat("<x>", 40)+"\n", 9000) // ~1 MiB, 5× when escaped
	js, _ := json.Marshal(map[string]any{"tool_name": "Write", "tool_input": map[string]any{"file_path": "/r/huge", "content": content}})
	_, small := render(t, views.Approve(approvePage(t, models.OriginClaudePermission, `{"tool_name":"Write","tool_input":{"file_path":"/r/a","content":"x"}}`)))
	d := approvePage(t, models.OriginClaudePermission, string(js))
	doc, html := render(t, views.Approve(d))
	if len(html) > len(small)+prompt.MaxDiff+prompt.MaxRendered {
		t.Fatalf("page is %d bytes for a 1 MiB file", len(html))
	}
	want(t, doc, map[string]int{"cut-notice": 1, "raw-link": 1, "diff-file": 1})
	if d.Prompt.QuickApprove() || d.Prompt.CardTool == nil || !d.Prompt.CardTool.Cut {
		t.Error("a huge write is approvable from a card")
	}
	_, card := render(t, views.CardItem(views.Card{ID: "e", Tool: d.Prompt.CardTool, NeedsReview: true, CanDecide: true}, "t"))
	if len(card) > 6<<10 {
		t.Errorf("card is %d bytes", len(card))
	}
}

// TestToolCards: each card shows the tool in its own terms: no raw JSON escapes.
func TestToolCards(t *testing.T) {
	card := func(name string) (*goquery.Document, *prompt.Prompt) {
		for _, c := range toolCases {
			if c.name == name {
				p := prompt.Describe(c.origin, params(t, c.params), markdown.New())
				doc, _ := render(t, views.CardItem(views.Card{ID: "e", Message: p.Message, Summary: p.Preview, Tool: p.CardTool,
					QuickApprove: p.QuickApprove(), NeedsReview: p.NeedsReview(), CanDecide: true}, "t"))
				return doc, p
			}
		}
		t.Fatalf("no case %s", name)
		return nil, nil
	}
	doc, p := card("bash")
	if testids(doc, "card-command").Text() != "npm test -- --grep \"api\"\nnpm run lint" || text(doc, "card-description") != "Run the API tests, then lint" ||
		text(doc, "card-cwd") != "/repo" || !p.QuickApprove() {
		t.Errorf("bash card: %q %q %q quick=%v", testids(doc, "card-command").Text(), text(doc, "card-description"), text(doc, "card-cwd"), p.QuickApprove())
	}
	want(t, doc, map[string]int{"card-preview": 0, "card-approve": 1})
	doc, _ = card("edit")
	want(t, doc, map[string]int{"diff-file": 1, "card-approve": 1})
	doc, _ = card("webfetch")
	if !strings.HasPrefix(text(doc, "fetch-host"), "xn--") || testids(doc, "fetch-host-unicode").Length() != 1 {
		t.Errorf("fetch host %q", text(doc, "fetch-host"))
	}
	doc, _ = card("question")
	if text(doc, "card-question") != "Database Which database? — postgres · sqlite" {
		t.Errorf("question card %q", text(doc, "card-question"))
	}
	doc, _ = card("plan")
	if !strings.Contains(testids(doc, "card-plan").Text(), "1. Write tests\n2. Ship") {
		t.Errorf("plan card %q", testids(doc, "card-plan").Text())
	}

	// A long edit shows its first lines and must be reviewed before approving.
	var lines strings.Builder
	for i := range 30 {
		fmt.Fprintf(&lines, "new %d\n", i)
	}
	js, _ := json.Marshal(map[string]any{"tool_name": "Edit", "tool_input": map[string]any{"file_path": "/f", "old_string": "a", "new_string": lines.String()}})
	p = prompt.Describe(models.OriginClaudePermission, params(t, string(js)), markdown.New())
	if !p.NeedsReview() || p.QuickApprove() {
		t.Error("a card showing part of an edit is quick-approvable")
	}
	doc, _ = render(t, views.CardItem(views.Card{ID: "e", Tool: p.CardTool, NeedsReview: true, CanDecide: true}, "t"))
	if n := doc.Find("tr").Length(); n > prompt.CardLines {
		t.Errorf("card shows %d lines", n)
	}
	want(t, doc, map[string]int{"card-cut": 1, "card-review": 1, "card-approve": 0})
}
