package store

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
)

// InsertAuditCheckpoint stores the day's signed checkpoint unless that day has one:
// the day is the primary key, so of all replicas taking it at once exactly one
// stores it (and exports it). It reports whether this call stored it.
func (s *Store) InsertAuditCheckpoint(ctx context.Context, c audit.Checkpoint) (bool, error) {
	at, err := time.Parse(audit.TimeLayout, c.Time)
	if err != nil {
		return false, err
	}
	res := s.w(ctx).Exec(`INSERT INTO audit_checkpoints (day, seq, hash, taken_at, key, sig) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (day) DO NOTHING`, c.Day, c.Seq, c.Hash, at.UTC(), c.Key, c.Sig)
	return res.RowsAffected == 1, res.Error
}

// LatestAuditCheckpoint reads the most recent day's checkpoint; ErrNotFound when none
// was taken yet.
func (s *Store) LatestAuditCheckpoint(ctx context.Context) (*audit.Checkpoint, error) {
	var rows []struct {
		Day, Hash, Key, Sig string
		Seq                 int64
		TakenAt             time.Time
	}
	if err := s.ctx(ctx).Raw(`SELECT day, seq, hash, taken_at, key, sig FROM audit_checkpoints ORDER BY day DESC LIMIT 1`).
		Scan(&rows).Error; err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, ErrNotFound
	}
	r := rows[0]
	return &audit.Checkpoint{Day: r.Day, Seq: r.Seq, Hash: r.Hash, Time: audit.FormatTime(r.TakenAt), Key: r.Key, Sig: r.Sig}, nil
}
