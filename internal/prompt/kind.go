package prompt

import (
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/claude"
	"github.com/gatehouse-dev/gatehouse/internal/agents/codex"
	"github.com/gatehouse-dev/gatehouse/models"
)

// ToolKindOf is what a prompt's tool call does: the kind its agent gave it
// (models.ParamToolKind), so every view shows a tool by what it does, whatever the
// agent calls it. A prompt without one — stored before agents gave kinds, raised by a
// policy or an MCP server, or a tool its agent left as "other" — falls back to
// KindOfName.
func ToolKindOf(params map[string]any) models.ToolKind {
	k := models.ToolKind(str(params[models.ParamToolKind]))
	switch k {
	case models.KindShell, models.KindEdit, models.KindWrite, models.KindRead, models.KindFetch,
		models.KindMCP, models.KindQuestion, models.KindPlan:
		return k
	}
	return KindOfName(str(params["tool_name"]))
}

// KindOfName is the kind of a tool known only by its name: the names Claude Code and
// Codex give their tools (an apply_patch tool, whoever sends it, edits files). It is
// the one place the views read a vendor's tool names, and only for prompts that carry
// no kind of their own.
func KindOfName(name string) models.ToolKind {
	switch {
	case name == "":
		return models.KindOther
	case name == codex.ShellTool:
		return models.KindShell
	case strings.ToLower(strings.ReplaceAll(name, "_", "")) == "applypatch":
		return models.KindEdit
	}
	return claude.KindOf(name)
}
