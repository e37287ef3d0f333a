package mcp

import (
	"encoding/json"
)

// Protocol revisions the proxy speaks, newest first. 2026-07-28 is the revision whose
// multi round-trip results (input_required) let the proxy ask for approval without
// holding a connection open; the older ones are answered through initialize.
const (
	ProtocolLatest = "2026-07-28"
	// ProtocolLegacyDefault is what initialize answers when the client asks for a
	// revision we do not know.
	ProtocolLegacyDefault = "2025-11-25"
)

// SupportedVersions lists every revision the proxy accepts, newest first.
func SupportedVersions() []string {
	return []string{ProtocolLatest, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
}

// Meta keys of the 2026-07-28 per-request _meta.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// Implementation names a client or server.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// ServerInfo is Gatehouse as an MCP server.
func ServerInfo(version string) Implementation {
	if version == "" {
		version = "dev"
	}
	return Implementation{Name: "gatehouse", Title: "Gatehouse MCP proxy", Version: version}
}

// instructions tell an MCP client's model what this server is.
const instructions = "Gatehouse proxies these tools; calls may need a person's approval first."

func capabilities() map[string]any {
	// The tool list is the runner's; we send no list_changed notifications.
	return map[string]any{"tools": map[string]any{"listChanged": false}}
}

// DiscoverResult answers server/discover as a 2026-07-28 server. With tasks it also
// advertises the extensions a client declares per request to be served a task: Tasks
// and tool-approval (under both its identifiers); the structured authorization
// denials are on every deny either way.
func DiscoverResult(info Implementation, tasks bool) map[string]any {
	caps := capabilities()
	exts := map[string]any{ExtensionAuthorizationDenials: map[string]any{}}
	if tasks {
		for _, ext := range []string{ExtensionTasks, ExtensionToolApproval, ExtensionToolApprovalAuthZEN} {
			exts[ext] = map[string]any{}
		}
	}
	caps["extensions"] = exts
	return map[string]any{
		"resultType": "complete",
		// What the server offers does not change per user, but the tools behind it
		// do (per session), so nothing here is cached across authorization contexts.
		"ttlMs":             0,
		"cacheScope":        "private",
		"_meta":             map[string]any{MetaServerInfo: info},
		"supportedVersions": SupportedVersions(),
		"capabilities":      caps,
		"instructions":      instructions,
	}
}

// InitializeResult answers initialize for clients that use the handshake. It echoes
// the revision the client asked for when we support it, else our newest legacy one
// (the client then decides whether it can go on).
func InitializeResult(params json.RawMessage, info Implementation) map[string]any {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p)
	version := ProtocolLegacyDefault
	for _, v := range SupportedVersions() {
		if v == p.ProtocolVersion {
			version = v
		}
	}
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    capabilities(),
		"serverInfo":      info,
		"instructions":    instructions,
	}
}
