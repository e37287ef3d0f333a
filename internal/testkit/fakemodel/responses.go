package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// ResponsesScript is the conversation a fake OpenAI Responses API plays (for Codex,
// wire_api = "responses").
type ResponsesScript struct {
	// Tool is the function the model calls (Codex 0.171: "exec_command").
	Tool string
	// Arguments are the function_call's arguments (sent JSON-encoded, as OpenAI does).
	Arguments map[string]any
	// FinalText is what the model says once it has the call's output.
	FinalText string
}

// CallID is the call_id of the scripted function_call (Codex echoes it in its
// function_call_output).
const CallID = "call_gatehouse_fake_0001"

// ResponsesRequest is one request Codex made to the fake.
type ResponsesRequest struct {
	Method, Path string
	Body         map[string]any // nil when not a JSON object
	Kind         string         // "function_call", "final", "side", "other"
}

// Responses is a running fake Responses API on loopback: POST …/responses answers a
// streamed response (SSE). Stateless like Server: a request that offers the scripted
// tool and carries no function_call_output for CallID gets the function_call; one that
// carries it gets FinalText; any other request (no such tool offered) gets plain text.
type Responses struct {
	*httptest.Server
	script ResponsesScript

	// Its results are the function_call_output texts for CallID.
	recording[ResponsesRequest]
}

// StartResponses runs a fake Responses API playing script until the test ends.
func StartResponses(t testing.TB, script ResponsesScript) *Responses {
	t.Helper()
	if script.FinalText == "" {
		script.FinalText = "Done."
	}
	s := &Responses{script: script, recording: newRecording[ResponsesRequest]()}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Outputs returns the distinct function_call_output texts Codex sent for the scripted
// call so far.
func (s *Responses) Outputs() []string { return s.resultsSoFar() }

// WaitOutput waits for the first function_call_output for the scripted call.
func (s *Responses) WaitOutput(t testing.TB, within time.Duration) string {
	t.Helper()
	return s.waitResult(t, within, "function_call_output", s.Summary)
}

// Summary describes the recorded requests, one a line, for failure messages.
func (s *Responses) Summary() string {
	var b strings.Builder
	for i, r := range s.Requests() {
		fmt.Fprintf(&b, "#%d %s %s kind=%s tools=%v\n", i+1, r.Method, r.Path, r.Kind, functionNames(r.Body))
	}
	return b.String()
}

func (s *Responses) serve(w http.ResponseWriter, req *http.Request) {
	raw, _ := io.ReadAll(req.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	kind := "other"
	var out string
	var hasOutput bool
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/responses") {
		out, hasOutput = callOutput(body, CallID)
		switch {
		case hasOutput:
			kind = "final"
		case offersFunction(body, s.script.Tool):
			kind = "function_call"
		default:
			kind = "side"
		}
	}
	s.record(ResponsesRequest{Method: req.Method, Path: req.URL.Path, Body: body, Kind: kind}, out, hasOutput)

	if kind == "other" {
		if strings.HasSuffix(req.URL.Path, "/models") {
			writeJSON(w, map[string]any{"models": []any{}, "data": []any{}})
			return
		}
		http.NotFound(w, req)
		return
	}
	var item map[string]any
	if kind == "function_call" {
		args, _ := json.Marshal(s.script.Arguments)
		item = map[string]any{"type": "function_call", "id": "fc_gatehouse_1", "call_id": CallID,
			"name": s.script.Tool, "arguments": string(args), "status": "completed"}
	} else {
		text := s.script.FinalText
		if kind == "side" {
			text = "OK."
		}
		item = map[string]any{"type": "message", "id": "msg_gatehouse_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	respID := fmt.Sprintf("resp_gatehouse_%d", len(s.Requests()))
	events := []map[string]any{
		{"type": "response.created", "response": map[string]any{"id": respID, "status": "in_progress"}},
		{"type": "response.output_item.added", "output_index": 0, "item": item},
		{"type": "response.output_item.done", "output_index": 0, "item": item},
		{"type": "response.completed", "response": map[string]any{"id": respID, "status": "completed",
			"output": []any{item},
			"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
				"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}},
	}
	for i, ev := range events {
		data, _ := json.Marshal(ev)
		ev["sequence_number"] = i
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev["type"], data)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// offersFunction reports whether a Responses request lists the function tool name.
func offersFunction(body map[string]any, name string) bool {
	return slices.Contains(functionNames(body), name)
}

func functionNames(body map[string]any) []string {
	tools, _ := body["tools"].([]any)
	var names []string
	for _, t := range tools {
		m, _ := t.(map[string]any)
		if n, ok := m["name"].(string); ok {
			names = append(names, n)
		} else if typ, ok := m["type"].(string); ok {
			names = append(names, typ)
		}
	}
	return names
}

// callOutput finds the function_call_output for callID in a request's input.
func callOutput(body map[string]any, callID string) (string, bool) {
	input, _ := body["input"].([]any)
	for _, it := range input {
		m, _ := it.(map[string]any)
		if m["type"] != "function_call_output" || m["call_id"] != callID {
			continue
		}
		switch o := m["output"].(type) {
		case string:
			return o, true
		default:
			raw, _ := json.Marshal(o)
			return string(raw), true
		}
	}
	return "", false
}
