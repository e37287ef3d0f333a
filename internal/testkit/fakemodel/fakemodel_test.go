package fakemodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, url string, body map[string]any) *http.Response {
	t.Helper()
	raw, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sseEvents returns the data objects of a streamed answer, in order.
func sseEvents(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("data %q: %v", d, err)
			}
			out = append(out, m)
		}
	}
	return out
}

// TestScriptedConversation: the scripted tool is asked for while no result is back,
// the final text follows its tool_result, side requests get plain text, and the
// tool_result (text and is_error) is recorded once.
func TestScriptedConversation(t *testing.T) {
	s := Start(t, Script{Tool: "mcp__g__deploy", Input: map[string]any{"target": "prod"}, FinalText: "ok"})
	tools := []any{map[string]any{"name": "Bash"}, map[string]any{"name": "mcp__g__deploy"}}
	user := map[string]any{"role": "user", "content": "deploy to prod"}

	evs := sseEvents(t, post(t, s.URL+"/v1/messages", map[string]any{"model": "m", "stream": true, "tools": tools, "messages": []any{user}}).Body)
	var types []string
	for _, e := range evs {
		types = append(types, e["type"].(string))
	}
	if got := strings.Join(types, ","); got != "message_start,content_block_start,content_block_delta,content_block_stop,message_delta,message_stop" {
		t.Fatalf("events = %s", got)
	}
	if cb := evs[1]["content_block"].(map[string]any); cb["type"] != "tool_use" || cb["name"] != "mcp__g__deploy" || cb["id"] != ToolUseID {
		t.Fatalf("block = %v", cb)
	}
	if d := evs[2]["delta"].(map[string]any); d["partial_json"] != `{"target":"prod"}` {
		t.Fatalf("delta = %v", d)
	}
	if d := evs[4]["delta"].(map[string]any); d["stop_reason"] != "tool_use" {
		t.Fatalf("message_delta = %v", d)
	}

	// A side request (no tools) gets plain text, even non-streaming.
	var side map[string]any
	_ = json.NewDecoder(post(t, s.URL+"/v1/messages", map[string]any{"model": "haiku", "messages": []any{user}}).Body).Decode(&side)
	if c := side["content"].([]any)[0].(map[string]any); c["type"] != "text" {
		t.Fatalf("side answer = %v", side)
	}

	result := map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": ToolUseID,
		"is_error": true, "content": []any{map[string]any{"type": "text", "text": "declined"}}}}}
	assistant := map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": ToolUseID, "name": "mcp__g__deploy", "input": map[string]any{}}}}
	for range 2 { // the conversation is resent each turn: the result is recorded once
		evs = sseEvents(t, post(t, s.URL+"/v1/messages", map[string]any{"model": "m", "stream": true, "tools": tools, "messages": []any{user, assistant, result}}).Body)
		if d := evs[2]["delta"].(map[string]any); d["text"] != "ok" {
			t.Fatalf("final delta = %v", d)
		}
	}
	if got := s.WaitToolResult(t, time.Second); got != (ToolResult{ToolUseID: ToolUseID, Text: "declined", IsError: true}) {
		t.Fatalf("tool result = %+v", got)
	}
	if n := len(s.ToolResults()); n != 1 {
		t.Fatalf("%d results recorded", n)
	}
	var kinds []string
	for _, r := range s.Requests() {
		kinds = append(kinds, r.Kind)
	}
	if got := strings.Join(kinds, ","); got != "tool_use,side,final,final" {
		t.Fatalf("kinds = %s", got)
	}
	if resp := post(t, s.URL+"/v1/messages/count_tokens", map[string]any{}); resp.StatusCode != 200 {
		t.Fatalf("count_tokens: %d", resp.StatusCode)
	}
}
