package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse-dev/gatehouse/models"
)

// GetSettingsDoc returns a person's notification settings document (nil when none).
func (s *Store) GetSettingsDoc(ctx context.Context, user string) ([]byte, error) {
	var docs []string
	err := s.ctx(ctx).Raw("SELECT doc FROM notification_settings WHERE user_id = ?", user).Scan(&docs).Error
	if err != nil || len(docs) == 0 {
		return nil, err
	}
	return []byte(docs[0]), nil
}

// PutSettingsDoc stores a person's notification settings document.
func (s *Store) PutSettingsDoc(ctx context.Context, user string, doc []byte, at time.Time) error {
	return s.w(ctx).Exec(`INSERT INTO notification_settings (user_id, doc, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (user_id) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at`, user, string(doc), at.UTC()).Error
}

// EditorsOf lists the people holding edit access or more on root session rootID (the
// public grant is nobody in particular, so it is not among them).
func (s *Store) EditorsOf(ctx context.Context, rootID string) ([]string, error) {
	var users []string
	err := s.ctx(ctx).Model(&models.Permission{}).Where("session_id = ? AND level >= ? AND user_id <> ?", rootID, 2, PublicUser).
		Order("user_id").Pluck("user_id", &users).Error
	return users, err
}

// Unplanned lists up to limit prompts whose notifications are behind their stage:
// pending prompts not yet announced, decided prompts not yet followed up; oldest first.
// It only reads: ApplyOutboxPlans decides who plans each one.
func (s *Store) Unplanned(ctx context.Context, limit int) ([]models.Elicitation, error) {
	var rows []models.Elicitation
	err := s.ctx(ctx).Where("notified < ?", models.NotifiedAll).
		Where(s.ctx(ctx).Where("status = ? AND notified = ?", models.StatusPending, models.NotifiedNone).Or("status <> ?", models.StatusPending)).
		Order("created_at").Limit(limit).Find(&rows).Error
	return rows, err
}

// ApplyOutboxPlans records plans, one short transaction per prompt. announce maps
// pending prompts to their "created" plans, computed beforehand (reading people's
// settings takes queries that must not run while a prompt row is locked); each is
// written only if its prompt is still pending and unplanned. For each decided prompt
// in decided, followUp plans from the deliveries it has, read inside the transaction so
// what is in flight is seen as it is. A prompt's stage moves by compare-and-set, so
// replicas racing over one prompt plan it once; and a transaction locks one prompt row
// only, so the planner can never be part of a deadlock with the other writers that
// lock several (lease renewal, event logging). It returns how many prompts this call
// planned.
func (s *Store) ApplyOutboxPlans(ctx context.Context, announce map[string]models.OutboxPlan, decided []models.Elicitation,
	followUp func(e *models.Elicitation, have []models.Notification) models.OutboxPlan) (int, error) {
	if s.dialect == SQLite {
		// One writer at a time anyway, so no deadlock to avoid: one commit for the
		// batch keeps the planner's share of the single writer small.
		n := 0
		err := s.inTx(ctx, s.wdb, func(tx *gorm.DB) error {
			var err error
			n, err = s.applyOutboxPlans(tx, announce, decided, followUp)
			return err
		})
		if err != nil {
			return 0, err
		}
		return n, nil
	}
	return s.applyOutboxPlans(s.w(ctx), announce, decided, followUp)
}

// applyOutboxPlans is ApplyOutboxPlans on db: each prompt in a transaction of its own
// (a savepoint when db is itself a transaction).
func (s *Store) applyOutboxPlans(db *gorm.DB, announce map[string]models.OutboxPlan, decided []models.Elicitation,
	followUp func(e *models.Elicitation, have []models.Notification) models.OutboxPlan) (int, error) {
	n := 0
	for id, p := range announce {
		won, err := s.planOne(db, func(tx *gorm.DB) (bool, *models.OutboxPlan, error) {
			res := tx.Exec("UPDATE elicitations SET notified = ? WHERE id = ? AND notified = ? AND status = ?",
				p.Stage, id, models.NotifiedNone, models.StatusPending)
			return res.RowsAffected == 1, &p, res.Error
		})
		if err != nil {
			return n, err
		}
		if won {
			n++
		}
	}
	for i := range decided {
		e := &decided[i]
		won, err := s.planOne(db, func(tx *gorm.DB) (bool, *models.OutboxPlan, error) {
			res := tx.Exec("UPDATE elicitations SET notified = ? WHERE id = ? AND notified = ? AND status <> ?",
				models.NotifiedAll, e.ID, e.Notified, models.StatusPending)
			if res.Error != nil || res.RowsAffected != 1 {
				return false, nil, res.Error
			}
			var have []models.Notification
			if e.Notified > models.NotifiedNone {
				if err := tx.Where("elicitation_id = ?", e.ID).Order("id").Find(&have).Error; err != nil {
					return false, nil, err
				}
			}
			p := followUp(e, have)
			return true, &p, nil
		})
		if err != nil {
			return n, err
		}
		if won {
			n++
		}
	}
	return n, nil
}

