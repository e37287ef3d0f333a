// Package opencode translates OpenCode's permission requests (`opencode serve`,
// 1.18) into prompt params and human verdicts back into the reply OpenCode's server
// reads. Pure functions only.
//
// OpenCode has no hook command: its server publishes a permission.asked event on its
// event stream and waits, without limit, for POST /permission/:id/reply. The bridge
// (`gatehouse bridge opencode`) posts each event's properties here, adding what the
// event does not say: the top-level session of a sub-agent's session
// (rootSessionID), the session's directory and the re-attach id. OpenCode's
// permissions are mapped onto the names rules and prompts know (bash is Bash with its
// command, edit Edit, write Write, read Read, webfetch WebFetch, each with Claude's
// field names), so a rule like Bash(git status:*) and the risk assessment apply to
// OpenCode as they do to Claude Code. Unknown fields are ignored.
package opencode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Events of OpenCode's event stream Gatehouse reads.
const (
	// EventAsked is a permission request: it parks.
	EventAsked = "permission.asked"
	// EventReplied says a request was answered (in OpenCode's own UI, or by the
	// bridge): its prompt, if still pending, is withdrawn.
	EventReplied = "permission.replied"
)

// Origin is the prompt origin of OpenCode's permission requests.
const Origin = "opencode"

// Vendor is the agent name prompts show.
const Vendor = "OpenCode"

// SubAgentType is the type a sub-agent's child session is titled with
// ("subagent:<OpenCode session id>").
const SubAgentType = "subagent"

// OpenCode's permission names (what its tools ask for).
const (
	PermissionBash              = "bash"
	PermissionEdit              = "edit"
	PermissionWrite             = "write"
	PermissionRead              = "read"
	PermissionWebFetch          = "webfetch"
	PermissionExternalDirectory = "external_directory"
)

// Replies OpenCode accepts at POST /permission/:id/reply.
const (
	ReplyOnce   = "once"
	ReplyAlways = "always"
	ReplyReject = "reject"
)

// PreviewLimit is the longest content_preview, in characters.
const PreviewLimit = 1024

// messageArgLimit is the longest command or path shown in the prompt's one-line message.
const messageArgLimit = 120

// Payload is a permission.asked event's properties, as the bridge posts them.
type Payload struct {
	ID         string          `json:"id"`
	SessionID  string          `json:"sessionID"`
	Permission string          `json:"permission"`
	Patterns   []string        `json:"patterns"`
	Metadata   json.RawMessage `json:"metadata"`
	Always     []string        `json:"always"`
	Tool       *struct {
		MessageID string `json:"messageID"`
		CallID    string `json:"callID"`
	} `json:"tool"`

	// RootSessionID is the top-level OpenCode session of a sub-agent's session
	// (OpenCode sessions name their parentID; the bridge follows it up). Empty or
	// equal to SessionID for a top-level session.
	RootSessionID string `json:"rootSessionID"`
	// Directory is the session's working directory, as the bridge found it.
	Directory string `json:"directory"`
	// ElicitationID is the re-attach id the bridge derives from the permission id.
	ElicitationID string `json:"_gatehouse_elicitation_id"`

	meta map[string]any
}

// Decode reads a permission.asked event's properties — or the whole event,
// {"type":"permission.asked","properties":{…}}. It insists on the fields OpenCode
// always sends (id, sessionID, permission, a patterns list, a metadata object) and on
// what each mapped permission is judged by: a shell command's metadata.command, a
// file's path, a fetch's URL. Every refusal names the field.
func Decode(body []byte) (*Payload, error) {
	body, err := properties(body, EventAsked)
	if err != nil {
		return nil, err
	}
	p := &Payload{}
	if err := hookkit.Decode(body, p); err != nil {
		return nil, err
	}
	for field, v := range map[string]string{"id": p.ID, "sessionID": p.SessionID, "permission": p.Permission} {
		if strings.TrimSpace(v) == "" {
			return nil, fmt.Errorf("%s is required", field)
		}
	}
	if p.Patterns == nil {
		return nil, errors.New("patterns must be a list of strings")
	}
	if p.meta, err = object("metadata", p.Metadata); err != nil {
		return nil, err
	}
	if err := p.checkTarget(); err != nil {
		return nil, err
	}
	return p, nil
}

