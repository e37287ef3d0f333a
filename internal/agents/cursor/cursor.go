// Package cursor translates Cursor's agent hooks — beforeShellExecution,
// beforeMCPExecution and the generic preToolUse — into prompt params, and verdicts
// back into the answer Cursor reads: {"permission":"allow"|"deny","user_message",
// "agent_message"}. Pure functions only.
//
// No Cursor client runs where Gatehouse is tested, so the payload shapes here are
// those of Cursor's published hook reference. Unknown fields are ignored.
package cursor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// The hook events Gatehouse parks.
const (
	EventShell   = "beforeShellExecution"
	EventMCP     = "beforeMCPExecution"
	EventPreTool = "preToolUse"
)

// events names them, for error messages.
const events = EventShell + ", " + EventMCP + " or " + EventPreTool

// Origin is the prompt origin of every event: one origin, so a preToolUse and a
// beforeShellExecution for the same command share one prompt (Key) and a person
// answers once.
const Origin = "cursor"

// IDPrefix starts every prompt id of this agent (ids.Deterministic(IDPrefix, Key)).
const IDPrefix = "elicit_cursor_"

// Vendor is the agent's name prompts show.
const Vendor = "Cursor"

// The tool names prompts and rules see: a shell command is Bash, as Claude Code's
// and the Codex CLI's are, so one rule reads the same for every agent.
const (
	ToolBash  = "Bash"
	ToolRead  = "Read"
	ToolWrite = "Write"
	ToolEdit  = "Edit"
)

// PreviewLimit is the longest content_preview, in characters.
const PreviewLimit = 1024

// messageArgLimit is the longest command shown in the prompt's one-line message.
const messageArgLimit = 120

