package models

import "time"

// SessionEvent is one row of the durable stream event log (session_events): an event
// of one session with its per-session sequence number, replayed to a client that
// resumes its stream.
type SessionEvent struct {
	ID            int64 `gorm:"primaryKey;autoIncrement"`
	SessionID     string
	Seq           int64
	Type          string
	Data          string
	ElicitationID *string
	CreatedAt     time.Time
}

// LoggedEvent is what appending to the event log writes: one event for one session.
type LoggedEvent struct {
	SessionID     string
	Type          string
	Data          []byte
	ElicitationID string
	// Stage (LoggedRequest, LoggedResolved), when set, makes the event a lifecycle
	// step of ElicitationID that is logged exactly once.
	Stage int
}
