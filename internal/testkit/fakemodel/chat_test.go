package fakemodel

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// chatEvents returns the data objects of a streamed completion, insisting that it
// ends with [DONE].
func chatEvents(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	raw, _ := io.ReadAll(r)
	body, ok := strings.CutSuffix(string(raw), "data: [DONE]\n\n")
	if !ok {
		t.Fatalf("stream does not end with [DONE]: %s", raw)
	}
	return sseEvents(t, strings.NewReader(body))
}

// TestChatScriptedConversation: the scripted function is called while no tool message
// is back (streamed as chunks, or as one completion), the final text follows the tool
// message, side requests get plain text, and the tool message is recorded once.
func TestChatScriptedConversation(t *testing.T) {
	s := StartChat(t, ChatScript{Tool: "bash", Arguments: map[string]any{"command": "touch x"}, FinalText: "ok"})
	tools := []any{map[string]any{"type": "function", "function": map[string]any{"name": "bash"}}}
	user := map[string]any{"role": "user", "content": "make x"}

	evs := chatEvents(t, post(t, s.URL+"/v1/chat/completions", map[string]any{"model": "m", "stream": true, "tools": tools, "messages": []any{user}}).Body)
	call := evs[0]["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	args := evs[1]["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"]
	finish := evs[2]["choices"].([]any)[0].(map[string]any)["finish_reason"]
	if call["id"] != ChatCallID || call["function"].(map[string]any)["name"] != "bash" || args != `{"command":"touch x"}` || finish != "tool_calls" {
		t.Fatalf("streamed call = %v", evs)
	}

	var plain map[string]any
	raw, _ := io.ReadAll(post(t, s.URL+"/v1/chat/completions", map[string]any{"model": "m", "tools": tools, "messages": []any{user}}).Body)
	if err := json.Unmarshal(raw, &plain); err != nil || !strings.Contains(string(raw), `"tool_calls":[{"function":{"arguments":"{\"command\":\"touch x\"}","name":"bash"}`) {
		t.Fatalf("completion = %s (%v)", raw, err)
	}

	back := []any{user, map[string]any{"role": "assistant", "tool_calls": []any{call}},
		map[string]any{"role": "tool", "tool_call_id": ChatCallID, "content": []any{map[string]any{"type": "text", "text": "denied: not today"}}}}
	for range 2 {
		evs = chatEvents(t, post(t, s.URL+"/v1/chat/completions", map[string]any{"model": "m", "stream": true, "tools": tools, "messages": back}).Body)
	}
	if c := evs[1]["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)["content"]; c != "ok" {
		t.Fatalf("final = %v", evs)
	}
	if got := s.ToolMessages(); len(got) != 1 || got[0] != "denied: not today" || s.WaitToolMessage(t, 0) != "denied: not today" {
		t.Fatalf("tool messages = %q", got)
	}
	side := chatEvents(t, post(t, s.URL+"/v1/chat/completions", map[string]any{"model": "m", "stream": true, "messages": []any{user}}).Body)
	if c := side[1]["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)["content"]; c != "OK." {
		t.Fatalf("side = %v", side)
	}
}
