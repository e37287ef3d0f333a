package models

import "time"

// RetryGrant is a one-shot permission for an agent to retry one tool call its own
// check refused and a person then approved (Claude Code's auto mode, escalated through
// its PermissionDenied hook; internal/grants). Not to be confused with a session's
// permission grants (who may read or decide its prompts): a retry grant allows one
// tool call, once. The tool input is kept only as InputHash (it may hold secrets).
type RetryGrant struct {
	ID            string     `gorm:"primaryKey"`
	ElicitationID string     `gorm:"column:elicitation_id"`
	SessionID     string     `gorm:"column:session_id"`
	ToolName      string     `gorm:"column:tool_name"`
	InputHash     string     `gorm:"column:input_hash"`
	GrantedBy     string     `gorm:"column:granted_by"`
	CreatedAt     time.Time  `gorm:"column:created_at"`
	ExpiresAt     time.Time  `gorm:"column:expires_at"`
	UsedAt        *time.Time `gorm:"column:used_at"`
}

// TableName is the table retry_grants.
func (RetryGrant) TableName() string { return "retry_grants" }