// properties returns an event envelope's properties when body is one (it has a
// "type"), checking the type is want; any other body is returned as it is.
func properties(body []byte, want string) ([]byte, error) {
	var env struct {
		Type       *string         `json:"type"`
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(body, &env) != nil || env.Type == nil {
		return body, nil
	}
	if *env.Type != want {
		return nil, fmt.Errorf("type: Gatehouse does not handle %q events here; send %s or %s", hookkit.Clip(*env.Type, 64), EventAsked, EventReplied)
	}
	if len(env.Properties) == 0 || env.Properties[0] != '{' {
		return nil, errors.New("properties must be an object")
	}
	return env.Properties, nil
}

// object decodes a JSON object (numbers kept as sent).
func object(field string, raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("%s must be an object", field)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("%s must be an object", field)
	}
	return m, nil
}

// checkTarget insists on what a mapped permission is judged by.
func (p *Payload) checkTarget() error {
	switch p.Kind() {
	case models.KindShell:
		if strings.TrimSpace(p.Command()) == "" {
			return errors.New("metadata.command must be a non-empty string")
		}
	case models.KindEdit, models.KindWrite, models.KindRead:
		if strings.TrimSpace(p.Path()) == "" {
			return errors.New("metadata.filepath (or patterns[0]) must be a non-empty string")
		}
	case models.KindFetch:
		if strings.TrimSpace(p.URL()) == "" {
			return errors.New("metadata.url (or patterns[0]) must be a non-empty string")
		}
	}
	return nil
}

// Command is a bash request's command line.
func (p *Payload) Command() string { return str(p.meta["command"]) }

// Path is a file request's path: metadata.filepath (absolute), else the first pattern.
func (p *Payload) Path() string { return p.metaOrPattern("filepath") }

// URL is a webfetch request's URL: metadata.url, else the first pattern.
func (p *Payload) URL() string { return p.metaOrPattern("url") }

func (p *Payload) metaOrPattern(key string) string {
	if s := str(p.meta[key]); strings.TrimSpace(s) != "" {
		return s
	}
	if len(p.Patterns) > 0 {
		return p.Patterns[0]
	}
	return ""
}

// Kind is what the request does.
func (p *Payload) Kind() models.ToolKind { return KindOf(p.Permission) }

// KindOf is the kind of an OpenCode permission. external_directory (a tool reaching
// outside the project) is a kind of its own to rules: "other".
func KindOf(permission string) models.ToolKind {
	switch permission {
	case PermissionBash:
		return models.KindShell
	case PermissionEdit:
		return models.KindEdit
	case PermissionWrite:
		return models.KindWrite
	case PermissionRead:
		return models.KindRead
	case PermissionWebFetch:
		return models.KindFetch
	}
	return models.KindOther
}

// RuleTool is the tool name rules and prompts know the request by: Claude's name for
// the permissions OpenCode shares with it, OpenCode's own for the rest.
func (p *Payload) RuleTool() string {
	switch p.Permission {
	case PermissionBash:
		return "Bash"
	case PermissionEdit:
		return "Edit"
	case PermissionWrite:
		return "Write"
	case PermissionRead:
		return "Read"
	case PermissionWebFetch:
		return "WebFetch"
	}
	return p.Permission
}

// Input is what the request is about, for prompts and rules, in RuleTool's fields:
// a command alone, a file's path as file_path, a URL as url; any other permission's
// patterns (and an external_directory's directories). Nothing else goes in: a rule
// that allows one target must not meet a second one (a command beside a path).
func (p *Payload) Input() map[string]any {
	switch p.Kind() {
	case models.KindShell:
		return map[string]any{"command": p.Command()}
	case models.KindEdit, models.KindWrite, models.KindRead:
		return map[string]any{"file_path": p.Path()}
	case models.KindFetch:
		return map[string]any{"url": p.URL()}
	}
	in := map[string]any{"patterns": p.patterns()}
	if p.Permission == PermissionExternalDirectory {
		if dirs, ok := p.meta["directories"].([]any); ok {
			in["directories"] = dirs
		}
	}
	return in
}

func (p *Payload) patterns() []any {
	out := make([]any, 0, len(p.Patterns))
	for _, s := range p.Patterns {
		out = append(out, s)
	}
	return out
}

