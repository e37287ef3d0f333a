package fakemodel

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestGeminiScript: the router's generateContent gets its JSON, a streamed request
// declaring the tool gets the call, and one carrying the function's response gets the
// final text and is recorded.
func TestGeminiScript(t *testing.T) {
	s := StartGemini(t, GeminiScript{Tool: "run_shell_command", Args: map[string]any{"command": "ls"}, FinalText: "Bye."})
	post := func(path string, body map[string]any) string {
		t.Helper()
		raw, _ := json.Marshal(body)
		resp, err := http.Post(s.URL+path, "application/json", bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return string(out)
	}
	if out := post("/v1beta/models/gemini-3.5-flash-lite:generateContent", map[string]any{}); !strings.Contains(out, `complexity_score`) {
		t.Errorf("router answer = %s", out)
	}
	tools := []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "run_shell_command"}}}}
	const stream = "/v1beta/models/m:streamGenerateContent?alt=sse"
	if out := post(stream, map[string]any{"tools": tools}); !strings.HasPrefix(out, "data: ") || !strings.Contains(out, `"functionCall":{"args":{"command":"ls"},"name":"run_shell_command"}`) {
		t.Errorf("call = %s", out)
	}
	contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{
		"functionResponse": map[string]any{"name": "run_shell_command", "response": map[string]any{"error": "blocked: no"}}}}}}
	if out := post(stream, map[string]any{"tools": tools, "contents": contents}); !strings.Contains(out, `"text":"Bye."`) {
		t.Errorf("final = %s", out)
	}
	if got := s.FunctionResponses(); len(got) != 1 || got[0] != `{"error":"blocked: no"}` {
		t.Errorf("responses = %v", got)
	}
	if out := post(stream, map[string]any{}); !strings.Contains(out, `"text":"OK."`) {
		t.Errorf("side = %s", out)
	}
}
