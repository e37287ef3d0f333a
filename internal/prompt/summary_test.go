package prompt

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/markdown"
	"github.com/gatehouse-dev/gatehouse/models"
)

// summaryCases are prompts of every shape with the notification line each gives.
var summaryCases = []struct {
	name, origin, params, detail string
}{
	{"bash", models.OriginClaudePermission, `{"tool_name":"Bash","tool_input":{"command":"terraform apply","description":"Apply"},"content_preview":"Bash({\"command\":\"terraform apply\"})"}`, "run `terraform apply`"},
	{"shell by kind", models.OriginClaudePermission, `{"tool_name":"run_shell_command","tool_kind":"shell","tool_input":{"command":"make test"}}`, "run `make test`"},
	{"edit", models.OriginClaudePermission, `{"tool_name":"Edit","tool_input":{"file_path":"/repo/a.go","old_string":"a := 1\nb := 2","new_string":"a := 1\nb := 3"}}`, "edit /repo/a.go\n-b := 2\n+b := 3"},
	{"edit by kind", models.OriginClaudePermission, `{"tool_name":"replace","tool_kind":"edit","tool_input":{"file_path":"/repo/a.go","old_string":"x","new_string":"y"}}`, "edit /repo/a.go\n-x\n+y"},
	{"multiedit", models.OriginClaudePermission, `{"tool_name":"MultiEdit","tool_input":{"file_path":"/repo/go.mod","edits":[{"old_string":"go 1.25","new_string":"go 1.26"}]}}`, "edit /repo/go.mod\n-go 1.25\n+go 1.26"},
	{"apply_patch", models.OriginClaudePreToolUse, `{"tool_name":"apply_patch","tool_input":{"input":"*** Begin Patch\n*** Add File: hello.txt\n+Hello\n*** Delete File: old.txt\n*** End Patch"}}`, "edit hello.txt, old.txt\n+Hello"},
	{"write", models.OriginClaudePermission, `{"tool_name":"Write","tool_input":{"file_path":"/repo/NOTES.md","content":"# Notes\n- first\n"}}`, "write /repo/NOTES.md\n# Notes\n- first"},
	{"write by kind", models.OriginClaudePermission, `{"tool_name":"write_file","tool_kind":"write","tool_input":{"file_path":"/repo/x","content":"y"}}`, "write /repo/x\ny"},
	{"read", models.OriginClaudePermission, `{"tool_name":"Read","tool_input":{"file_path":"/etc/hosts"}}`, "read /etc/hosts"},
	{"fetch", models.OriginClaudePermission, `{"tool_name":"WebFetch","tool_input":{"url":"https://example.com/docs","prompt":"Read"}}`, "fetch https://example.com/docs"},
	{"fetch by kind", models.OriginClaudePermission, `{"tool_name":"web_fetch","tool_kind":"fetch","tool_input":{"url":"https://example.com/"}}`, "fetch https://example.com/"},
	{"mcp", models.OriginClaudePermission, `{"tool_name":"mcp__db__query","tool_input":{"sql":"select 1"}}`, `call mcp__db__query({"sql":"select 1"})`},
	{"question", models.OriginClaudePermission, `{"tool_name":"AskUserQuestion","ask_user_question":{"questions":[{"question":"Which database?","options":[{"label":"pg"}]},{"question":"Which port?"}]},"tool_input":{}}`, "2 questions:\nWhich database?\nWhich port?"},
	{"plan", models.OriginClaudePermission, `{"tool_name":"ExitPlanMode","exit_plan_mode":{"plan":"1. Test\n2. Ship"},"tool_input":{"plan":"1. Test\n2. Ship"}}`, "plan: 1. Test\n2. Ship"},
	{"codex command", models.OriginCodex, `{"vendor":"Codex","command":"git push --force","cwd":"/repo","reason":"Publish","allow_remember":true}`, "run `git push --force`"},
	{"codex command by kind", models.OriginCodex, `{"vendor":"Codex","tool_kind":"shell","command":"git push","cwd":"/repo"}`, "run `git push`"},
	{"codex patch", models.OriginCodex, `{"vendor":"Codex","fileChanges":{"b.go":{"type":"update"},"a.go":{"type":"add","content":"package a\n"}}}`, "change a.go, b.go"},
	{"other tool", models.OriginClaudePermission, `{"tool_name":"Grep","tool_input":{"pattern":"TODO"},"content_preview":"Grep({\"pattern\":\"TODO\"})"}`, `Grep({"pattern":"TODO"})`},
	{"policy", models.OriginPolicy, `{"message":"Deploy?","tool_name":"Bash","content_preview":"Bash({\"command\":\"deploy\"})","requestedSchema":{}}`, `Bash({"command":"deploy"})`},
	{"mcp form", models.OriginMCPEvent, `{"message":"Which env?","content_preview":"Which env?","requestedSchema":{"type":"object","properties":{"env":{"type":"string"}}}}`, "Which env?"},
}

