package mcp

import (
	"encoding/json"
	"strings"
)

// JSON-RPC error codes of MCP itself.
const (
	// CodeMissingCapability (2026-07-28) says the server needs a client capability the
	// client did not declare: here, any elicitation mode to ask a person through.
	CodeMissingCapability = -32021
	// CodeURLElicitationRequired (2025-11-25) tells a client that declared URL-mode
	// elicitation to have its user open a link, then retry the call.
	CodeURLElicitationRequired = -32042
)

// MetaProgressToken is the request _meta key under which a client asks for progress.
const MetaProgressToken = "progressToken"

// Elicitation is what a client declared it can do with elicitation requests.
type Elicitation struct {
	Form bool `json:"f,omitempty"`
	URL  bool `json:"u,omitempty"`
}

// Client is what the proxy knows of an MCP client: the protocol revision it speaks
// and, when it declared them, its elicitation capabilities.
type Client struct {
	// Version is the negotiated protocol revision; empty when the client never said
	// (the seed's bare tools/call, with no handshake, header or _meta).
	Version string `json:"v,omitempty"`
	// Elicitation is nil when the client declared nothing about elicitation.
	Elicitation *Elicitation `json:"e,omitempty"`
}

// MultiRoundTrip reports whether the client takes input_required results: 2026-07-28
// and later, and the bare client of the seed (which the proxy answers as such).
func (c Client) MultiRoundTrip() bool { return c.Version == "" || c.Version >= ProtocolLatest }

// Latest reports whether the client negotiated 2026-07-28 or later, whose results all
// carry resultType.
func (c Client) Latest() bool { return c.Version >= ProtocolLatest }

// parseElicitation reads a capabilities.elicitation object: {} is form only (the
// revision that introduced URL mode says so), {"form":…} and {"url":…} name the modes.
func parseElicitation(raw json.RawMessage) *Elicitation {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return nil
	}
	_, form := m["form"]
	_, url := m["url"]
	if !form && !url {
		form = true
	}
	return &Elicitation{Form: form, URL: url}
}

// ClientFromInitialize reads the revision the client will speak (what InitializeResult
// answers) and its declared elicitation modes from initialize params.
func ClientFromInitialize(params json.RawMessage) Client {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Elicitation json.RawMessage `json:"elicitation"`
		} `json:"capabilities"`
	}
	_ = json.Unmarshal(params, &p)
	return Client{Version: negotiate(p.ProtocolVersion), Elicitation: parseElicitation(p.Capabilities.Elicitation)}
}

// negotiate picks the revision initialize answers with: the client's when supported,
// else our newest legacy one (the client then decides whether it can go on).
func negotiate(asked string) string {
	for _, v := range SupportedVersions() {
		if v == asked {
			return v
		}
	}
	return ProtocolLegacyDefault
}

// RequestMeta is what a request's params._meta says about its client.
type RequestMeta struct {
	// Version is _meta["io.modelcontextprotocol/protocolVersion"] (2026-07-28).
	Version string
	// Elicitation is from _meta["io.modelcontextprotocol/clientCapabilities"]; nil
	// when the request carries no capabilities.
	Elicitation *Elicitation
	// ProgressToken is _meta.progressToken (a string or number), nil when absent.
	ProgressToken json.RawMessage
	// ToolUseID is _meta["claudecode/toolUseId"]: Claude Code's id of the model's tool
	// use, the same on every retry of one call.
	ToolUseID string
	// Tasks: the request declared the Tasks extension (ExtensionTasks) in its client
	// capabilities, so it may be answered with a task. Only this request's own
	// declaration counts (never one made earlier).
	Tasks bool
	// ToolApproval: the request also declared the tool-approval extension: an approval
	// is a task that stays working while the person decides out of band.
	ToolApproval bool
}

// ParseRequestMeta reads params._meta; anything unreadable counts as absent.
func ParseRequestMeta(params json.RawMessage) RequestMeta {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var out RequestMeta
	if json.Unmarshal(params, &p) != nil || p.Meta == nil {
		return out
	}
	_ = json.Unmarshal(p.Meta[MetaProtocolVersion], &out.Version)
	if raw, ok := p.Meta[MetaClientCapabilities]; ok {
		var caps struct {
			Elicitation json.RawMessage            `json:"elicitation"`
			Extensions  map[string]json.RawMessage `json:"extensions"`
		}
		if json.Unmarshal(raw, &caps) == nil {
			out.Tasks = declared(caps.Extensions, ExtensionTasks)
			out.ToolApproval = out.Tasks && (declared(caps.Extensions, ExtensionToolApproval) || declared(caps.Extensions, ExtensionToolApprovalAuthZEN))
			out.Elicitation = parseElicitation(caps.Elicitation)
			if out.Elicitation == nil {
				out.Elicitation = &Elicitation{} // capabilities declared, elicitation not among them
			}
		}
	}
	if tok, ok := p.Meta[MetaProgressToken]; ok {
		var v any
		if json.Unmarshal(tok, &v) == nil {
			switch v.(type) {
			case string, float64:
				out.ProgressToken = tok
			}
		}
	}
	var tu string
	if json.Unmarshal(p.Meta["claudecode/toolUseId"], &tu) == nil {
		out.ToolUseID = strings.TrimSpace(tu)
	}
	return out
}

// declared reports whether an extensions capability names ext with an object (its
// settings; {} when it has none).
func declared(exts map[string]json.RawMessage, ext string) bool {
	raw, ok := exts[ext]
	if !ok {
		return false
	}
	var settings map[string]any
	return json.Unmarshal(raw, &settings) == nil && settings != nil
}
