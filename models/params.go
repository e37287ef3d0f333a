package models

import "encoding/json"

// ParamToolKind is the param that records a parked tool call's kind (a ToolKind, as
// its agent classified it), so the approval page, the inbox and notifications show
// the call by what it does, not by the agent's name for the tool. Prompts stored
// before it was written lack it.
const ParamToolKind = "tool_kind"

// ParamRememberSuggestion is the param by which an agent whose answer can keep a
// grant in one way only (OpenCode's "always", an ACP allow_always option) offers it
// for "approve and remember": {"title": what is granted, "where": where and for how
// long the agent keeps it}. Together with "allow_remember": true the approval page
// offers it as the one suggestion, index 0.
const ParamRememberSuggestion = "remember_suggestion"

// Params are a prompt's published params (the JSON the request event carries): the
// keys Gatehouse itself reads, typed, and every key as stored in All — each origin adds
// its own (tool_input, permission_suggestions, requestedSchema, …) and streams publish
// them unchanged. Read them with Elicitation.DecodeParams, the one place that decodes
// the stored JSON.
type Params struct {
	Mode           string
	Message        string
	URL            string
	ApprovePath    string
	Phase          string
	PolicyName     string
	ToolName       string
	Vendor         string
	ContentPreview string
	Command        string
	Cwd            string
	// CodexFingerprint is the hash of the Codex request a prompt was opened for.
	CodexFingerprint string
	// All is every key as stored (never nil).
	All map[string]any
}

// DecodeParams reads the stored params. Unreadable params (none are written) read as
// empty, so a damaged row is still shown and decided rather than failing a page.
func (e *Elicitation) DecodeParams() Params {
	var all map[string]any
	_ = json.Unmarshal(e.Params, &all)
	if all == nil {
		all = map[string]any{}
	}
	s := func(k string) string { v, _ := all[k].(string); return v }
	return Params{
		Mode: s("mode"), Message: s("message"), URL: s("url"), ApprovePath: s("approve_path"),
		Phase: s("phase"), PolicyName: s("policy_name"), ToolName: s("tool_name"), Vendor: s("vendor"),
		ContentPreview: s("content_preview"), Command: s("command"), Cwd: s("cwd"),
		CodexFingerprint: s("codex_fingerprint"), All: all,
	}
}
