package models

import (
	"strconv"
	"time"
)

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

// Notice is the NOTIFY with which a Postgres commit that logs stream events tells
// every replica's listener of them: on Channel, the events' log ids, comma-separated,
// which each listener reads back from the log. It is data, not a callback, so a
// statement can send it itself — the ids exist only once the statement has run. nil
// where nobody listens (a single process's log).
type Notice struct {
	Channel string
}

// MaxNoticeRows is how many event ids one notice names: a NOTIFY's payload is capped
// at 8,000 bytes.
const MaxNoticeRows = 200

// Payload is the notice's payload naming rows, at most MaxNoticeRows of them.
func (n *Notice) Payload(rows []SessionEvent) string {
	b := make([]byte, 0, 12*len(rows))
	for i, r := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, r.ID, 10)
	}
	return string(b)
}
