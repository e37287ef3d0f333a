// Package codex translates the requests the Codex app-server sends to its client
// (approvals, questions, MCP elicitations) into prompt params, and a human verdict back
// into the JSON-RPC result Codex reads. Pure functions over the standard library only.
//
// A Codex bridge forwards each server → client request verbatim, as the JSON-RPC
// envelope {"id": int|string, "method", "params"}; Gatehouse answers with the result
// object the bridge hands back to Codex (it adds the JSON-RPC id itself).
package codex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/shell"
)

// PreviewLimit is the longest content_preview, in characters.
const PreviewLimit = 1024

// PolicyName is the policy_name every Codex prompt carries.
const PolicyName = "codex_app_server"

// Vendor is the name the approval UI shows instead of internal stamps.
const Vendor = "Codex"

// IDPrefix starts every Codex elicitation id (§5.4): ids are deterministic so that a
// bridge retrying the same request re-attaches to the same prompt.
const IDPrefix = "elicit_codex_"

// Methods Gatehouse understands.
const (
	MethodCommandApproval    = "item/commandExecution/requestApproval"
	MethodFileChangeApproval = "item/fileChange/requestApproval"
	MethodPermissions        = "item/permissions/requestApproval"
	MethodRequestUserInput   = "item/tool/requestUserInput"
	MethodMCPElicitation     = "mcpServer/elicitation/request"
	MethodExecCommand        = "execCommandApproval" // legacy (v1) protocol
	MethodApplyPatch         = "applyPatchApproval"  // legacy (v1) protocol
)

// Phases of the published params.
const (
	PhaseCommand     = "codex_command_approval"
	PhaseFileChange  = "codex_file_change_approval"
	PhasePermissions = "codex_permissions_approval"
	PhaseUserInput   = "codex_request_user_input"
	PhaseMCP         = "codex_mcp_elicitation"
)

// Methods lists every supported method, for error messages and docs.
func Methods() []string {
	return []string{MethodCommandApproval, MethodFileChangeApproval, MethodPermissions,
		MethodRequestUserInput, MethodMCPElicitation, MethodExecCommand, MethodApplyPatch}
}

// ErrUnsupportedMethod is wrapped by Decode when the envelope is well formed but names a
// method Gatehouse cannot answer.
var ErrUnsupportedMethod = errors.New("unsupported method")

// Request is one decoded Codex server request.
type Request struct {
	// ID is the JSON-RPC id: an int64 or a string.
	ID any
	// Method is one of the supported methods.
	Method string
	// Params is the decoded params object (numbers kept as json.Number).
	Params map[string]any
}

// Decode reads and checks the JSON-RPC envelope and the params the method needs.
// Errors are client errors, worded for the bridge's author; an unknown method wraps
// ErrUnsupportedMethod. Unknown fields (e.g. "jsonrpc") are ignored.
func Decode(body []byte) (*Request, error) {
	var env map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil || env == nil {
		return nil, errors.New(`body must be a JSON-RPC request object {"id": int|string, "method", "params"}`)
	}
	if dec.More() {
		return nil, errors.New("body must hold exactly one JSON object")
	}
	id, err := decodeID(env["id"])
	if err != nil {
		return nil, err
	}
	var method string
	if raw, ok := env["method"]; !ok || json.Unmarshal(raw, &method) != nil || strings.TrimSpace(method) == "" {
		return nil, errors.New("method is required and must be a non-empty string")
	}
	if !supported(method) {
		return nil, fmt.Errorf("%w %q (want one of %s)", ErrUnsupportedMethod, method, strings.Join(Methods(), ", "))
	}
	params, err := decodeObject(env["params"])
	if err != nil || params == nil {
		return nil, errors.New("params is required and must be an object")
	}
	r := &Request{ID: id, Method: method, Params: params}
	if err := r.check(); err != nil {
		return nil, err
	}
	return r, nil
}

