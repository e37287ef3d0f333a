package mcp

import (
	"encoding/json"
)

// Elicitation modes.
const (
	ModeForm = "form"
	ModeURL  = "url"
)

// ApprovalSchema is the requestedSchema of a policy approval asked through MRTR: one
// required boolean. The client's answer is advisory only — the server's own record
// of the prompt decides.
func ApprovalSchema() map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{"approved": map[string]any{"type": "boolean"}},
		"required":   []string{"approved"},
	}
}

// InputRequired describes a policy ASK to hand back to an MCP client.
type InputRequired struct {
	ElicitationID string
	Message       string
	RequestState  string
	// SessionID is the owning session; empty means no session, which is always form
	// mode (there is no approval page to link to).
	SessionID string
	// Mode is the configured elicitation mode, "url" or "form".
	Mode string
}

// ApprovePath is the approval page of a prompt.
func ApprovePath(sessionID, elicitationID string) string {
	return "/approve/" + sessionID + "/" + elicitationID
}

// InputRequiredResult is the MRTR result of §6.5:
//
//	{"resultType":"input_required","inputRequests":{E:{"method":"elicitation/create",
//	 "params":{"message":M,"mode":"url","url":"/approve/<sid>/<E>","elicitationId":E}}},
//	 "requestState":"…"}
//
// In form mode, or without a session, mode is "form", there is no url key, and
// requestedSchema asks for the approved boolean.
//
// URL mode carries no requestedSchema although SPEC §6.5's example shows one: the MCP
// specification defines URL-mode params as message, url and elicitationId, and real
// clients (the official Go SDK among them) refuse a URL elicitation that also has a
// schema. The seed's url-mode test checks only mode, url and message.
func InputRequiredResult(in InputRequired) map[string]any {
	params := map[string]any{
		"message":         in.Message,
		"requestedSchema": ApprovalSchema(),
		"mode":            ModeForm,
	}
	if in.Mode == ModeURL && in.SessionID != "" {
		delete(params, "requestedSchema")
		params["mode"] = ModeURL
		params["url"] = ApprovePath(in.SessionID, in.ElicitationID)
		params["elicitationId"] = in.ElicitationID
	}
	return map[string]any{
		"resultType": "input_required",
		"inputRequests": map[string]any{
			in.ElicitationID: map[string]any{"method": "elicitation/create", "params": params},
		},
		"requestState": in.RequestState,
	}
}

// InputRequiredResponse is the whole JSON-RPC answer carrying InputRequiredResult.
func InputRequiredResponse(id json.RawMessage, in InputRequired) Response {
	return Result(id, InputRequiredResult(in))
}