// planOne runs one prompt's compare-and-set and, when it wins, writes the plan, in one
// transaction.
func (s *Store) planOne(db *gorm.DB, claim func(tx *gorm.DB) (bool, *models.OutboxPlan, error)) (bool, error) {
	won := false
	err := s.inTx(db.Statement.Context, db, func(tx *gorm.DB) error {
		ok, p, err := claim(tx)
		if err != nil || !ok {
			return err
		}
		won = true
		if len(p.Add) > 0 {
			if err := tx.CreateInBatches(p.Add, 200).Error; err != nil {
				return err
			}
		}
		if len(p.Skip) > 0 {
			// Only deliveries no sender has claimed: a claimed one is in flight, and
			// its sender sees the decision itself.
			return tx.Model(&models.Notification{}).Where("id IN ? AND state = ? AND attempts = 0", p.Skip, models.DeliveryPending).
				Updates(map[string]any{"state": models.DeliverySkipped, "last_error": p.SkipWhy}).Error
		}
		return nil
	})
	return won && err == nil, err
}

// ClaimDeliveries takes up to limit due pending deliveries for sending, oldest due
// first: it counts the attempt and moves due_at to claimUntil, so a sender that dies
// mid-send leaves a claim that lapses and another sender (on any replica) takes the
// delivery then. On Postgres FOR UPDATE SKIP LOCKED gives each delivery to one sender.
func (s *Store) ClaimDeliveries(ctx context.Context, now, claimUntil time.Time, limit int) ([]models.Notification, error) {
	sub := `SELECT id FROM notifications WHERE state = ? AND due_at <= ? ORDER BY due_at LIMIT ?`
	if s.dialect == Postgres {
		sub += ` FOR UPDATE SKIP LOCKED`
	}
	var rows []models.Notification
	err := s.w(ctx).Raw(`UPDATE notifications SET due_at = ?, attempts = attempts + 1 WHERE id IN (`+sub+`) RETURNING *`,
		claimUntil.UTC(), models.DeliveryPending, now.UTC(), limit).Scan(&rows).Error
	return rows, err
}

// FinishDeliveries records results in one transaction. A delivery no longer pending
// (a planner skipped it meanwhile) keeps its state unless it was in fact delivered.
func (s *Store) FinishDeliveries(ctx context.Context, at time.Time, results []models.DeliveryResult) error {
	if len(results) == 0 {
		return nil
	}
	at = at.UTC()
	return s.inTx(ctx, s.wdb, func(tx *gorm.DB) error {
		var plain []int64 // delivered without a ref: one statement for all
		for _, r := range results {
			var err error
			switch {
			case r.State == models.DeliveryDelivered && r.Ref == "":
				plain = append(plain, r.ID)
			case r.State == models.DeliveryDelivered:
				err = tx.Exec("UPDATE notifications SET state = ?, delivered_at = ?, ref = ?, last_error = '' WHERE id = ?",
					r.State, at, r.Ref, r.ID).Error
			case r.State == models.DeliveryPending:
				back := 0
				if r.Requeue {
					back = 1
				}
				err = tx.Exec("UPDATE notifications SET due_at = ?, last_error = ?, attempts = attempts - ? WHERE id = ? AND state = ?",
					r.RetryAt.UTC(), r.Error, back, r.ID, models.DeliveryPending).Error
			default:
				err = tx.Exec("UPDATE notifications SET state = ?, last_error = ? WHERE id = ? AND state = ?",
					r.State, r.Error, r.ID, models.DeliveryPending).Error
			}
			if err != nil {
				return err
			}
		}
		for len(plain) > 0 {
			k := min(len(plain), 500)
			if err := tx.Exec("UPDATE notifications SET state = ?, delivered_at = ?, last_error = '' WHERE id IN ?",
				models.DeliveryDelivered, at, plain[:k]).Error; err != nil {
				return err
			}
			plain = plain[k:]
		}
		return nil
	})
}

// NotificationsOf lists a prompt's deliveries in the order they were planned.
func (s *Store) NotificationsOf(ctx context.Context, eid string) ([]models.Notification, error) {
	var rows []models.Notification
	return rows, s.ctx(ctx).Where("elicitation_id = ?", eid).Order("id").Find(&rows).Error
}

// NotificationsOfMany lists the deliveries of several prompts, by prompt then plan order.
func (s *Store) NotificationsOfMany(ctx context.Context, eids []string) ([]models.Notification, error) {
	var rows []models.Notification
	if len(eids) == 0 {
		return rows, nil
	}
	return rows, s.ctx(ctx).Where("elicitation_id IN ?", eids).Order("elicitation_id, id").Find(&rows).Error
}

// ElicitationsByID loads prompts by id (missing ones are left out).
func (s *Store) ElicitationsByID(ctx context.Context, ids []string) ([]models.Elicitation, error) {
	var rows []models.Elicitation
	if len(ids) == 0 {
		return rows, nil
	}
	return rows, s.ctx(ctx).Where("id IN ?", ids).Find(&rows).Error
}

// SpendActionNonce records an action link's nonce as used; false when it already was.
// Spent nonces are kept until their link would have expired anyway.
func (s *Store) SpendActionNonce(ctx context.Context, nonce string, expires time.Time) (bool, error) {
	res := s.w(ctx).Exec("INSERT INTO action_tokens_used (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING",
		nonce, expires.UTC())
	return res.RowsAffected == 1, res.Error
}

// PruneActionNonces forgets spent nonces whose links have expired.
func (s *Store) PruneActionNonces(ctx context.Context, now time.Time) error {
	return s.w(ctx).Exec("DELETE FROM action_tokens_used WHERE expires_at < ?", now.UTC()).Error
}

// PruneNotifications deletes finished deliveries (delivered, failed, skipped) planned
// before before; pending ones stay however old.
func (s *Store) PruneNotifications(ctx context.Context, before time.Time) error {
	return s.w(ctx).Exec("DELETE FROM notifications WHERE state <> ? AND created_at < ?", models.DeliveryPending, before.UTC()).Error
}
