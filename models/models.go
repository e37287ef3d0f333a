// Package models holds the GORM structs that mirror Gatehouse's tables and the small
// state helpers around them. The schema itself is owned by the versioned SQL in
// migrations/; these structs only describe it to GORM (no AutoMigrate).
package models

import (
	"encoding/json"
	"time"
)

// Agent is a registered agent definition that sessions run under.
type Agent struct {
	ID          string          `gorm:"primaryKey" json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Config      json.RawMessage `gorm:"type:text" json:"config"`
	CreatedBy   string          `json:"created_by"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
}

// Session kinds.
const (
	KindDefault  = "default"
	KindSubAgent = "sub_agent"
)

// Session is one agent conversation. Sub-agents are child sessions; Path is the
// materialized path "/root/.../self/" so that descendants are one prefix query and
// ancestors are one IN query over the ids the path already names.
type Session struct {
	ID                string  `gorm:"primaryKey"`
	AgentID           string  `gorm:"column:agent_id"`
	Kind              string  `gorm:"column:kind"`
	Title             string  `gorm:"column:title"`
	ParentID          *string `gorm:"column:parent_id"`
	RootID            string  `gorm:"column:root_id"`
	Path              string  `gorm:"column:path"`
	Depth             int     `gorm:"column:depth"`
	CreatedBy         string  `gorm:"column:created_by"`
	ExternalSessionID *string `gorm:"column:external_session_id"`
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// AncestorIDs returns the ids of every ancestor of s, root first, read from its path.
func (s *Session) AncestorIDs() []string {
	ids := splitPath(s.Path)
	if len(ids) == 0 {
		return nil
	}
	return ids[:len(ids)-1]
}

func splitPath(p string) []string {
	var out []string
	start := -1
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			if start >= 0 && i > start {
				out = append(out, p[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// Permission grants User a Level on a top-level session (sub-agents inherit from their root).
type Permission struct {
	SessionID string `gorm:"primaryKey;column:session_id"`
	User      string `gorm:"primaryKey;column:user_id"`
	Level     int    `gorm:"column:level"`
	CreatedAt time.Time
}

// Elicitation statuses.
const (
	StatusPending   = "pending"
	StatusResolved  = "resolved"
	StatusExpired   = "expired"
	StatusAbandoned = "abandoned"
)

// Elicitation origins.
const (
	OriginClaudePermission = "claude_permission"
	OriginClaudePreToolUse = "claude_pre_tool_use"
	OriginClaudeElicit     = "claude_elicitation"
	OriginCodex            = "codex"
	OriginPolicy           = "policy"
	OriginMCPEvent         = "mcp_event"
	OriginMCPInput         = "mcp_input"
)

// Ways a verdict can arrive (resolved_via).
const (
	ViaAPI     = "api"
	ViaEvent   = "event"
	ViaPage    = "page"
	ViaInbox   = "inbox"
	ViaTimeout = "timeout"
	// ViaShutdown: abandoned when the server stopped (rows from before rolling restarts
	// kept prompts pending; no longer written).
	ViaShutdown = "shutdown"
	ViaGrace    = "disconnect"
	// ViaMCPClient: the person at an MCP client declined the approval request there.
	ViaMCPClient = "mcp_client"
)

// Elicitation is one parked request: the source of truth for its state and the audit log.
// Rows are never deleted by normal operation.
type Elicitation struct {
	ID          string          `gorm:"primaryKey"`
	SessionID   string          `gorm:"column:session_id"`
	Origin      string          `gorm:"column:origin"`
	Params      json.RawMessage `gorm:"column:params;type:text"`
	Status      string          `gorm:"column:status"`
	Action      *string         `gorm:"column:action"`
	Content     json.RawMessage `gorm:"column:content;type:text"`
	ResolvedBy  *string         `gorm:"column:resolved_by"`
	ResolvedVia *string         `gorm:"column:resolved_via"`
	CreatedAt   time.Time       `gorm:"column:created_at"`
	ResolvedAt  *time.Time      `gorm:"column:resolved_at"`
	ExpiresAt   time.Time       `gorm:"column:expires_at"`
	// ConsumedAt is set when an accepted approval was spent on the action it authorized.
	ConsumedAt *time.Time `gorm:"column:consumed_at"`
	// LeaseUntil is when a pending prompt whose waiter is gone may be abandoned: the
	// replica holding a waiter keeps pushing it forward (see elicit.Service.RunLeases);
	// nil for prompts nobody waits on.
	LeaseUntil *time.Time `gorm:"column:lease_until"`
	// Logged is how far the prompt's events are in the durable log (LoggedNone,
	// LoggedRequest, LoggedResolved).
	Logged int `gorm:"column:logged"`
	// CallKey identifies the MCP tool call an approval is for (see mcpproxy), so a
	// retried call finds its approval instead of asking again; nil for other prompts.
	CallKey *string `gorm:"column:call_key"`
}

// Stages of Elicitation.Logged.
const (
	LoggedNone     = 0
	LoggedRequest  = 1
	LoggedResolved = 2
)

// IsPending reports whether nobody has decided e yet.
func (e *Elicitation) IsPending() bool { return e.Status == StatusPending }
