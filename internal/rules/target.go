package rules

import (
	"encoding/json"
	"path"
	"strings"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Kind is what sort of tool a rule is about. It fixes which field of the tool's input
// a rule compares, so the agent cannot choose the target by adding keys: a Write is
// matched on its file_path even when its input also carries a "command".
type Kind string

// Tool kinds.
const (
	// KindShell: a shell command line (Claude's Bash, Codex's shell), field "command",
	// matched per simple command (internal/shell).
	KindShell Kind = "shell"
	// KindFile: a file tool (Read, Write, Edit, MultiEdit, NotebookEdit), its path field
	// made absolute against the working directory and cleaned.
	KindFile Kind = "file"
	// KindFetch: a URL fetch (WebFetch), field "url", compared as a parsed URL.
	KindFetch Kind = "fetch"
	// KindTool: every other tool, MCP tools among them: a rule compares one named
	// argument (match.argument), or else the whole input as canonical JSON (so an exact
	// rule pins every argument).
	KindTool Kind = "tool"
)

// kinds maps the tool names agents give to their kind and target field. Names not
// listed are KindTool.
var kinds = map[string]struct {
	kind  Kind
	field string
}{
	"Bash":         {KindShell, "command"},
	"shell":        {KindShell, "command"}, // Codex app-server command approvals
	"Read":         {KindFile, "file_path"},
	"Write":        {KindFile, "file_path"},
	"Edit":         {KindFile, "file_path"},
	"MultiEdit":    {KindFile, "file_path"},
	"NotebookEdit": {KindFile, "notebook_path"},
	"WebFetch":     {KindFetch, "url"},
}

// candidateKeys are the input fields some tool kind treats as its target. A request
// whose input carries one besides its own kind's field is never allowed by a rule:
// the rule would vouch for one target while the tool might act on another.
var candidateKeys = []string{"command", "cmd", "file_path", "notebook_path", "path", "url", "uri"}

// KindOfTool is the rules' kind of an agent's tool kind (models.HookTool.Kind).
func KindOfTool(k models.ToolKind) Kind {
	switch k {
	case models.KindShell:
		return KindShell
	case models.KindEdit, models.KindWrite, models.KindRead:
		return KindFile
	case models.KindFetch:
		return KindFetch
	}
	return KindTool
}

// KindOf returns tool's kind and the input field its rules compare ("" for KindTool).
func KindOf(tool string) (Kind, string) {
	if k, ok := kinds[tool]; ok {
		return k.kind, k.field
	}
	return KindTool, ""
}

// OfferPattern is what "approve and make a rule…" pre-fills for a request: the value of
// the tool's own target field, or its input as canonical JSON for other tools.
func OfferPattern(tool string, input map[string]any) string {
	if _, field := KindOf(tool); field != "" {
		s, _ := input[field].(string)
		return s
	}
	return canonicalJSON(input)
}

// strayTarget reports whether input carries a target-like field other than own.
func strayTarget(input map[string]any, own string) bool {
	for _, k := range candidateKeys {
		if k == own {
			continue
		}
		if _, ok := input[k]; ok {
			return true
		}
	}
	return false
}

// absPath makes p absolute against cwd and cleans it, so "/repo/../home/x" is
// compared as "/home/x". A relative path with no absolute cwd has no known target.
func absPath(p, cwd string) (string, bool) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", false
	}
	if !strings.HasPrefix(p, "/") {
		if !strings.HasPrefix(cwd, "/") {
			return "", false
		}
		p = cwd + "/" + p
	}
	return path.Clean(p), true
}

// canonicalJSON renders input as compact JSON with sorted keys ("{}" for nil).
func canonicalJSON(input map[string]any) string {
	if input == nil {
		input = map[string]any{}
	}
	raw, _ := json.Marshal(input)
	var generic any
	_ = json.Unmarshal(raw, &generic)
	out, _ := json.Marshal(generic)
	return string(out)
}
