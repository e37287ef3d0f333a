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

// ChatScript is the conversation a fake OpenAI chat-completions API plays (the
// Copilot CLI's and OpenCode's wire format): call one function once, then say
// FinalText once the tool message for that call is back.
type ChatScript struct {
	// Tool is the function the model calls, as the agent lists it in "tools" (the
	// Copilot CLI's shell tool is "bash").
	Tool string
	// Arguments are the call's arguments (sent JSON-encoded, as OpenAI does).
	Arguments map[string]any
	// FinalText is what the model says once it has the tool message.
	FinalText string
	// Model is the model id GET /v1/models lists ("gpt-4.1" when empty).
	Model string
}

// ChatCallID is the id of the scripted tool call (the agent echoes it as the
// tool_call_id of its tool message).
const ChatCallID = "call_gatehouse_chat_0001"

// ChatRequest is one request the agent made to the fake.
type ChatRequest struct {
	Method, Path string
	Header       http.Header
	Body         map[string]any // nil when not a JSON object
	// Kind is "tool_call" (answered with the scripted call), "final" (the tool message
	// is back: answered with FinalText), "side" (the scripted tool is not offered: a
	// title or summary; plain text), "models" or "other".
	Kind string
}

// Chat is a running fake chat-completions API on loopback: POST …/chat/completions,
// streamed (SSE chunks, then [DONE]) when the request says "stream":true, one JSON
// completion otherwise. Stateless like Server: a request that offers the scripted
// function and carries no tool message for ChatCallID gets the tool call, one that
// carries it gets FinalText, and any other gets plain text without a tool call.
type Chat struct {
	*httptest.Server
	script ChatScript

	// Its results are the tool message contents for ChatCallID.
	recording[ChatRequest]
}

// StartChat runs a fake chat-completions API playing script until the test ends.
func StartChat(t testing.TB, script ChatScript) *Chat {
	t.Helper()
	if script.FinalText == "" {
		script.FinalText = "Done."
	}
	if script.Model == "" {
		script.Model = "gpt-4.1"
	}
	s := &Chat{script: script, recording: newRecording[ChatRequest]()}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// ToolMessages returns the distinct contents of the tool messages the agent sent back
// for the scripted call, in the order they first appeared (agents resend the whole
// conversation every turn, so each is recorded once).
func (s *Chat) ToolMessages() []string { return s.resultsSoFar() }

// WaitToolMessage waits for the first tool message for the scripted call, failing the
// test after within.
func (s *Chat) WaitToolMessage(t testing.TB, within time.Duration) string {
	t.Helper()
	return s.waitResult(t, within, "tool message", s.Summary)
}

// Summary describes the recorded requests, one a line, for failure messages.
func (s *Chat) Summary() string {
	var b strings.Builder
	for i, r := range s.Requests() {
		fmt.Fprintf(&b, "  %d. %s %s kind=%s", i+1, r.Method, r.Path, r.Kind)
		if r.Body != nil {
			fmt.Fprintf(&b, " model=%v stream=%v tools=%v", r.Body["model"], r.Body["stream"], chatToolNames(r.Body))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func (s *Chat) serve(w http.ResponseWriter, req *http.Request) {
	raw, _ := io.ReadAll(req.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	rec := ChatRequest{Method: req.Method, Path: req.URL.Path, Header: req.Header.Clone(), Body: body, Kind: "other"}
	path := strings.TrimSuffix(req.URL.Path, "/")
	switch {
	case req.Method == http.MethodPost && strings.HasSuffix(path, "/chat/completions"):
		result, hasResult := toolMessage(body, ChatCallID)
		switch {
		case hasResult:
			rec.Kind = "final"
		case slices.Contains(chatToolNames(body), s.script.Tool):
			rec.Kind = "tool_call"
		default:
			rec.Kind = "side"
		}
		s.record(rec, result, hasResult)
		s.answer(w, body, rec.Kind)
	case req.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		rec.Kind = "models"
		s.record(rec, "", false)
		writeJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{
			"id": s.script.Model, "object": "model", "created": 1735689600, "owned_by": "gatehouse-fake"}}})
	default:
		s.record(rec, "", false)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"message":"the fake model does not serve this path","type":"invalid_request_error","code":"not_found"}}`)
	}
}

// answer replies with the completion for kind, streaming when the request asks for it.
func (s *Chat) answer(w http.ResponseWriter, body map[string]any, kind string) {
	model, _ := body["model"].(string)
	if model == "" {
		model = s.script.Model
	}
	id := fmt.Sprintf("chatcmpl-gatehouse-%d", time.Now().UnixNano())
	created := time.Now().Unix()
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	var call map[string]any
	text, finish := "OK.", "stop"
	switch kind {
	case "tool_call":
		args, _ := json.Marshal(s.script.Arguments)
		call = map[string]any{"id": ChatCallID, "type": "function",
			"function": map[string]any{"name": s.script.Tool, "arguments": string(args)}}
		finish = "tool_calls"
	case "final":
		text = s.script.FinalText
	}

	if stream, _ := body["stream"].(bool); !stream {
		msg := map[string]any{"role": "assistant", "content": text}
		if call != nil {
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}}
		}
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	chunk := func(delta map[string]any, finish any) {
		raw, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", raw)
	}
	if call != nil {
		chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"index": 0,
			"id": ChatCallID, "type": "function", "function": map[string]any{"name": s.script.Tool, "arguments": ""}}}}, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0,
			"function": map[string]any{"arguments": call["function"].(map[string]any)["arguments"]}}}}, nil)
	} else {
		chunk(map[string]any{"role": "assistant", "content": ""}, nil)
		chunk(map[string]any{"content": text}, nil)
	}
	chunk(map[string]any{}, finish)
	if opts, _ := body["stream_options"].(map[string]any); opts["include_usage"] == true {
		raw, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{}, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\n", raw)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// chatToolNames are the function names a chat-completions request offers.
func chatToolNames(body map[string]any) []string {
	tools, _ := body["tools"].([]any)
	var names []string
	for _, t := range tools {
		m, _ := t.(map[string]any)
		fn, _ := m["function"].(map[string]any)
		if n, ok := fn["name"].(string); ok {
			names = append(names, n)
		}
	}
	return names
}

// toolMessage finds the tool message answering callID in a request's messages: its
// content as a string (text parts joined by "\n").
func toolMessage(body map[string]any, callID string) (string, bool) {
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		if msg["role"] == "tool" && msg["tool_call_id"] == callID {
			return contentText(msg["content"]), true
		}
	}
	return "", false
}
