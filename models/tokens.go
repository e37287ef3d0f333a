package models

import "time"

// Token scopes.
const (
	// ScopeAll lets a token do anything its owner may.
	ScopeAll = "all"
	// ScopeHooks lets a token only park prompts through the hook routes and read the
	// prompts and sessions it parked on.
	ScopeHooks = "hooks"
)

// APIToken is a personal API token. The secret itself is never stored: Hash is the
// hex SHA-256 of it, Prefix its first characters for telling tokens apart.
type APIToken struct {
	ID         string     `gorm:"primaryKey"`
	Owner      string     `gorm:"column:owner"`
	Name       string     `gorm:"column:name"`
	Prefix     string     `gorm:"column:prefix"`
	Hash       string     `gorm:"column:hash"`
	Scope      string     `gorm:"column:scope"`
	CreatedAt  time.Time  `gorm:"column:created_at"`
	ExpiresAt  *time.Time `gorm:"column:expires_at"`
	LastUsedAt *time.Time `gorm:"column:last_used_at"`
	RevokedAt  *time.Time `gorm:"column:revoked_at"`
}

// TableName is the table api_tokens.
func (APIToken) TableName() string { return "api_tokens" }

// Live reports whether t still authenticates at now: not revoked and not expired.
func (t *APIToken) Live(now time.Time) bool {
	return t.RevokedAt == nil && (t.ExpiresAt == nil || t.ExpiresAt.After(now))
}
