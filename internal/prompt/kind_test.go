package prompt

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// TestToolKindOf: the kind an agent stored decides; a prompt without one (or with a
// value that is no kind, or "other") falls back to the known tool names, so prompts
// stored before kinds were recorded are shown as before.
func TestToolKindOf(t *testing.T) {
	for _, c := range []struct {
		params string
		want   models.ToolKind
	}{
		{`{"tool_name":"run_shell_command","tool_kind":"shell"}`, models.KindShell},
		{`{"tool_name":"Bash","tool_kind":"fetch"}`, models.KindFetch}, // the agent's kind wins over the name
		{`{"tool_name":"Bash","tool_kind":"bogus"}`, models.KindShell},
		{`{"tool_name":"apply_patch","tool_kind":"other"}`, models.KindEdit},
		{`{"tool_name":"Bash"}`, models.KindShell},
		{`{"tool_name":"shell"}`, models.KindShell},
		{`{"tool_name":"Edit"}`, models.KindEdit},
		{`{"tool_name":"MultiEdit"}`, models.KindEdit},
		{`{"tool_name":"NotebookEdit"}`, models.KindEdit},
		{`{"tool_name":"ApplyPatch"}`, models.KindEdit},
		{`{"tool_name":"Write"}`, models.KindWrite},
		{`{"tool_name":"Read"}`, models.KindRead},
		{`{"tool_name":"WebFetch"}`, models.KindFetch},
		{`{"tool_name":"AskUserQuestion"}`, models.KindQuestion},
		{`{"tool_name":"ExitPlanMode"}`, models.KindPlan},
		{`{"tool_name":"mcp__db__query"}`, models.KindMCP},
		{`{"tool_name":"run_shell_command"}`, models.KindOther},
		{`{}`, models.KindOther},
	} {
		if got := ToolKindOf(params(t, c.params)); got != c.want {
			t.Errorf("%s: kind %q, want %q", c.params, got, c.want)
		}
	}
}

// TestRememberByKind: "approve and remember" is never offered for a question or a
// plan, whatever the agent calls the tool.
func TestRememberByKind(t *testing.T) {
	for _, js := range []string{
		`{"tool_name":"ask_user","tool_kind":"question","tool_input":{"q":"which?"},"permission_suggestions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]}`,
		`{"tool_name":"exit_plan","tool_kind":"plan","tool_input":{"plan":"x"},"permission_suggestions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]}`,
	} {
		if canRemember(models.OriginClaudePermission, params(t, js)) {
			t.Errorf("remember offered for %s", js)
		}
	}
	if !canRemember(models.OriginClaudePermission, params(t, `{"tool_name":"run_shell_command","tool_kind":"shell"}`)) {
		t.Error("remember refused for a shell command")
	}
}
