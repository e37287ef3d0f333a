// Package fakemodel is a stand-in for the Anthropic Messages API on loopback, for
// driving real Claude Code headless in tests (ANTHROPIC_BASE_URL=<Server.URL>).
//
// The conversation is scripted and stateless: a request that offers the scripted tool
// and carries no tool_result for it is answered with a tool_use of that tool; a request
// that carries the tool_result is answered with the final text. Every other request
// (a title or summary with a small model, a quota probe, tool search) is answered with
// plain text and no tool_use, so Claude Code's side requests never run the tool.
// Every request is recorded so a test can read what Claude Code sent back.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Script is the conversation the fake model plays.
type Script struct {
	// Tool is the tool name the model calls, as Claude Code lists it to the model
	// (for an MCP tool: mcp__<server>__<tool>).
	Tool string
	// Input is the tool_use input.
	Input map[string]any
	// FinalText is what the model says once it has the tool's result.
	FinalText string
	// RetryInput, when set, is the input of a second call of Tool the model makes when
	// Claude Code tells it, beside the first call's result, that a PermissionDenied
	// hook allows one more try (as a model does: it retries only when told). The
	// retry's id is RetryToolUseID.
	RetryInput map[string]any
}

// ToolUseID is the id of the scripted tool_use block (Claude Code echoes it in its
// tool_result).
const ToolUseID = "toolu_01GatehouseFakeModel0001"

// RetryToolUseID is the id of the scripted retry (Script.RetryInput).
const RetryToolUseID = "toolu_01GatehouseFakeModel0002"

// retryNote is what Claude Code 2.1.332 adds beside a refused call's result when a
// PermissionDenied hook answered retry: "The refusal above is not final for this call:
// the PermissionDenied hook set up for this session allows one more try, …".
const retryNote = "PermissionDenied hook"

// Request is one request Claude Code made.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   map[string]any // nil when the body is not a JSON object
	Kind   string         // "tool_use", "retry", "final", "side", "count_tokens", "other"
}

// ToolResult is a tool_result block Claude Code sent back to the model.
type ToolResult struct {
	ToolUseID string
	Text      string // the text blocks joined by "\n" (or the string content)
	IsError   bool
}

// Server is a running fake Messages API.
type Server struct {
	*httptest.Server
	t      testing.TB
	script Script

	mu       sync.Mutex
	requests []Request
	results  []ToolResult
	ended    bool
	changed  chan struct{} // closed and replaced whenever a request is recorded
}

// Start runs a fake model playing script until the test ends.
func Start(t testing.TB, script Script) *Server {
	t.Helper()
	if script.FinalText == "" {
		script.FinalText = "Done."
	}
	s := &Server{t: t, script: script, changed: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.mu.Lock()
		s.ended = true
		s.mu.Unlock()
		s.Close()
	})
	return s
}

// Requests returns every request recorded so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ToolResults returns the distinct tool_result blocks for the scripted tool_use seen so
// far, in the order they first appeared (Claude Code resends the whole conversation
// on every turn, so each result is recorded once).
func (s *Server) ToolResults() []ToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ToolResult(nil), s.results...)
}

// WaitToolResult waits for the first tool_result for the scripted tool_use, failing
// the test after the deadline.
func (s *Server) WaitToolResult(t testing.TB, within time.Duration) ToolResult {
	t.Helper()
	return s.WaitToolResultFor(t, ToolUseID, within)
}

// WaitToolResultFor waits for the tool_result for the scripted call id (ToolUseID or
// RetryToolUseID), failing the test after the deadline.
func (s *Server) WaitToolResultFor(t testing.TB, id string, within time.Duration) ToolResult {
	t.Helper()
	deadline := time.After(within)
	for {
		s.mu.Lock()
		ch := s.changed
		for _, r := range s.results {
			if r.ToolUseID == id {
				s.mu.Unlock()
				return r
			}
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("the model got no tool_result for %s within %s; requests:\n%s", id, within, s.Summary())
			return ToolResult{}
		}
	}
}