// Root is the OpenCode session the request's Gatehouse session is keyed by: the
// top-level one; SubAgent is the sub-agent's own session ("" for a top-level one).
func (p *Payload) Root() (root, subAgent string) {
	if p.RootSessionID == "" || p.RootSessionID == p.SessionID {
		return p.SessionID, ""
	}
	return p.RootSessionID, p.SessionID
}

// Params builds the prompt params.
func (p *Payload) Params() map[string]any {
	input := p.Input()
	params := map[string]any{
		"mode":                "form",
		"phase":               "pre_tool_use",
		"policy_name":         "opencode_permission",
		"vendor":              Vendor,
		"tool_name":           p.RuleTool(),
		"tool_input":          input,
		"cwd":                 p.Directory,
		"opencode_permission": p.Permission,
		"opencode_request_id": p.ID,
		"opencode_session_id": p.SessionID,
		"patterns":            p.patterns(),
		"allow_remember":      len(p.Always) > 0,
	}
	if len(p.Always) > 0 {
		params[models.ParamRememberSuggestion] = map[string]any{
			"title": "Always allow " + strings.Join(p.Always, ", "),
			"where": "while this OpenCode server runs (OpenCode keeps it in memory)",
		}
		params["always"] = append([]string(nil), p.Always...)
	}
	switch kind := p.Kind(); kind {
	case models.KindShell:
		cmd := p.Command()
		params["message"] = Vendor + " wants to run **" + hookkit.Clip(hookkit.OneLine(cmd), messageArgLimit) + "**"
		params["command"] = cmd
		params["content_preview"] = hookkit.Clip(cmd, PreviewLimit)
	case models.KindEdit, models.KindWrite, models.KindRead, models.KindFetch:
		verb := map[models.ToolKind]string{models.KindEdit: "edit", models.KindWrite: "write", models.KindRead: "read", models.KindFetch: "fetch"}[kind]
		target := p.Path()
		if kind == models.KindFetch {
			target = p.URL()
		}
		params["message"] = fmt.Sprintf("%s wants to %s **%s**", Vendor, verb, hookkit.Clip(hookkit.OneLine(target), messageArgLimit))
		params["content_preview"] = hookkit.Clip(target, PreviewLimit)
		if d := str(p.meta["diff"]); d != "" {
			params["diff"] = d
			params["content_preview"] = hookkit.Clip(d, PreviewLimit)
		}
	case models.KindOther:
		what := strings.Join(p.Patterns, ", ")
		if p.Permission == PermissionExternalDirectory {
			params["message"] = fmt.Sprintf("%s wants to reach outside the project: `%s`", Vendor, codeSpan(what))
		} else {
			params["message"] = fmt.Sprintf("%s wants to use **%s** on `%s`", Vendor, hookkit.Clip(p.Permission, 64), codeSpan(what))
		}
		preview := p.Permission + "(" + what + ")"
		if cmd := p.Command(); cmd != "" {
			// What the tool would do there (a bash command reaching out): shown, not matched.
			params["command"] = cmd
			preview += " for " + cmd
		}
		params["content_preview"] = hookkit.Clip(preview, PreviewLimit)
	}
	return params
}

// Answer builds the reply body for verdict v, given by by: {"reply":"once"}, or
// "always" when the person chose to remember it (OpenCode then lets the request's
// "always" patterns through until it restarts), or {"reply":"reject","message":…},
// which OpenCode hands the model as the tool's error.
func (p *Payload) Answer(v models.Verdict, by string) map[string]any {
	if v.Accepted() {
		if _, remember, err := models.RememberOf(v.Content); remember && err == nil && len(p.Always) > 0 {
			return map[string]any{"reply": ReplyAlways}
		}
		return map[string]any{"reply": ReplyOnce}
	}
	return Reject(v.DenyReason(by))
}

// Reject is the reply that refuses a request, telling the model why.
func Reject(message string) map[string]any {
	return map[string]any{"reply": ReplyReject, "message": message}
}

// codeSpan is s on one line, clipped, fit for a markdown code span (patterns are
// globs, whose stars would read as emphasis elsewhere).
func codeSpan(s string) string {
	return strings.ReplaceAll(hookkit.Clip(hookkit.OneLine(s), messageArgLimit), "`", "'")
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
