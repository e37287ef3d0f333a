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

// GeminiScript is the conversation a fake Gemini API (generativelanguage v1beta, the
// Gemini CLI's wire format with an API key) plays: call one function once, then say
// FinalText once the function's response is back.
type GeminiScript struct {
	// Tool is the function the model calls, as the agent declares it (the Gemini
	// CLI's shell tool is "run_shell_command").
	Tool string
	// Args are the call's arguments.
	Args map[string]any
	// FinalText is what the model says once it has the function response.
	FinalText string
}

// GeminiRequest is one request the agent made to the fake.
type GeminiRequest struct {
	Method, Path string
	Body         map[string]any // nil when not a JSON object
	// Kind is "function_call" (answered with the scripted call), "final" (the function
	// response is back: answered with FinalText), "side" (the scripted function is not
	// declared: streamed plain text), "json" (a generateContent call: the Gemini CLI's
	// model router and checks, answered with the JSON they expect) or "other".
	Kind string
}

// Gemini is a running fake Gemini API on loopback: POST
// /v1beta/models/<model>:streamGenerateContent?alt=sse answers SSE chunks, POST
// …:generateContent one JSON response. Stateless like Server: a streamed request that
// declares the scripted function and carries no functionResponse for it gets the
// call, one that carries it gets FinalText.
type Gemini struct {
	*httptest.Server
	script GeminiScript

	// Its results are the functionResponse.response JSON for the tool.
	recording[GeminiRequest]
}

// StartGemini runs a fake Gemini API playing script until the test ends.
func StartGemini(t testing.TB, script GeminiScript) *Gemini {
	t.Helper()
	if script.FinalText == "" {
		script.FinalText = "Done."
	}
	s := &Gemini{script: script, recording: newRecording[GeminiRequest]()}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// FunctionResponses returns the distinct function responses the agent sent for the
// scripted call so far (each the JSON of functionResponse.response).
func (s *Gemini) FunctionResponses() []string { return s.resultsSoFar() }

// WaitFunctionResponse waits for the first function response to the scripted call.
func (s *Gemini) WaitFunctionResponse(t testing.TB, within time.Duration) string {
	t.Helper()
	return s.waitResult(t, within, "functionResponse", s.Summary)
}

// Summary describes the recorded requests, one a line, for failure messages.
func (s *Gemini) Summary() string {
	var b strings.Builder
	for i, r := range s.Requests() {
		fmt.Fprintf(&b, "#%d %s %s kind=%s functions=%d\n", i+1, r.Method, r.Path, r.Kind, len(geminiFunctions(r.Body)))
	}
	return b.String()
}

func (s *Gemini) serve(w http.ResponseWriter, req *http.Request) {
	raw, _ := io.ReadAll(req.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	kind := "other"
	resp, hasResp := geminiFunctionResponse(body, s.script.Tool)
	switch {
	case req.Method != http.MethodPost:
	case strings.HasSuffix(req.URL.Path, ":generateContent"):
		kind = "json"
	case strings.HasSuffix(req.URL.Path, ":streamGenerateContent") && hasResp:
		kind = "final"
	case strings.HasSuffix(req.URL.Path, ":streamGenerateContent") && slices.Contains(geminiFunctions(body), s.script.Tool):
		kind = "function_call"
	case strings.HasSuffix(req.URL.Path, ":streamGenerateContent"):
		kind = "side"
	}
	s.record(GeminiRequest{Method: req.Method, Path: req.URL.Path, Body: body, Kind: kind}, resp, hasResp)

	var part map[string]any
	switch kind {
	case "other":
		http.NotFound(w, req)
		return
	case "json":
		// The router wants {"complexity_reasoning","complexity_score"}; the other
		// JSON checks (next speaker) read their own keys from the same object.
		text, _ := json.Marshal(map[string]any{"complexity_reasoning": "A single simple step.", "complexity_score": 1,
			"reasoning": "The model has finished.", "next_speaker": "user"})
		writeJSON(w, geminiResponse(map[string]any{"text": string(text)}))
		return
	case "function_call":
		part = map[string]any{"functionCall": map[string]any{"name": s.script.Tool, "args": s.script.Args}}
	case "final":
		part = map[string]any{"text": s.script.FinalText}
	default:
		part = map[string]any{"text": "OK."}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	data, _ := json.Marshal(geminiResponse(part))
	fmt.Fprintf(w, "data: %s\n\n", data)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// geminiResponse is a GenerateContentResponse whose one candidate says part.
func geminiResponse(part map[string]any) map[string]any {
	return map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "gemini-fake",
	}
}

// geminiFunctions are the function names a request declares.
func geminiFunctions(body map[string]any) []string {
	var names []string
	tools, _ := body["tools"].([]any)
	for _, t := range tools {
		decls, _ := mapOf(t)["functionDeclarations"].([]any)
		for _, d := range decls {
			if n, ok := mapOf(d)["name"].(string); ok {
				names = append(names, n)
			}
		}
	}
	return names
}

// geminiFunctionResponse finds the functionResponse for tool in a request's contents:
// the JSON of its response object.
func geminiFunctionResponse(body map[string]any, tool string) (string, bool) {
	contents, _ := body["contents"].([]any)
	for _, c := range contents {
		parts, _ := mapOf(c)["parts"].([]any)
		for _, p := range parts {
			fr := mapOf(mapOf(p)["functionResponse"])
			if fr == nil || fr["name"] != tool {
				continue
			}
			raw, _ := json.Marshal(fr["response"])
			return string(raw), true
		}
	}
	return "", false
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
