package store

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse-dev/gatehouse/models"
)

// AppendEvents writes events to the log in one transaction, giving each the next
// sequence number of its session, and returns the rows (with ids and seqs) aligned
// with evs. An event with a Stage is written only if this transaction moves its prompt
// to that stage; otherwise it was logged before, and its row comes back zero (ID 0).
// afterCommit-style notification is the caller's job; notify, when set, is the
// Postgres NOTIFY naming the rows written, sent inside the transaction, so it is
// delivered at commit.
func (s *Store) AppendEvents(ctx context.Context, evs []models.LoggedEvent, notify *models.Notice) ([]models.SessionEvent, error) {
	var rows []models.SessionEvent
	var err error
	if s.dialect == SQLite && notify == nil {
		// Every prompt is logged twice (parked, decided), each time on the path to a
		// person's screen: on SQLite, database/sql directly, as for the verdict itself
		// (see decideAndChainSQLite), costs half the CPU of going through GORM.
		rows, err = s.appendEventsSQL(ctx, evs)
	} else {
		err = s.inTx(ctx, s.wdb, func(tx *gorm.DB) error {
			var err error
			if rows, err = appendEvents(gormTx{tx}, evs); err != nil || notify == nil {
				return err
			}
			written := make([]models.SessionEvent, 0, len(rows))
			for _, r := range rows {
				if r.ID != 0 {
					written = append(written, r)
				}
			}
			if len(written) == 0 {
				return nil
			}
			return notifyRows(gormTx{tx}, written, notify)
		})
	}
	if err != nil {
		return make([]models.SessionEvent, len(evs)), err
	}
	return rows, nil
}

func (s *Store) appendEventsSQL(ctx context.Context, evs []models.LoggedEvent) ([]models.SessionEvent, error) {
	var rows []models.SessionEvent
	err := s.writeSQL(ctx, func(tx sqlTx) error {
		var err error
		rows, err = appendEvents(tx, evs)
		return err
	})
	return rows, err
}

// appendEvents is AppendEvents' work inside its transaction: the events whose stage
// this transaction claims (or that claim none) are appended by appendEventsBatch.
func appendEvents(tx statements, evs []models.LoggedEvent) ([]models.SessionEvent, error) {
	skip, err := claimStages(tx, evs)
	if err != nil {
		return nil, err
	}
	kept := make([]models.LoggedEvent, 0, len(evs))
	for i, ev := range evs {
		if !skip[i] {
			kept = append(kept, ev)
		}
	}
	written, err := appendEventsBatch(tx, kept)
	if err != nil {
		return nil, err
	}
	rows := make([]models.SessionEvent, len(evs))
	for i := range evs {
		if !skip[i] {
			rows[i], written = written[0], written[1:]
		}
	}
	return rows, nil
}

// claimStages moves each prompt named by a staged event to that stage, once per
// (prompt, stage), and reports which events to skip: those whose prompt already was
// that far. The row lock this takes orders two replicas logging the same step.
//
// The prompts are claimed in id order, the order every statement locking several
// prompts takes them in (RenewLeases, a group of verdicts): two transactions never
// wait on each other in a cycle, which Postgres would break only after a second.
func claimStages(tx statements, evs []models.LoggedEvent) ([]bool, error) {
	type step struct {
		id    string
		stage int
	}
	var steps []step
	for _, ev := range evs {
		if ev.Stage != 0 && ev.ElicitationID != "" {
			steps = append(steps, step{ev.ElicitationID, ev.Stage})
		}
	}
	slices.SortFunc(steps, func(a, b step) int {
		return cmp.Or(strings.Compare(a.id, b.id), cmp.Compare(a.stage, b.stage))
	})
	claimed := map[step]bool{}
	for _, k := range slices.Compact(steps) {
		n, err := tx.exec("UPDATE elicitations SET logged = ? WHERE id = ? AND logged < ?", k.stage, k.id, k.stage)
		if err != nil {
			return nil, err
		}
		claimed[k] = n == 1
	}
	skip := make([]bool, len(evs))
	for i, ev := range evs {
		if ev.Stage != 0 && ev.ElicitationID != "" {
			skip[i] = !claimed[step{ev.ElicitationID, ev.Stage}]
		}
	}
	return skip, nil
}

// UnloggedElicitations lists prompts whose events the log lacks: pending ones with no
// request event, decided ones with no resolved event, created before before (younger
// ones are still on their way through the normal path), oldest first.
func (s *Store) UnloggedElicitations(ctx context.Context, before time.Time, limit int) ([]models.Elicitation, error) {
	var rows []models.Elicitation
	err := s.ctx(ctx).Where("logged < ? AND created_at < ?", models.LoggedResolved, before).
		Where(s.ctx(ctx).Where("status = ? AND logged = ?", models.StatusPending, models.LoggedNone).
			Or("status <> ? AND (resolved_at IS NULL OR resolved_at < ?)", models.StatusPending, before)).
		Order("created_at").Limit(limit).Find(&rows).Error
	return rows, err
}

// EventsByID loads log rows by id, in id order.
func (s *Store) EventsByID(ctx context.Context, ids []int64) ([]models.SessionEvent, error) {
	var rows []models.SessionEvent
	if len(ids) == 0 {
		return rows, nil
	}
	return rows, s.ctx(ctx).Where("id IN ?", ids).Order("id").Find(&rows).Error
}

// EventsSince lists a session's events with seq > after, oldest first, at most limit.
func (s *Store) EventsSince(ctx context.Context, sessionID string, after int64, limit int) ([]models.SessionEvent, error) {
	var rows []models.SessionEvent
	return rows, s.ctx(ctx).Where("session_id = ? AND seq > ?", sessionID, after).
		Order("seq").Limit(limit).Find(&rows).Error
}

// OldestRetainedSeq returns the smallest retained seq of a session (0 when none).
func (s *Store) OldestRetainedSeq(ctx context.Context, sessionID string) (int64, error) {
	var seq *int64
	err := s.ctx(ctx).Model(&models.SessionEvent{}).Select("MIN(seq)").Where("session_id = ?", sessionID).Scan(&seq).Error
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
	res := s.w(ctx).Where("created_at < ?", before).Delete(&models.SessionEvent{})
	return res.RowsAffected, res.Error
}

// CurrentSeq returns the last sequence number handed out for a session.
func (s *Store) CurrentSeq(ctx context.Context, sessionID string) (int64, error) {
	var seq int64
	err := s.ctx(ctx).Raw("SELECT event_seq FROM sessions WHERE id = ?", sessionID).Scan(&seq).Error
	return seq, err
}
