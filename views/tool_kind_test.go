package views_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehouse-dev/gatehouse/internal/markdown"
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/models"
	"github.com/gatehouse-dev/gatehouse/views"
)

// kindCases are tool calls of an agent Gatehouse knows nothing about: tool names no
// vendor mapping lists, classified by the agent's kind (the tool_kind param). Each
// names the Claude Code case (toolCases) whose view it must equal.
var kindCases = []struct {
	name, kind, claude, params string
	layout                     prompt.ToolLayout
}{
	{"shell", "shell", "bash", `{"tool_name":"run_shell_command","tool_kind":"shell","cwd":"/repo","tool_input":{"command":"npm test -- --grep \"api\"\nnpm run lint","description":"Run the API tests, then lint","timeout":60000}}`, prompt.ToolCommand},
	{"edit", "edit", "edit", `{"tool_name":"replace","tool_kind":"edit","cwd":"/repo","tool_input":{"file_path":"/repo/src/app.go","old_string":"func main() {\n\tserve(\":8080\")\n}","new_string":"func main() {\n\tserve(addr())\n}\n\nfunc addr() string { return \":\" + port }","replace_all":false}}`, prompt.ToolFiles},
	{"write", "write", "write", `{"tool_name":"write_file","tool_kind":"write","tool_input":{"file_path":"/repo/NOTES.md","content":"# Notes\n\n- first\n- second\n"}}`, prompt.ToolFiles},
	{"fetch", "fetch", "webfetch", `{"tool_name":"web_fetch","tool_kind":"fetch","tool_input":{"url":"https://gіthub.com/login","prompt":"Summarise the page"}}`, prompt.ToolFetch},
}

// TestToolByKindNotName: a tool whose name no mapping knows, given a kind by its
// agent, is shown as that kind — a command, a diff, a whole-file write, a URL with its
// host — on the approval page and on its card, exactly as Claude Code's own tool of
// that kind; without the kind the same call is only labelled fields.
func TestToolByKindNotName(t *testing.T) {
	claude := map[string]string{}
	for _, c := range toolCases {
		claude[c.name] = c.params
	}
	views := func(t *testing.T, js string) (*prompt.Prompt, string) {
		p := prompt.Describe(models.OriginClaudePermission, params(t, js), markdown.New())
		if p.Tool == nil && p.CardTool == nil {
			return p, ""
		}
		return p, renderTool(t, p)
	}
	for _, c := range kindCases {
		t.Run(c.name, func(t *testing.T) {
			p, got := views(t, c.params)
			if p.CardTool == nil || p.CardTool.Layout != c.layout {
				t.Fatalf("card layout = %+v, want %s", p.CardTool, c.layout)
			}
			if _, want := views(t, claude[c.claude]); got != want {
				t.Errorf("shown unlike Claude's %s:\n%s\nwant\n%s", c.claude, got, want)
			}
			doc, err := goquery.NewDocumentFromReader(strings.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			switch c.kind {
			case "shell":
				if testids(doc, "card-command").Text() != "npm test -- --grep \"api\"\nnpm run lint" || text(doc, "card-cwd") != "/repo" {
					t.Errorf("no command: %s", got)
				}
			case "edit":
				if text(doc, "diff-path") != "/repo/src/app.go" || doc.Find("tr.d-del").Length() == 0 {
					t.Errorf("no diff: %s", got)
				}
			case "write":
				if !strings.Contains(testids(doc, "diff-file").First().AttrOr("data-change", ""), "write") || doc.Find(`[data-testid="card-tool"] tr.d-add`).Length() != 4 {
					t.Errorf("no file write: %s", got)
				}
			case "fetch":
				if !strings.HasPrefix(text(doc, "fetch-host"), "xn--") || text(doc, "fetch-url") == "" {
					t.Errorf("no url: %s", got)
				}
			}

			// The same call without its kind is a tool nobody named: fields, no view of its own.
			m := params(t, c.params)
			delete(m, models.ParamToolKind)
			bare := prompt.Describe(models.OriginClaudePermission, m, markdown.New())
			if c.kind != "shell" && bare.CardTool.Layout == c.layout {
				t.Errorf("without a kind the %s tool is still laid out as %s: the kind is not what chose it", c.name, c.layout)
			}
		})
	}
}

// renderTool is a prompt's page tool view followed by its card tool view.
func renderTool(t *testing.T, p *prompt.Prompt) string {
	t.Helper()
	var buf bytes.Buffer
	if err := views.ToolView(p.Tool).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	if p.CardTool != nil {
		if err := views.ToolCard(p.CardTool).Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
	}
	return buf.String()
}
