package views_test

import (
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
