package mcp

import (
	"encoding/json"
)

// Elicitation modes.
const (
	ModeForm = "form"
	ModeURL  = "url"
)

// ApprovalSchema is the requestedSchema of a policy approval asked in form mode: one
// required boolean. The client's answer is advisory only — the server's own record
// of the prompt decides.
func ApprovalSchema() map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{"approved": map[string]any{"type": "boolean"}},
		"required":   []string{"approved"},
	}
}

// Approval describes a policy ASK handed back to an MCP client.
type Approval struct {
	ElicitationID string
	Message       string
	// URL is the absolute approval page; empty asks in form mode.
	URL string
}

// ApprovePath is the approval page of a prompt.
func ApprovePath(sessionID, elicitationID string) string {
	return "/approve/" + sessionID + "/" + elicitationID
}

// ElicitParams are the elicitation/create params of an approval: URL mode is exactly
// {mode, message, url} — the 2026-07-28 shape, which real clients insist on (no
// requestedSchema, no elicitationId) — and form mode asks for the approved boolean.
func (a Approval) ElicitParams() map[string]any {
	if a.URL != "" {
		return map[string]any{"mode": ModeURL, "message": a.Message, "url": a.URL}
	}
	return map[string]any{"mode": ModeForm, "message": a.Message, "requestedSchema": ApprovalSchema()}
}

// InputRequiredResult is the multi round-trip result of §6.5:
//
//	{"resultType":"input_required","inputRequests":{E:{"method":"elicitation/create",
//	 "params":{"mode":"url","message":M,"url":"https://…/approve/<sid>/<E>"}}},
//	 "requestState":"…"}
func InputRequiredResult(a Approval, requestState string) map[string]any {
	return map[string]any{"resultType": "input_required", "inputRequests": ApprovalInputRequests(a), "requestState": requestState}
}

// URLRequiredError is the -32042 URLElicitationRequiredError that asks a client on a
// revision before 2026-07-28, which declared URL mode, to have its user open the
// approval page and then send the same call again.
func URLRequiredError(a Approval) *Error {
	return &Error{
		Code:    CodeURLElicitationRequired,
		Message: "A person must approve this call in Gatehouse first: open " + a.URL + ", then retry the call",
		Data: map[string]any{"elicitations": []any{map[string]any{
			"mode": ModeURL, "message": a.Message, "url": a.URL, "elicitationId": a.ElicitationID,
		}}},
	}
}

// MissingCapabilityError (-32021) refuses to ask a client through an input kind it
// did not declare.
func MissingCapabilityError() *Error {
	return &Error{
		Code:    CodeMissingCapability,
		Message: "This call needs a person's approval, and the client declared no elicitation capability (form or url) to ask through",
		Data:    map[string]any{"requiredCapabilities": map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}},
	}
}

// Notification is a JSON-RPC notification the server sends on a held response.
type Notification struct {
	Method string
	Params any
}

// MarshalJSON writes {"jsonrpc":"2.0","method":…,"params":…}.
func (n Notification) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", n.Method, n.Params})
}

// Progress is notifications/progress for the request that asked with token.
func Progress(token json.RawMessage, progress int, message string) Notification {
	return Notification{Method: "notifications/progress", Params: map[string]any{
		"progressToken": token, "progress": progress, "message": message,
	}}
}

// Complete marks a result as final for clients on 2026-07-28 or later, which require
// resultType on every result that is not input_required.
func Complete(c Client, result map[string]any) map[string]any {
	if c.Latest() {
		if result == nil {
			result = map[string]any{}
		}
		result["resultType"] = "complete"
	}
	return result
}
