package models

import "time"

// SignIn is one browser's sign-in (--auth oidc). The secret the cookie carries is
// never stored: Hash is its hex SHA-256. Deleting the row signs that browser — and any
// copy of its cookie — out everywhere.
type SignIn struct {
	Hash      string    `gorm:"primaryKey;column:hash"`
	User      string    `gorm:"column:user_id"`
	CreatedAt time.Time `gorm:"column:created_at"`
	ExpiresAt time.Time `gorm:"column:expires_at"`
}

// TableName is the table sign_ins.
func (SignIn) TableName() string { return "sign_ins" }
