package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MethodServerRequestResolved is the notification Codex sends when a request it made
// was settled elsewhere (the turn ended, was interrupted, …). A bridge forwards it so
// the prompt is retired instead of waiting for a person who no longer matters.
const MethodServerRequestResolved = "serverRequest/resolved"

// Resolved is a decoded serverRequest/resolved notification.
type Resolved struct {
	ThreadID string
	// RequestID is the settled request's JSON-RPC id, typed as Decode types ids (int64
	// or string), so it compares with a prompt's codex_request_id.
	RequestID any
}

// DecodeResolved reads a serverRequest/resolved notification. ok is false (and err
// nil) when the body is some other message, which Decode then reads.
func DecodeResolved(body []byte) (r *Resolved, ok bool, err error) {
	var env struct {
		Method string `json:"method"`
		Params *struct {
			ThreadID  string          `json:"threadId"`
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.NewDecoder(bytes.NewReader(body)).Decode(&env) != nil || env.Method != MethodServerRequestResolved {
		return nil, false, nil
	}
	if env.Params == nil {
		return nil, true, errors.New("params {threadId, requestId} is required")
	}
	id, err := decodeID(env.Params.RequestID)
	if err != nil {
		return nil, true, fmt.Errorf("params.requestId: %w", err)
	}
	return &Resolved{ThreadID: env.Params.ThreadID, RequestID: id}, true, nil
}

// Matches reports whether prompt params (as PromptParams built them) belong to the
// settled request.
func (r *Resolved) Matches(params map[string]any) bool {
	if params["codex_request_id"] == nil || fmt.Sprint(params["codex_request_id"]) != fmt.Sprint(r.RequestID) {
		return false
	}
	if _, isString := r.RequestID.(string); isString != isJSONString(params["codex_request_id"]) {
		return false // 7 and "7" are different requests
	}
	thread, _ := params["threadId"].(string)
	return r.ThreadID == "" || thread == "" || thread == r.ThreadID
}

func isJSONString(v any) bool {
	_, ok := v.(string)
	return ok
}
