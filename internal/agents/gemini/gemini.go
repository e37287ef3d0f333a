// Package gemini translates the Gemini CLI's BeforeTool command hook
// (@google/gemini-cli 0.61) into prompt params and human verdicts back into the hook
// output Gemini reads. Pure functions only.
//
// The payload takes Claude Code's shape (session_id, cwd, hook_event_name, tool_name,
// tool_input) with Gemini's own tool names, which are mapped onto the names rules and
// prompts know: run_shell_command is Bash with its command, replace is Edit,
// write_file is Write, read_file is Read, an MCP tool is mcp__<server>__<tool> (from
// the payload's mcp_context). So a rule like Bash(git status:*) and the risk
// assessment apply to Gemini as they do to Claude Code. Unknown payload fields are
// ignored.
//
// The answer is {"decision":"allow"} or {"decision":"deny","reason":…} (the model
// reads "Tool execution blocked: <reason>"); never "ask", which hangs a headless
// Gemini.
package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// EventBeforeTool is the hook event Gatehouse parks: it fires before every tool call
// its matcher selects, also under --yolo.
const EventBeforeTool = "BeforeTool"

// Origin is the prompt origin of Gemini's hook.
const Origin = "gemini_cli"

// Vendor is the agent name prompts show.
const Vendor = "Gemini CLI"

// Gemini's tool names (what the model is offered and the hook carries).
const (
	ToolShell         = "run_shell_command"
	ToolReplace       = "replace"
	ToolWriteFile     = "write_file"
	ToolReadFile      = "read_file"
	ToolReadManyFiles = "read_many_files"
	ToolListDirectory = "list_directory"
	ToolGlob          = "glob"
	ToolGrep          = "grep_search"
	ToolWebFetch      = "web_fetch"
)

// mcpPrefix starts the name Gemini gives an MCP server's tool (mcp_<server>_<tool>).
const mcpPrefix = "mcp_"

// PreviewLimit is the longest content_preview, in characters.
const PreviewLimit = 1024

// messageArgLimit is the longest command or path shown in the prompt's one-line message.
const messageArgLimit = 120

// MCPContext is what Gemini says about the MCP server of an MCP tool call.
type MCPContext struct {
	ServerName string `json:"server_name"`
	ToolName   string `json:"tool_name"`
	Command    string `json:"command"`
	URL        string `json:"url"`
}

// Payload is the subset of a BeforeTool hook body Gatehouse reads.
type Payload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	MCPContext     *MCPContext     `json:"mcp_context"`
	// ElicitationID is the re-attach id `gatehouse hook gemini` adds.
	ElicitationID string `json:"_gatehouse_elicitation_id"`

	input map[string]any // tool_input as Gemini sent it
}

// Decode reads a hook body of event ("": the payload's hook_event_name): BeforeTool, a
// session_id, a tool_name, an object tool_input with the field each mapped tool is
// judged by (a shell command, a file path) and, for an MCP tool, an mcp_context
// naming its server and tool. Every refusal names the field.
func Decode(event string, body []byte) (*Payload, error) {
	p := &Payload{}
	if err := hookkit.Decode(body, p); err != nil {
		return nil, err
	}
	if event != "" {
		p.HookEventName = event
	}
	switch p.HookEventName {
	case EventBeforeTool:
	case "":
		return nil, fmt.Errorf("hook_event_name is required (%s)", EventBeforeTool)
	default:
		return nil, fmt.Errorf("hook_event_name: Gatehouse does not handle %q hooks; send only %s", hookkit.Clip(p.HookEventName, 64), EventBeforeTool)
	}
	if strings.TrimSpace(p.SessionID) == "" {
		return nil, errors.New("session_id is required")
	}
	var err error
	if p.input, err = hookkit.ToolInput(p.ToolName, p.ToolInput); err != nil {
		return nil, err
	}
	need := ""
	switch p.ToolName {
	case ToolShell:
		need = "command"
	case ToolReplace, ToolWriteFile, ToolReadFile:
		need = "file_path"
	}
	if need != "" {
		if s, ok := p.input[need].(string); !ok || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("tool_input.%s must be a non-empty string", need)
		}
	}
	if m := p.MCPContext; m != nil && (strings.TrimSpace(m.ServerName) == "" || strings.TrimSpace(m.ToolName) == "") {
		return nil, errors.New("mcp_context must name its server_name and tool_name")
	}
	return p, nil
}

// Kind is what the tool does.
func (p *Payload) Kind() models.ToolKind {
	if p.MCPContext != nil {
		return models.KindMCP
	}
	return KindOf(p.ToolName)
}

// KindOf is the kind of a Gemini CLI tool.
func KindOf(tool string) models.ToolKind {
	switch tool {
	case ToolShell:
		return models.KindShell
	case ToolReplace:
		return models.KindEdit
	case ToolWriteFile:
		return models.KindWrite
	case ToolReadFile, ToolReadManyFiles, ToolListDirectory, ToolGlob, ToolGrep:
		return models.KindRead
	case ToolWebFetch:
		return models.KindFetch
	}
	if strings.HasPrefix(tool, mcpPrefix) {
		return models.KindMCP
	}
	return models.KindOther
}

