// Package acp translates an Agent Client Protocol agent's permission requests
// (`session/request_permission`, agent → editor) into prompts, and verdicts back into
// the outcome the agent reads: {"outcome":{"outcome":"selected","optionId":…}}. The
// requests reach Gatehouse through `gatehouse acp`, which sits between the editor and
// the agent and posts each one, with the working directory and the agent's name it
// learnt from the session, to /v1/hooks/acp. Pure functions only.
package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Method is the JSON-RPC method Gatehouse parks.
const Method = "session/request_permission"

// Origin is the prompt origin.
const Origin = "acp"

// IDPrefix starts every prompt id of this agent (ids.Deterministic(IDPrefix, Key)).
const IDPrefix = "elicit_acp_"

// Vendor is the agent's name for people when the agent did not give its own.
const Vendor = "ACP agent"

// The option kinds an agent offers (PermissionOptionKind).
const (
	AllowOnce    = "allow_once"
	AllowAlways  = "allow_always"
	RejectOnce   = "reject_once"
	RejectAlways = "reject_always"
)

// PreviewLimit is the longest content_preview, in characters.
const PreviewLimit = 1024

// messageArgLimit is the longest command shown in the prompt's one-line message.
const messageArgLimit = 120

// Option is one choice the agent offers.
type Option struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// ToolCall is what the agent asks to do.
type ToolCall struct {
	ToolCallID string         `json:"toolCallId"`
	Title      string         `json:"title"`
	Kind       string         `json:"kind"`
	RawInput   map[string]any `json:"rawInput"`
	Locations  []struct {
		Path string `json:"path"`
	} `json:"locations"`
}

// Payload is a session/request_permission's params, with what `gatehouse acp` adds:
// the session's working directory and the agent's own name.
type Payload struct {
	SessionID string    `json:"sessionId"`
	ToolCall  *ToolCall `json:"toolCall"`
	Options   []Option  `json:"options"`
	Cwd       string    `json:"cwd"`
	Agent     string    `json:"agent"`

	tool  string
	kind  models.ToolKind
	input map[string]any
}

// Decode reads a permission request: a sessionId, a toolCall with its id, and options
// that include a way to allow and a way to reject.
func Decode(body []byte) (*Payload, error) {
	p := &Payload{}
	if err := hookkit.Decode(body, p); err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(p.SessionID) == "":
		return nil, errors.New("sessionId is required")
	case p.ToolCall == nil || strings.TrimSpace(p.ToolCall.ToolCallID) == "":
		return nil, errors.New("toolCall.toolCallId is required")
	case p.option(AllowOnce, AllowAlways) == nil:
		return nil, errors.New("options: no allow_once or allow_always option to answer an approval with")
	case p.option(RejectOnce, RejectAlways) == nil:
		return nil, errors.New("options: no reject_once or reject_always option to answer a rejection with")
	}
	p.tool, p.kind, p.input = toolOf(p.ToolCall)
	return p, nil
}

// option is the first option of the first of kinds the request offers.
func (p *Payload) option(kinds ...string) *Option {
	for _, k := range kinds {
		for i := range p.Options {
			if p.Options[i].Kind == k && p.Options[i].OptionID != "" {
				return &p.Options[i]
			}
		}
	}
	return nil
}

// toolOf reads what the call does from its input, as the agents of this protocol
// send it (claude-code-acp passes Claude Code's tool input through), falling back on
// the kind the agent gave it and then on its title.
func toolOf(tc *ToolCall) (string, models.ToolKind, map[string]any) {
	in := tc.RawInput
	if cmd, ok := in["command"].(string); ok && strings.TrimSpace(cmd) != "" {
		return "Bash", models.KindShell, map[string]any{"command": cmd}
	}
	file, _ := in["file_path"].(string)
	if file == "" {
		file, _ = in["path"].(string)
	}
	if file == "" && len(tc.Locations) > 0 {
		file = tc.Locations[0].Path
	}
	_, edits := in["old_string"]
	_, writes := in["content"]
	switch {
	case file != "" && (edits || tc.Kind == "edit"):
		return "Edit", models.KindEdit, withPath(in, file)
	case file != "" && (writes || tc.Kind == "delete" || tc.Kind == "move"):
		return "Write", models.KindWrite, withPath(in, file)
	case file != "" && tc.Kind == "read":
		return "Read", models.KindRead, withPath(in, file)
	}
	if u, ok := in["url"].(string); ok && tc.Kind == "fetch" {
		return "WebFetch", models.KindFetch, map[string]any{"url": u}
	}
	name := strings.Trim(hookkit.OneLine(tc.Title), "`")
	if name == "" {
		name = tc.Kind
	}
	if in == nil {
		in = map[string]any{}
	}
	return name, models.KindOther, in
}

