package store

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// SessionEvent is one row of the durable stream event log.
type SessionEvent struct {
	ID            int64 `gorm:"primaryKey;autoIncrement"`
	SessionID     string
	Seq           int64
	Type          string
	Data          string
	ElicitationID *string
	CreatedAt     time.Time
}

// LoggedEvent is what AppendEvents writes: one event for one session.
type LoggedEvent struct {
	SessionID     string
	Type          string
	Data          []byte
	ElicitationID string
}

// AppendEvents writes events to the log in one transaction, giving each the next
// sequence number of its session, and returns the rows (with ids and seqs) in order.
// afterCommit-style notification is the caller's job; notify, when set, runs inside
// the transaction (Postgres NOTIFY is delivered at commit).
func (s *Store) AppendEvents(ctx context.Context, evs []LoggedEvent, notify func(tx *gorm.DB, rows []SessionEvent) error) ([]SessionEvent, error) {
	rows := make([]SessionEvent, len(evs))
	err := s.w(ctx).Transaction(func(tx *gorm.DB) error {
		now := time.Now().UTC()
		for i, ev := range evs {
			var seq int64
			if err := tx.Raw("UPDATE sessions SET event_seq = event_seq + 1 WHERE id = ? RETURNING event_seq", ev.SessionID).
				Scan(&seq).Error; err != nil {
				return err
			}
			rows[i] = SessionEvent{SessionID: ev.SessionID, Seq: seq, Type: ev.Type, Data: string(ev.Data), CreatedAt: now}
			if ev.ElicitationID != "" {
				id := ev.ElicitationID
				rows[i].ElicitationID = &id
			}
		}
		if err := tx.Create(&rows).Error; err != nil {
			return err
		}
		if notify != nil {
			return notify(tx, rows)
		}
		return nil
	})
	return rows, err
}

// EventsByID loads log rows by id, in id order.
func (s *Store) EventsByID(ctx context.Context, ids []int64) ([]SessionEvent, error) {
	var rows []SessionEvent
	if len(ids) == 0 {
		return rows, nil
	}
	return rows, s.ctx(ctx).Where("id IN ?", ids).Order("id").Find(&rows).Error
}

// EventsSince lists a session's events with seq > after, oldest first, at most limit.
func (s *Store) EventsSince(ctx context.Context, sessionID string, after int64, limit int) ([]SessionEvent, error) {
	var rows []SessionEvent
	return rows, s.ctx(ctx).Where("session_id = ? AND seq > ?", sessionID, after).
		Order("seq").Limit(limit).Find(&rows).Error
}

// OldestRetainedSeq returns the smallest retained seq of a session (0 when none).
func (s *Store) OldestRetainedSeq(ctx context.Context, sessionID string) (int64, error) {
	var seq *int64
	err := s.ctx(ctx).Model(&SessionEvent{}).Select("MIN(seq)").Where("session_id = ?", sessionID).Scan(&seq).Error
	if err != nil || seq == nil {
		return 0, err
	}
	return *seq, nil
}

// pruneTimeout bounds PruneEvents: one statement that may delete a large backlog,
// so it gets longer than the per-statement default (DefaultTimeout).
const pruneTimeout = 5 * time.Minute

// PruneEvents deletes log rows older than before; the log is bounded by time.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, pruneTimeout)
	defer cancel()
	res := s.w(ctx).Where("created_at < ?", before).Delete(&SessionEvent{})
	return res.RowsAffected, res.Error
}

// CurrentSeq returns the last sequence number handed out for a session.
func (s *Store) CurrentSeq(ctx context.Context, sessionID string) (int64, error) {
	var seq int64
	err := s.ctx(ctx).Raw("SELECT event_seq FROM sessions WHERE id = ?", sessionID).Scan(&seq).Error
	return seq, err
}