// Payload is the subset of a Cursor hook body Gatehouse reads.
type Payload struct {
	HookEventName  string          `json:"hook_event_name"`
	ConversationID string          `json:"conversation_id"`
	GenerationID   string          `json:"generation_id"`
	WorkspaceRoots []string        `json:"workspace_roots"`
	Model          string          `json:"model"`
	Command        string          `json:"command"` // beforeShellExecution; a stdio MCP server's command
	Cwd            string          `json:"cwd"`
	URL            string          `json:"url"` // an HTTP MCP server
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`

	tool  string
	kind  models.ToolKind
	input map[string]any
}

// Decode reads a hook body for event ("": its hook_event_name).
func Decode(event string, body []byte) (*Payload, error) {
	p := &Payload{}
	if err := hookkit.Decode(body, p); err != nil {
		return nil, err
	}
	if event != "" {
		p.HookEventName = event
	}
	if strings.TrimSpace(p.ConversationID) == "" {
		return nil, errors.New("conversation_id is required")
	}
	switch p.HookEventName {
	case EventShell:
		if strings.TrimSpace(p.Command) == "" {
			return nil, errors.New("command must be a non-empty string")
		}
		p.tool, p.kind, p.input = ToolBash, models.KindShell, map[string]any{"command": p.Command}
	case EventMCP:
		input, err := objectOrString(p.ToolName, p.ToolInput)
		if err != nil {
			return nil, err
		}
		p.tool, p.kind, p.input = mcpName(p.ToolName), models.KindMCP, input
	case EventPreTool:
		input, err := objectOrString(p.ToolName, p.ToolInput)
		if err != nil {
			return nil, err
		}
		p.tool, p.kind = toolOf(p.ToolName)
		p.input = input
		if p.kind == models.KindShell {
			cmd, _ := input["command"].(string)
			if strings.TrimSpace(cmd) == "" {
				return nil, errors.New("tool_input.command must be a non-empty string")
			}
			p.input = map[string]any{"command": cmd}
		}
	case "":
		return nil, fmt.Errorf("hook_event_name is required (%s)", events)
	default:
		return nil, fmt.Errorf("hook_event_name: Gatehouse does not handle %q hooks; send only %s", hookkit.Clip(p.HookEventName, 64), events)
	}
	return p, nil
}

// objectOrString reads tool_input, which Cursor sends as an object or, for MCP tools,
// as a string holding one.
func objectOrString(tool string, raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errors.New("tool_input must be an object")
		}
		raw = []byte(s)
	}
	return hookkit.ToolInput(tool, raw)
}

// toolOf maps a preToolUse tool_name onto the names and kinds rules and prompts know.
func toolOf(name string) (string, models.ToolKind) {
	switch name {
	case "Shell", "Bash", "run_terminal_cmd":
		return ToolBash, models.KindShell
	case "Read", "read_file":
		return ToolRead, models.KindRead
	case "Write", "write", "Delete", "delete_file":
		return ToolWrite, models.KindWrite
	case "Edit", "StrReplace", "MultiEdit", "edit_file", "search_replace":
		return ToolEdit, models.KindEdit
	}
	if strings.HasPrefix(name, "MCP:") {
		return mcpName(name), models.KindMCP
	}
	return name, models.KindOther
}

// mcpName names an MCP tool as Claude Code does (mcp__server__tool) when Cursor
// names its server ("MCP:server:tool"), so a rule for one reads the same.
func mcpName(name string) string {
	if rest, ok := strings.CutPrefix(name, "MCP:"); ok {
		if server, tool, ok := strings.Cut(rest, ":"); ok && server != "" && tool != "" {
			return "mcp__" + server + "__" + tool
		}
		return rest
	}
	return name
}

// Tool is the request as rules see it.
func (p *Payload) Tool() *models.HookTool {
	return &models.HookTool{Name: p.tool, Kind: p.kind, Input: p.input}
}

// Dir is the working directory: the command's, else the first workspace root.
func (p *Payload) Dir() string {
	if p.Cwd != "" && p.HookEventName == EventShell {
		return p.Cwd
	}
	if len(p.WorkspaceRoots) > 0 {
		return p.WorkspaceRoots[0]
	}
	return p.Cwd
}

// Key identifies the request a prompt is about — the Gatehouse session, Cursor's
// conversation and generation, the tool and its input, not the event — so Cursor's
// preToolUse and beforeShellExecution for one command share a prompt.
func (p *Payload) Key(sessionID string) []byte {
	b, _ := json.Marshal([]any{sessionID, p.ConversationID, p.GenerationID, p.tool, p.input})
	return b
}

// Params builds the prompt params.
func (p *Payload) Params() map[string]any {
	params := map[string]any{
		"mode":           "form",
		"phase":          "pre_tool_use",
		"policy_name":    "cursor_hook",
		"vendor":         Vendor,
		"allow_remember": false, // Cursor's answer has nothing to remember a grant with
		"tool_name":      p.tool,
		"tool_input":     p.input,
		"cwd":            p.Dir(),
		"cursor_event":   p.HookEventName,
	}
	switch p.kind {
	case models.KindShell:
		cmd, _ := p.input["command"].(string)
		params["message"] = "Cursor wants to run **" + hookkit.Clip(hookkit.OneLine(cmd), messageArgLimit) + "**"
		params["command"] = cmd
		params["content_preview"] = hookkit.Clip(cmd, PreviewLimit)
	default:
		raw, _ := json.Marshal(p.input)
		params["message"] = fmt.Sprintf("Cursor wants to call **%s**", hookkit.Clip(p.tool, messageArgLimit))
		params["content_preview"] = hookkit.Clip(p.tool+"("+string(raw)+")", PreviewLimit)
	}
	for k, v := range map[string]string{"cursor_conversation_id": p.ConversationID, "cursor_generation_id": p.GenerationID,
		"model": p.Model, "mcp_server_url": p.URL} {
		if v != "" {
			params[k] = v
		}
	}
	if p.HookEventName == EventMCP && p.Command != "" {
		params["mcp_server_command"] = p.Command
	}
	return params
}

// Answer is Cursor's answer for verdict v, given by by: allow, or deny with the reason
// for the person (user_message) and the model (agent_message).
func (p *Payload) Answer(v models.Verdict, by string) map[string]any {
	if v.Accepted() {
		return map[string]any{"permission": "allow"}
	}
	return deny(v.DenyReason(by))
}

func deny(message string) map[string]any {
	return map[string]any{"permission": "deny", "user_message": message, "agent_message": message}
}