// Summary describes the recorded requests, one a line, for failure messages.
func (s *Server) Summary() string {
	var b strings.Builder
	for i, r := range s.Requests() {
		fmt.Fprintf(&b, "  %d. %s %s kind=%s", i+1, r.Method, r.Path, r.Kind)
		if r.Body != nil {
			fmt.Fprintf(&b, " model=%v tools=%v", r.Body["model"], toolNames(r.Body))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func (s *Server) logf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.t.Logf(format, args...)
	}
}

func (s *Server) record(r Request, results []ToolResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
	for _, res := range results {
		seen := false
		for _, old := range s.results {
			if old.ToolUseID == res.ToolUseID {
				seen = true
			}
		}
		if !seen {
			s.results = append(s.results, res)
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	raw, _ := io.ReadAll(req.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	rec := Request{Method: req.Method, Path: req.URL.Path, Header: req.Header.Clone(), Body: body}
	path := strings.TrimSuffix(req.URL.Path, "/")
	switch {
	case req.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		rec.Kind = "count_tokens"
		s.record(rec, nil)
		writeJSON(w, map[string]any{"input_tokens": 42})
	case req.Method == http.MethodPost && path == "/v1/messages":
		results := toolResults(body)
		switch {
		case !offers(body, s.script.Tool):
			rec.Kind = "side"
		case s.script.RetryInput != nil && len(results) == 1 && results[0].ToolUseID == ToolUseID && retryOffered(body):
			rec.Kind = "retry"
		case len(results) > 0:
			rec.Kind = "final"
		default:
			rec.Kind = "tool_use"
		}
		s.record(rec, results)
		s.answer(w, body, rec.Kind)
	case req.Method == http.MethodGet && strings.HasPrefix(path, "/v1/models"):
		rec.Kind = "other"
		s.record(rec, nil)
		writeJSON(w, map[string]any{"data": []any{map[string]any{"type": "model", "id": "claude-sonnet-4-5",
			"display_name": "Claude (fake)", "created_at": "2025-01-01T00:00:00Z"}}, "has_more": false, "first_id": "claude-sonnet-4-5", "last_id": "claude-sonnet-4-5"})
	case req.Method == http.MethodHead || req.Method == http.MethodGet:
		rec.Kind = "other"
		s.record(rec, nil)
		s.logf("fakemodel: harmless answer to %s %s", req.Method, req.URL.Path)
		writeJSON(w, map[string]any{})
	default:
		rec.Kind = "other"
		s.record(rec, nil)
		s.logf("fakemodel: unknown request %s %s: %.200s", req.Method, req.URL.Path, raw)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"the fake model does not serve this path"}}`)
	}
}

// answer replies with the message for kind, streaming when the request asks for it.
func (s *Server) answer(w http.ResponseWriter, body map[string]any, kind string) {
	model, _ := body["model"].(string)
	if model == "" {
		model = "claude-fake"
	}
	var block map[string]any
	stop := "end_turn"
	switch kind {
	case "tool_use":
		block = map[string]any{"type": "tool_use", "id": ToolUseID, "name": s.script.Tool, "input": s.script.Input}
		stop = "tool_use"
	case "retry":
		block = map[string]any{"type": "tool_use", "id": RetryToolUseID, "name": s.script.Tool, "input": s.script.RetryInput}
		stop = "tool_use"
	case "final":
		block = map[string]any{"type": "text", "text": s.script.FinalText}
	default:
		block = map[string]any{"type": "text", "text": "Gatehouse test"}
	}
	id := fmt.Sprintf("msg_fake_%d", time.Now().UnixNano())
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if stream, _ := body["stream"].(bool); !stream {
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(event string, data map[string]any) {
		data["type"] = event
		raw, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, raw)
	}
	send("message_start", map[string]any{"message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
	if block["type"] == "tool_use" {
		input, _ := json.Marshal(block["input"])
		send("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": s.script.Tool, "input": map[string]any{}}})
		send("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
	} else {
		send("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		send("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": block["text"]}})
	}
	send("content_block_stop", map[string]any{"index": 0})
	send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	send("message_stop", map[string]any{})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// offers reports whether the request lists the tool among its tools.
func offers(body map[string]any, tool string) bool {
	for _, n := range toolNames(body) {
		if n == tool {
			return true
		}
	}
	return false
}

func toolNames(body map[string]any) []string {
	tools, _ := body["tools"].([]any)
	var names []string
	for _, t := range tools {
		if m, ok := t.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				names = append(names, n)
			}
		}
	}
	return names
}

// retryOffered reports whether the last user message tells the model that a
// PermissionDenied hook allows one more try (retryNote).
func retryOffered(body map[string]any) bool {
	msgs, _ := body["messages"].([]any)
	if len(msgs) == 0 {
		return false
	}
	last, _ := msgs[len(msgs)-1].(map[string]any)
	blocks, _ := last["content"].([]any)
	for _, b := range blocks {
		if block, _ := b.(map[string]any); block["type"] == "text" {
			if text, _ := block["text"].(string); strings.Contains(text, retryNote) {
				return true
			}
		}
	}
	return false
}

// toolResults returns the tool_result blocks answering the scripted tool_use (and its
// retry).
func toolResults(body map[string]any) []ToolResult {
	msgs, _ := body["messages"].([]any)
	var out []ToolResult
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		if msg["role"] != "user" {
			continue
		}
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			block, _ := b.(map[string]any)
			id, _ := block["tool_use_id"].(string)
			if block["type"] != "tool_result" || (id != ToolUseID && id != RetryToolUseID) {
				continue
			}
			isErr, _ := block["is_error"].(bool)
			out = append(out, ToolResult{ToolUseID: id, Text: contentText(block["content"]), IsError: isErr})
		}
	}
	return out
}

func contentText(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, p := range v {
			if m, ok := p.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}
