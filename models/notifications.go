package models

import "time"

// PushSubscription is one browser subscribed to Web Push for User.
type PushSubscription struct {
	ID        string    `gorm:"primaryKey"`
	User      string    `gorm:"column:user_id"`
	Endpoint  string    `gorm:"column:endpoint"`
	P256dh    string    `gorm:"column:p256dh"`
	Auth      string    `gorm:"column:auth"`
	UserAgent string    `gorm:"column:user_agent"`
	CreatedAt time.Time `gorm:"column:created_at"`
}

// Notification is one delivery in the outbox: one message for one person on one
// channel (and device). See migrations/*/00012_notifications.sql.
type Notification struct {
	ID            int64      `gorm:"primaryKey;autoIncrement"`
	ElicitationID string     `gorm:"column:elicitation_id"`
	User          string     `gorm:"column:user_id"`
	Channel       string     `gorm:"column:channel"`
	Target        string     `gorm:"column:target"`
	Kind          string     `gorm:"column:kind"`
	State         string     `gorm:"column:state"`
	Attempts      int        `gorm:"column:attempts"`
	DueAt         time.Time  `gorm:"column:due_at"`
	CreatedAt     time.Time  `gorm:"column:created_at"`
	DeliveredAt   *time.Time `gorm:"column:delivered_at"`
	LastError     string     `gorm:"column:last_error"`
	Ref           string     `gorm:"column:ref"`
}

// Delivery states (Notification.State).
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
	DeliverySkipped   = "skipped"
)

// OutboxPlan is what planning one prompt decided: the deliveries to add, the stage the
// prompt reaches, and the pending, never-tried deliveries to skip (with why).
type OutboxPlan struct {
	Add     []Notification
	Stage   int
	Skip    []int64
	SkipWhy string
}

// DeliveryResult is how one claimed delivery ended, or when it is tried next.
type DeliveryResult struct {
	ID    int64
	State string
	// Ref is what the channel returned (delivered only).
	Ref string
	// Error explains a failure, a retry or a skip.
	Error string
	// RetryAt is when a pending (retried) delivery is due again.
	RetryAt time.Time
	// Requeue gives the claim's attempt back: the delivery was put off, not tried.
	Requeue bool
}