func supported(method string) bool {
	for _, m := range Methods() {
		if m == method {
			return true
		}
	}
	return false
}

// decodeID accepts a JSON integer (kept as int64) or a string, as JSON-RPC allows;
// null, fractions and other types are refused because they cannot name a request.
func decodeID(raw json.RawMessage) (any, error) {
	const msg = "id is required and must be an integer or a string"
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New(msg)
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errors.New(msg)
		}
		if len(s) > 200 {
			return nil, errors.New("id is longer than 200 characters")
		}
		return s, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return nil, errors.New(msg)
	}
	return n, nil
}

func decodeObject(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errors.New("not an object")
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// check validates the params each method cannot do without.
func (r *Request) check() error {
	p := r.Params
	switch r.Method {
	case MethodCommandApproval:
		if v, ok := p["command"]; ok && v != nil {
			if _, ok := commandText(v); !ok {
				return errors.New("params.command must be a string or a list of strings")
			}
		}
	case MethodExecCommand:
		if _, ok := commandText(p["command"]); !ok {
			return errors.New("params.command is required and must be a list of strings (or a string)")
		}
	case MethodPermissions:
		if _, ok := p["permissions"].(map[string]any); !ok {
			return errors.New("params.permissions is required and must be an object")
		}
	case MethodRequestUserInput:
		qs, ok := p["questions"].([]any)
		if !ok || len(qs) == 0 {
			return errors.New("params.questions is required and must be a non-empty list")
		}
		for i, q := range qs {
			m, ok := q.(map[string]any)
			if !ok {
				return fmt.Errorf("params.questions[%d] must be an object", i)
			}
			if str(m["id"]) == "" {
				return fmt.Errorf("params.questions[%d].id is required and must be a string", i)
			}
		}
	case MethodMCPElicitation:
		switch r.mcpMode() {
		case "form":
			if v, ok := p["requestedSchema"]; ok && v != nil {
				if _, ok := v.(map[string]any); !ok {
					return errors.New("params.requestedSchema must be an object")
				}
			}
		case "url":
			if strings.TrimSpace(str(p["url"])) == "" {
				return errors.New("params.url is required in url mode")
			}
		default:
			return fmt.Errorf("params.mode must be form or url, not %q", str(p["mode"]))
		}
		if strings.TrimSpace(str(p["message"])) == "" {
			return errors.New("params.message is required and must be a string")
		}
	}
	return nil
}

// mcpMode is the MCP elicitation's mode; absent means form, as in MCP.
func (r *Request) mcpMode() string {
	if m, ok := r.Params["mode"]; ok && m != nil {
		return str(m)
	}
	return "form"
}

// CanonicalKey is the canonical JSON of {method, request_id, session_id} — keys
// sorted, no insignificant space, no HTML escaping — that the deterministic elicitation
// id hashes (ids.Deterministic(IDPrefix, key)). The request id keeps its JSON type: 7
// and "7" are different requests.
func (r *Request) CanonicalKey(sessionID string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// encoding/json writes map keys sorted, which is the canonical order.
	_ = enc.Encode(map[string]any{"method": r.Method, "request_id": r.ID, "session_id": sessionID})
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// Fingerprint hashes the method and params, so that a re-attach by id can tell a true
// retry of this request from a different request that reuses its JSON-RPC id (for
// example after the app-server restarted its id counter).
func (r *Request) Fingerprint() string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"method": r.Method, "params": r.Params})
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:16])
}

// commandText renders a command given as a string or as argv. An argv is joined as a
// shell would have to read it (each word quoted when it needs it), so the person sees,
// and rules match, exactly what runs.
func commandText(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case []any:
		parts := make([]string, 0, len(t))
		for _, a := range t {
			s, ok := a.(string)
			if !ok {
				return "", false
			}
			parts = append(parts, s)
		}
		return shell.Join(parts)
	}
	return "", false
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