func withPath(in map[string]any, file string) map[string]any {
	out := make(map[string]any, len(in)+1)
	for k, v := range in {
		out[k] = v
	}
	out["file_path"] = file
	return out
}

// Tool is the request as rules see it.
func (p *Payload) Tool() *models.HookTool {
	return &models.HookTool{Name: p.tool, Kind: p.kind, Input: p.input}
}

// VendorName is who asks, for people: the agent's own name when it gave one.
func (p *Payload) VendorName() string {
	if a := strings.TrimSpace(hookkit.OneLine(p.Agent)); a != "" {
		return hookkit.Clip(a, 60)
	}
	return Vendor
}

// Key identifies the request: the Gatehouse session, the agent's session and its tool
// call, so the same request posted again (a retry) finds its prompt.
func (p *Payload) Key(sessionID string) []byte {
	b, _ := json.Marshal([]any{sessionID, p.SessionID, p.ToolCall.ToolCallID})
	return b
}

// Params builds the prompt params.
func (p *Payload) Params() map[string]any {
	vendor := p.VendorName()
	params := map[string]any{
		"mode":           "form",
		"phase":          "pre_tool_use",
		"policy_name":    "acp_permission",
		"vendor":         vendor,
		"allow_remember": p.option(AllowAlways) != nil,
		"tool_name":      p.tool,
		"tool_input":     p.input,
		"cwd":            p.Cwd,
		"acp_session_id": p.SessionID,
		"acp_options":    p.Options,
	}
	if o := p.option(AllowAlways); o != nil {
		params[models.ParamRememberSuggestion] = map[string]any{
			"title": hookkit.Clip(hookkit.OneLine(o.Name), 80) + " (" + hookkit.Clip(p.tool, 60) + ")",
			"where": "as the agent keeps it (" + vendor + "'s own setting)",
		}
	}
	if p.kind == models.KindShell {
		cmd, _ := p.input["command"].(string)
		params["message"] = vendor + " wants to run **" + hookkit.Clip(hookkit.OneLine(cmd), messageArgLimit) + "**"
		params["command"] = cmd
		params["content_preview"] = hookkit.Clip(cmd, PreviewLimit)
		if d, _ := p.ToolCall.RawInput["description"].(string); strings.TrimSpace(d) != "" {
			params["reason"] = d
		}
	} else {
		raw, _ := json.Marshal(p.input)
		params["message"] = fmt.Sprintf("%s wants to use **%s**", vendor, hookkit.Clip(p.tool, messageArgLimit))
		params["content_preview"] = hookkit.Clip(p.tool+"("+string(raw)+")", PreviewLimit)
	}
	return params
}

// Answer is the outcome for verdict v: for an approval the request's allow-always
// option when the person chose to remember it, else its allow-once option (allow-always
// when it offers no once); its reject option otherwise. The protocol carries no
// reason, so a rejection's reason stays in Gatehouse.
func (p *Payload) Answer(v models.Verdict, _ string) map[string]any {
	o := p.option(RejectOnce, RejectAlways)
	if v.Accepted() {
		o = p.option(AllowOnce, AllowAlways)
		if _, remember, err := models.RememberOf(v.Content); remember && err == nil && p.option(AllowAlways) != nil {
			o = p.option(AllowAlways)
		}
	}
	return selected(o.OptionID)
}

func selected(id string) map[string]any {
	return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": id}}
}
