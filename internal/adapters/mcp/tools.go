package mcp

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/models"
)

// ToolCall is the params of tools/call.
type ToolCall struct {
	Name string
	// Arguments is the raw arguments object ("{}" when absent).
	Arguments json.RawMessage
	// RequestState is echoed from an earlier input_required result (a retry).
	RequestState string
	// InputResponses are the client's answers to that result's input requests. They
	// are claims, never proof: approval comes from the server's own record.
	InputResponses map[string]json.RawMessage
	// Params is the whole params object (for _meta).
	Params json.RawMessage
}

// ParseToolCall validates tools/call params.
func ParseToolCall(params json.RawMessage) (ToolCall, *Error) {
	var p struct {
		Name           *string                    `json:"name"`
		Arguments      json.RawMessage            `json:"arguments"`
		RequestState   *string                    `json:"requestState"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return ToolCall{}, Errorf(CodeInvalidParams, "invalid tools/call params: name must be a string, inputResponses an object, requestState a string")
	}
	if p.Name == nil || strings.TrimSpace(*p.Name) == "" {
		return ToolCall{}, Errorf(CodeInvalidParams, "tools/call needs a tool name")
	}
	call := ToolCall{Name: *p.Name, InputResponses: p.InputResponses, Params: params}
	args := bytes.TrimSpace(p.Arguments)
	switch {
	case len(args) == 0 || string(args) == "null":
		call.Arguments = json.RawMessage(`{}`)
	case args[0] == '{':
		if path, dup := DuplicateKey(args); dup {
			// What the policy checks, the person sees, the approval binds and the tool
			// receives must be one and the same object.
			return ToolCall{}, Errorf(CodeInvalidParams, "tools/call arguments repeat the key at %s: send each key once", path)
		}
		call.Arguments = args
	default:
		return ToolCall{}, Errorf(CodeInvalidParams, "tools/call arguments must be an object")
	}
	if p.RequestState != nil {
		call.RequestState = *p.RequestState
	}
	return call, nil
}

// ArgumentsMap decodes the arguments for a policy event (numbers as float64, as any
// JSON reader would see them).
func (c ToolCall) ArgumentsMap() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(c.Arguments, &m)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// ClientAction is the action the client claims for input request key, "" when it
// sent none (or something unreadable).
func (c ToolCall) ClientAction(key string) string {
	raw, ok := c.InputResponses[key]
	if !ok {
		return ""
	}
	var r struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(raw, &r)
	return r.Action
}

// ExecuteParams is the body's params for the runner's tools/call, the arguments as
// the client sent them.
func ExecuteParams(name string, args json.RawMessage) json.RawMessage {
	n, _ := json.Marshal(name)
	b := make([]byte, 0, len(`{"name":,"arguments":}`)+len(n)+len(args))
	b = append(b, `{"name":`...)
	b = append(b, n...)
	b = append(b, `,"arguments":`...)
	b = append(b, args...)
	return append(b, '}')
}

// RetryParams is the params of the runner retry after its input_required round: each
// input request's answer is the verdict on its prompt (models.Verdict is an MCP
// ElicitResult).
func RetryParams(name string, args json.RawMessage, responses map[string]models.Verdict, state string) map[string]any {
	return map[string]any{"name": name, "arguments": args, "inputResponses": responses, "requestState": state}
}

// RunnerInputRequired is a runner's request for input from a person.
type RunnerInputRequired struct {
	RequestState string
	// Requests maps the runner's key to the elicitation params it wants shown.
	Requests map[string]map[string]any
	// Schemas maps the runner's key to its requestedSchema as sent (key order intact,
	// for showing the form's fields in the server's order).
	Schemas map[string]json.RawMessage
}

// Keys returns the request keys in a stable order.
func (r *RunnerInputRequired) Keys() []string {
	keys := make([]string, 0, len(r.Requests))
	for k := range r.Requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// RunnerToolAnswer is what the runner said about a tools/call: input wanted, a result,
// or an error.
type RunnerToolAnswer struct {
	InputRequired *RunnerInputRequired
	// Result is the MCP CallToolResult to send the client.
	Result map[string]any
	Err    *Error
}

// ParseRunnerToolAnswer reads the runner's answer to tools/call. Accepted shapes:
// {"result":{"input_required":{"requestState","inputRequests"}}}, the MCP-native
// {"result":{"resultType":"input_required",…}}, {"result":{"output":…}} (text, or any
// JSON, which is sent as its text), {"result":{"content":[…]}}, and {"error":{…}}.
func ParseRunnerToolAnswer(raw []byte) RunnerToolAnswer {
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    *int   `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return RunnerToolAnswer{Err: Errorf(CodeApplication, "the runner answered with something that is not a JSON object")}
	}
	if env.Error != nil {
		msg := env.Error.Message
		if msg == "" {
			msg = "the runner reported an error"
		}
		return RunnerToolAnswer{Err: Errorf(CodeApplication, "%s", msg)}
	}
	body := env.Result
	if len(body) == 0 {
		body = raw // tolerate a runner that answers with the result itself
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(body, &res); err != nil || res == nil {
		return RunnerToolAnswer{Err: Errorf(CodeApplication, "the runner's result is not an object")}
	}
	if ir, ok := res["input_required"]; ok {
		return parseInputRequired(ir)
	}
	var rt string
	_ = json.Unmarshal(res["resultType"], &rt)
	if rt == "input_required" {
		return parseInputRequired(body)
	}
	if out, ok := res["output"]; ok {
		return RunnerToolAnswer{Result: TextResult(outputText(out), isTrue(res["isError"]))}
	}
	if content, ok := res["content"]; ok {
		// Passed on as sent (a tool's output can be large): the answer was read as
		// JSON already, so a list here is a valid one.
		if content = bytes.TrimSpace(content); content[0] != '[' && string(content) != "null" {
			return RunnerToolAnswer{Err: Errorf(CodeApplication, "the runner's result content is not a list")}
		}
		result := map[string]any{"content": content}
		if isTrue(res["isError"]) {
			result["isError"] = true
		}
		if sc, ok := res["structuredContent"]; ok && string(sc) != "null" {
			result["structuredContent"] = sc
		}
		return RunnerToolAnswer{Result: result}
	}
	return RunnerToolAnswer{Err: Errorf(CodeApplication, "the runner's result has neither output nor content")}
}

func parseInputRequired(raw json.RawMessage) RunnerToolAnswer {
	var ir struct {
		RequestState  string `json:"requestState"`
		InputRequests map[string]struct {
			Params map[string]any `json:"params"`
		} `json:"inputRequests"`
	}
	if err := json.Unmarshal(raw, &ir); err != nil || len(ir.InputRequests) == 0 {
		return RunnerToolAnswer{Err: Errorf(CodeApplication, "the runner asked for input without any input requests")}
	}
	var schemas struct {
		InputRequests map[string]struct {
			Params struct {
				RequestedSchema json.RawMessage `json:"requestedSchema"`
			} `json:"params"`
		} `json:"inputRequests"`
	}
	_ = json.Unmarshal(raw, &schemas)
	out := &RunnerInputRequired{RequestState: ir.RequestState, Requests: make(map[string]map[string]any, len(ir.InputRequests)),
		Schemas: make(map[string]json.RawMessage, len(ir.InputRequests))}
	for k, r := range ir.InputRequests {
		if r.Params == nil {
			r.Params = map[string]any{}
		}
		out.Requests[k] = r.Params
		out.Schemas[k] = schemas.InputRequests[k].Params.RequestedSchema
	}
	return RunnerToolAnswer{InputRequired: out}
}

func outputText(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(raw)
}

func isTrue(raw json.RawMessage) bool {
	var b bool
	return json.Unmarshal(raw, &b) == nil && b
}

// TextResult is a CallToolResult holding one text block.
func TextResult(text string, isError bool) map[string]any {
	r := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	if isError {
		r["isError"] = true
	}
	return r
}

// ParseRunnerToolsList reads the runner's answer to tools/list: {"result":{"tools":[…]}}.
func ParseRunnerToolsList(raw []byte) (map[string]any, *Error) {
	var env struct {
		Result *struct {
			Tools      []any  `json:"tools"`
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, Errorf(CodeApplication, "the runner's tool list is malformed")
	}
	if env.Error != nil {
		return nil, Errorf(CodeApplication, "the runner could not list tools: %s", env.Error.Message)
	}
	if env.Result == nil {
		return nil, Errorf(CodeApplication, "the runner's tool list is missing")
	}
	tools := env.Result.Tools
	if tools == nil {
		tools = []any{}
	}
	out := map[string]any{"tools": tools}
	if env.Result.NextCursor != "" {
		out["nextCursor"] = env.Result.NextCursor
	}
	return out, nil
}

// PreviewLimit is the longest content_preview, in characters.
const PreviewLimit = 1024

// ToolPreview renders "<tool>(<json arguments>)", cut to PreviewLimit characters.
func ToolPreview(name string, args json.RawMessage) string {
	var compact bytes.Buffer
	if json.Compact(&compact, args) != nil {
		compact.Reset()
		compact.WriteString("{}")
	}
	return Truncate(name+"("+compact.String()+")", PreviewLimit)
}

// Truncate cuts s to at most n characters, marking the cut with "…".
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// InputPromptParams builds the params of the prompt parked for a runner's input
// request key: the external MCP server's message, mode and schema, plus Gatehouse's
// own keys (phase, policy_name, tool_name, preview).
func InputPromptParams(key, tool string, p map[string]any) map[string]any {
	msg, _ := p["message"].(string)
	if strings.TrimSpace(msg) == "" {
		msg = "The MCP server behind " + tool + " asks for input"
	}
	out := map[string]any{
		"mode": ModeForm, "message": msg, "phase": "mcp_input", "policy_name": "mcp_input_required",
		"tool_name": tool, "content_preview": Truncate(msg, PreviewLimit), "vendor": "MCP server",
		"mcp_input_key": key,
	}
	if mode, _ := p["mode"].(string); mode == ModeURL {
		if u, _ := p["url"].(string); u != "" {
			out["mode"] = ModeURL
			out["url"] = u
			if id, ok := p["elicitationId"].(string); ok {
				out["elicitationId"] = id
			}
			return out
		}
	}
	schema, ok := p["requestedSchema"].(map[string]any)
	if !ok {
		schema = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	out["requestedSchema"] = schema
	return out
}