// RuleTool is the tool name rules and prompts know the call by: Claude's name for the
// tools Gemini shares with it (so Bash(…), Edit(…), Write(…), Read(…) and MCP rules
// match), Gemini's own name for the rest.
func (p *Payload) RuleTool() string {
	if m := p.MCPContext; m != nil {
		return "mcp__" + m.ServerName + "__" + m.ToolName
	}
	switch p.ToolName {
	case ToolShell:
		return "Bash"
	case ToolReplace:
		return "Edit"
	case ToolWriteFile:
		return "Write"
	case ToolReadFile:
		return "Read"
	}
	return p.ToolName
}

// Input is what the request is about, for prompts and rules, in the fields of
// RuleTool: a shell command alone (its description is the model's prose, shown apart
// and not part of what is approved), a file tool's fields under Claude's names, any
// other tool's input as sent.
func (p *Payload) Input() map[string]any {
	a := p.input
	switch p.ToolName {
	case ToolShell:
		return map[string]any{"command": str(a["command"])}
	case ToolReplace:
		in := map[string]any{"file_path": str(a["file_path"]), "old_string": str(a["old_string"]), "new_string": str(a["new_string"])}
		if all, _ := a["allow_multiple"].(bool); all {
			in["replace_all"] = true
		}
		return in
	case ToolWriteFile:
		return map[string]any{"file_path": str(a["file_path"]), "content": str(a["content"])}
	case ToolReadFile:
		in := map[string]any{"file_path": str(a["file_path"])}
		for _, k := range []string{"start_line", "end_line"} {
			if v, ok := a[k]; ok {
				in[k] = v
			}
		}
		return in
	}
	return a
}

// WorkDir is where the call acts: the session's working directory, or for a shell
// command given a dir_path, that directory — so rules scoped to a directory and the
// risk of a relative path judge the directory the command really runs in.
func (p *Payload) WorkDir() string {
	dir := str(p.input["dir_path"])
	if p.ToolName != ToolShell || strings.TrimSpace(dir) == "" {
		return p.Cwd
	}
	if path.IsAbs(dir) || p.Cwd == "" {
		return path.Clean(dir)
	}
	return path.Join(p.Cwd, dir)
}

// Params builds the prompt params.
func (p *Payload) Params() map[string]any {
	input := p.Input()
	params := map[string]any{
		"mode":        "form",
		"phase":       "pre_tool_use",
		"policy_name": "gemini_cli_hook",
		"vendor":      Vendor,
		// Gemini's hook answers carry a decision only: nothing to remember a grant with.
		"allow_remember": false,
		"tool_name":      p.RuleTool(),
		"tool_input":     input,
		"cwd":            p.WorkDir(),
		"gemini_event":   p.HookEventName,
		"gemini_tool":    p.ToolName,
	}
	filePath := str(input["file_path"])
	switch kind := p.Kind(); {
	case kind == models.KindShell:
		cmd := str(input["command"])
		params["message"] = Vendor + " wants to run **" + hookkit.Clip(hookkit.OneLine(cmd), messageArgLimit) + "**"
		params["command"] = cmd
		params["content_preview"] = hookkit.Clip(cmd, PreviewLimit)
	case filePath != "":
		verb := map[models.ToolKind]string{models.KindEdit: "edit", models.KindWrite: "write", models.KindRead: "read"}[kind]
		params["message"] = fmt.Sprintf("%s wants to %s **%s**", Vendor, verb, hookkit.Clip(hookkit.OneLine(filePath), messageArgLimit))
		params["content_preview"] = hookkit.Clip(p.previewJSON(input), PreviewLimit)
	default:
		params["message"] = fmt.Sprintf("%s wants to call **%s**", Vendor, hookkit.Clip(hookkit.OneLine(p.RuleTool()), messageArgLimit))
		params["content_preview"] = hookkit.Clip(p.previewJSON(input), PreviewLimit)
	}
	// The model's own words for why: a command's description, an edit's instruction.
	if k := map[string]string{ToolShell: "description", ToolReplace: "instruction"}[p.ToolName]; k != "" {
		if d := strings.TrimSpace(str(p.input[k])); d != "" {
			params["reason"] = d
		}
	}
	if m := p.MCPContext; m != nil {
		params["mcp_server"] = m.ServerName
		params["mcp_tool"] = m.ToolName
	}
	if p.SessionID != "" {
		params["gemini_session_id"] = p.SessionID
	}
	return params
}

func (p *Payload) previewJSON(input map[string]any) string {
	raw, _ := json.Marshal(input)
	return p.RuleTool() + "(" + string(raw) + ")"
}

// Answer builds the hook output for verdict v, given by by: {"decision":"allow"}, or
// {"decision":"deny","reason":…} whose reason reaches the model. Never "ask": a
// headless Gemini waits on it forever.
func (p *Payload) Answer(v models.Verdict, by string) map[string]any {
	if v.Accepted() {
		return map[string]any{"decision": "allow"}
	}
	return denyAnswer(v.DenyReason(by))
}

func denyAnswer(reason string) map[string]any {
	return map[string]any{"decision": "deny", "reason": reason}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
