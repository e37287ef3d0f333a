// Package models holds the GORM structs that mirror Gatehouse's tables and the small
// state helpers around them. The schema itself is owned by the versioned SQL in
// migrations/; these structs only describe it to GORM (no AutoMigrate).
//
// It also holds the values the store interfaces speak besides rows (a Decision, a
// PendingQuery, an OutboxPlan, ...): each domain package declares the store methods
// it needs, internal/store implements them, and both sides share these types without
// importing each other.
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
	// OriginClaudeDenied is a refusal of Claude Code's auto mode escalated to a person
	// (its PermissionDenied hook): an approval lets the agent retry the call once.
	OriginClaudeDenied = "claude_permission_denied"
	OriginCodex        = "codex"
	OriginPolicy       = "policy"
	OriginMCPEvent     = "mcp_event"
	OriginMCPInput     = "mcp_input"
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
	// ViaRule: a Gatehouse rule answered without asking anyone (Elicitation.RuleID
	// names it; ResolvedBy is the person who made the rule).
	ViaRule = "rule"
	// ViaPush, ViaNtfy, ViaSlack: a person answered from a notification on that
	// channel (an action link or a Slack button); ViaLink from an action link opened
	// elsewhere.
	ViaPush  = "push"
	ViaNtfy  = "ntfy"
	ViaSlack = "slack"
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
	// Notified is how far the prompt's notifications are planned (NotifiedNone,
	// NotifiedCreated, NotifiedAll; see internal/notify).
	Notified int `gorm:"column:notified"`
	// CallKey identifies the MCP tool call an approval is for (see mcpproxy), so a
	// retried call finds its approval instead of asking again; nil for other prompts.
	CallKey *string `gorm:"column:call_key"`
	// RuleID names the Gatehouse rule that answered the prompt (ResolvedVia ViaRule) or
	// that set its wait and timeout answer; nil for prompts no rule touched.
	RuleID *string `gorm:"column:rule_id"`
	// TokenID names the API token the prompt was parked with (nil: none), so a
	// hooks-only token reads only the prompts it parked itself (ParkedWith).
	TokenID *string `gorm:"column:token_id"`
}

// ParkedWith reports whether e was parked with API token tokenID.
func (e *Elicitation) ParkedWith(tokenID string) bool {
	return tokenID != "" && e.TokenID != nil && *e.TokenID == tokenID
}

// Stages of Elicitation.Logged.
const (
	LoggedNone     = 0
	LoggedRequest  = 1
	LoggedResolved = 2
)

// Stages of Elicitation.Notified.
const (
	NotifiedNone    = 0
	NotifiedCreated = 1
	NotifiedAll     = 2
)

// IsPending reports whether nobody has decided e yet.
func (e *Elicitation) IsPending() bool { return e.Status == StatusPending }

// Rule effects: what a matching request gets.
const (
	EffectAllow = "allow"
	EffectDeny  = "deny"
	// EffectAsk parks the request for a person, with the rule's own wait and answer
	// when that wait runs out.
	EffectAsk = "ask"
)

// Rule is a Gatehouse rule: for one tool and a pattern over its input, within a scope,
// allow or deny at once (or ask with its own wait), until ExpiresAt or until revoked.
// Rows are never deleted (decisions name them).
type Rule struct {
	ID        string `gorm:"primaryKey" json:"id"`
	Effect    string `gorm:"column:effect" json:"effect"`
	Tool      string `gorm:"column:tool" json:"tool"`
	MatchKind string `gorm:"column:match_kind" json:"-"`
	Pattern   string `gorm:"column:pattern" json:"-"`
	// MatchArgument names the one argument an MCP (or other) tool's rule compares; ""
	// compares the whole input as canonical JSON.
	MatchArgument string `gorm:"column:match_argument" json:"-"`
	ScopeKind     string `gorm:"column:scope_kind" json:"-"`
	// ScopeValue is the root session id, agent id or directory the scope names ("" for
	// everywhere).
	ScopeValue string `gorm:"column:scope_value" json:"-"`
	// TimeoutSeconds is an ask rule's wait (0: the server's default); OnTimeout the
	// answer when it runs out ("", "none", "deny", "allow").
	TimeoutSeconds int64      `gorm:"column:timeout_seconds" json:"-"`
	OnTimeout      string     `gorm:"column:on_timeout" json:"-"`
	Note           string     `gorm:"column:note" json:"note,omitempty"`
	CreatedBy      string     `gorm:"column:created_by" json:"created_by"`
	CreatedAt      time.Time  `gorm:"column:created_at" json:"created_at"`
	ExpiresAt      *time.Time `gorm:"column:expires_at" json:"expires_at"`
	RevokedAt      *time.Time `gorm:"column:revoked_at" json:"revoked_at,omitempty"`
	RevokedBy      *string    `gorm:"column:revoked_by" json:"revoked_by,omitempty"`
	FireCount      int64      `gorm:"column:fire_count" json:"fire_count"`
	LastFiredAt    *time.Time `gorm:"column:last_fired_at" json:"last_fired_at"`
}

// Live reports whether r still applies at now: not revoked and not expired.
func (r *Rule) Live(now time.Time) bool {
	return r.RevokedAt == nil && (r.ExpiresAt == nil || r.ExpiresAt.After(now))
}
