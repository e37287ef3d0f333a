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