func summaryParams(t *testing.T, js string) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(js))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("params %s: %v", js, err)
	}
	return m
}

// TestSummarizeByKind: a notification says what a call does by its kind — the
// command it runs, the file it edits and the lines that change, the file it writes,
// the URL it fetches, the MCP tool it calls, the questions, the plan — whatever the
// agent calls the tool.
func TestSummarizeByKind(t *testing.T) {
	for _, c := range summaryCases {
		t.Run(c.name, func(t *testing.T) {
			if got := Summarize(c.origin, summaryParams(t, c.params)).Detail; got != c.detail {
				t.Errorf("detail %q, want %q", got, c.detail)
			}
		})
	}
	s := Summarize(models.OriginClaudePermission, summaryParams(t, `{"message":"Claude wants to call **Bash**","tool_name":"Bash","tool_input":{"command":"ls"}}`))
	if s.Vendor != "Claude Code" || s.Tool != "Bash" || s.Message != "Claude wants to call Bash" || !s.Answerable || s.Cut {
		t.Errorf("summary %+v", s)
	}
}

// TestSummarizeAnswersAsTheCardDoes: one tap answers a notification exactly when the
// inbox would let a person approve the prompt from its card, and the notification is
// marked shortened exactly when the card is — for every shape, short and long.
func TestSummarizeAnswersAsTheCardDoes(t *testing.T) {
	long := strings.Repeat("line\n", 40)
	cases := []struct{ origin, params string }{}
	for _, c := range summaryCases {
		cases = append(cases, struct{ origin, params string }{c.origin, c.params})
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for _, p := range []map[string]any{
		{"tool_name": "Edit", "tool_input": map[string]any{"file_path": "/f", "old_string": "a", "new_string": long}},
		{"tool_name": "replace", "tool_kind": "edit", "tool_input": map[string]any{"file_path": "/f", "old_string": "a", "new_string": long}},
		{"tool_name": "Bash", "tool_input": map[string]any{"command": strings.Repeat("x", PreviewLimit+1)}},
		{"tool_name": "Bash", "content_preview": strings.Repeat("x", PreviewLimit+1), "tool_input": map[string]any{"command": "ls"}},
		{"tool_name": "Bash", "message": strings.Repeat("m", MaxMessage+1), "tool_input": map[string]any{"command": "ls"}},
		{"tool_name": "Write", "tool_input": map[string]any{"file_path": "/f", "content": long}},
		{"tool_name": "mcp__x__y", "tool_input": map[string]any{"deep": map[string]any{"a": []any{long, long, long, long, long, long, long}}}},
		{"content_preview": strings.Repeat("p", PreviewLimit+1)},
		{"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"approved": map[string]any{"type": "boolean"}}}},
	} {
		cases = append(cases, struct{ origin, params string }{models.OriginClaudePermission, js(p)})
	}
	answerable := 0
	for _, c := range cases {
		m := summaryParams(t, c.params)
		p := Describe(c.origin, m, markdown.New())
		s := Summarize(c.origin, summaryParams(t, c.params))
		if s.Answerable != p.QuickApprove() || s.Cut != p.PreviewCut {
			t.Errorf("%s: answerable %v cut %v; the card: quick approve %v cut %v", c.params, s.Answerable, s.Cut, p.QuickApprove(), p.PreviewCut)
		}
		if s.Answerable {
			answerable++
		}
	}
	if answerable == 0 || answerable == len(cases) {
		t.Errorf("%d of %d answerable: the cases do not tell the two apart", answerable, len(cases))
	}
}

// FuzzSummarize: any params summarize without panicking, and one tap answers a
// notification only when the card would allow it.
func FuzzSummarize(f *testing.F) {
	for _, c := range summaryCases {
		f.Add(c.origin, c.params)
	}
	f.Add(models.OriginClaudePermission, `{"tool_name":"Edit","tool_kind":"edit","tool_input":{"edits":"x","old_string":1,"notebook_path":[]}}`)
	f.Add(models.OriginCodex, `{"tool_kind":"shell","command":{"a":1},"fileChanges":[]}`)
	md := markdown.New()
	f.Fuzz(func(t *testing.T, origin, params string) {
		var m map[string]any
		if json.Unmarshal([]byte(params), &m) != nil {
			return
		}
		s := Summarize(origin, m)
		if q := Describe(origin, m, md).QuickApprove(); s.Answerable != q {
			t.Fatalf("answerable %v, card quick approve %v", s.Answerable, q)
		}
	})
}
