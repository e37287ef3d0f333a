// Package mcp translates between Gatehouse and the Model Context Protocol as the MCP
// proxy speaks it (§6.5): JSON-RPC 2.0 envelopes, the server/discover and initialize
// answers, tools/call parameters, multi round-trip (MRTR) input_required results,
// integrity-protected requestState, and the runner's answers. Pure functions only:
// the standard library and nothing else.
package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// JSON-RPC error codes the proxy answers with (always inside a 200 body).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	// CodeApplication is every error of the proxy's own making: a policy DENY, a
	// rejected requestState, a runner failure.
	CodeApplication = -32000
)

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("json-rpc %d: %s", e.Code, e.Message) }

// Errorf builds an Error.
func Errorf(code int, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Kind tells what a parsed message is.
type Kind int

// Kinds of JSON-RPC messages a client can POST.
const (
	// KindRequest expects an answer.
	KindRequest Kind = iota
	// KindNotification has no id and gets no answer (HTTP 202).
	KindNotification
	// KindResponse is the client answering a request of ours; the proxy never sends
	// any, so it is acknowledged (202) and dropped.
	KindResponse
)

// Message is one parsed JSON-RPC message.
type Message struct {
	Kind Kind
	// ID is the raw id (a JSON string or number); nil for notifications.
	ID     json.RawMessage
	Method string
	// Params is the raw params object ("{}" when absent).
	Params json.RawMessage
}

// Parse reads one JSON-RPC 2.0 message. On failure it returns the error to answer
// with and whatever id could be read (nil → the answer's id is null).
func Parse(body []byte) (Message, *Error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return Message{}, Errorf(CodeInvalidRequest, "empty body: send one JSON-RPC 2.0 request")
	}
	if body[0] != '{' {
		switch {
		case !json.Valid(body):
			return Message{}, Errorf(CodeParseError, "parse error: the body is not valid JSON")
		case body[0] == '[':
			return Message{}, Errorf(CodeInvalidRequest, "batches are not supported: send one request per POST")
		}
		return Message{}, Errorf(CodeInvalidRequest, "a JSON-RPC request must be an object")
	}
	var env struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		// Unmarshal checks the whole body is JSON before it decodes any of it.
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return Message{}, Errorf(CodeParseError, "parse error: the body is not valid JSON")
		}
		return Message{}, Errorf(CodeInvalidRequest, "invalid request: %v", err)
	}
	var msg Message
	if len(env.ID) > 0 {
		if !validID(env.ID) {
			return Message{}, Errorf(CodeInvalidRequest, "id must be a string or a number")
		}
		msg.ID = env.ID
	}
	if env.JSONRPC == nil || *env.JSONRPC != "2.0" {
		return msg, Errorf(CodeInvalidRequest, `"jsonrpc" must be "2.0"`)
	}
	if env.Method == nil {
		if msg.ID != nil && (len(env.Result) > 0 || len(env.Error) > 0) {
			msg.Kind = KindResponse
			return msg, nil
		}
		return msg, Errorf(CodeInvalidRequest, `"method" is required`)
	}
	if *env.Method == "" {
		return msg, Errorf(CodeInvalidRequest, `"method" must not be empty`)
	}
	msg.Method = *env.Method
	p := bytes.TrimSpace(env.Params)
	switch {
	case len(p) == 0 || string(p) == "null":
		msg.Params = json.RawMessage(`{}`)
	case p[0] == '{':
		msg.Params = p
	default:
		return msg, Errorf(CodeInvalidParams, `"params" must be an object`)
	}
	if msg.ID == nil {
		msg.Kind = KindNotification
	}
	return msg, nil
}

// validID accepts JSON strings and numbers (that fit a float64, as a JSON reader
// takes them); MCP forbids null ids. raw is one valid JSON value.
func validID(raw json.RawMessage) bool {
	switch c := raw[0]; {
	case c == '"':
		return true
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := strconv.ParseFloat(string(raw), 64)
		return err == nil
	}
	return false
}

// Response is a JSON-RPC response: exactly one of Result and Error is set.
type Response struct {
	ID     json.RawMessage
	Result any
	Error  *Error
}

// MarshalJSON writes {"jsonrpc":"2.0","id":…,"result"|"error":…}; a missing id is null.
func (r Response) MarshalJSON() ([]byte, error) {
	id := []byte(r.ID)
	if len(id) == 0 {
		id = []byte("null")
	}
	key, v := `,"result":`, r.Result
	if r.Error != nil {
		key, v = `,"error":`, r.Error
	} else if v == nil {
		v = map[string]any{}
	}
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(`{"jsonrpc":"2.0","id":`) + len(id) + len(key) + len(body) + 1)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	json.HTMLEscape(&b, id) // an id is one JSON literal as the client sent it
	b.WriteString(key)
	b.Write(body)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Result answers id with a result.
func Result(id json.RawMessage, result any) Response { return Response{ID: id, Result: result} }

// Fail answers id with an error.
func Fail(id json.RawMessage, err *Error) Response { return Response{ID: id, Error: err} }
