package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse-dev/gatehouse/models"
)

// InsertDecided stores prompts that were decided as they were opened — a Gatehouse
// rule's answers — in one transaction: each row already decided, its link in the audit
// chain, each rule's fire count, and the stream events evs announcing them (with
// notify, when set, as AppendEvents). It returns the rows as stored (read back by the
// inserting statement, which is what the chain hashes), aligned with rows, and the
// events' rows, aligned with evs. The rows should be marked logged and notified as far
// as evs and their being decided take them: no event here claims a stage.
//
// A rule answers the request that asked at once, so this commit is on the path of every
// tool call a rule lets through: one commit for a whole batch of such answers (the
// caller groups concurrent ones, see elicit.Service.DecideByRule) instead of the four a
// prompt that waits for a person takes (insert, log, decide, log). The answer still
// leaves only after its decision and audit row are committed.
func (s *Store) InsertDecided(ctx context.Context, rows []*models.Elicitation, evs []models.LoggedEvent,
	notify func(rows []models.SessionEvent) (channel, payload string)) ([]*models.Elicitation, []models.SessionEvent, error) {
	stored := make([]*models.Elicitation, len(rows))
	var logged []models.SessionEvent
	work := func(tx statements, lock string) error {
		var head ChainHead
		if err := tx.queryRow("SELECT seq, hash FROM audit_head WHERE id = 1"+lock, nil, &head.Seq, &head.Hash); err != nil {
			return err
		}
		fired := map[string]time.Time{}
		counts := map[string]int{}
		for i, r := range rows {
			won, err := insertDecided(tx, r)
			if err != nil {
				return err
			}
			if head, err = appendChain(tx, head, entryOf(won), false); err != nil {
				return err
			}
			stored[i] = won
			if won.RuleID != nil && won.ResolvedAt != nil {
				counts[*won.RuleID]++
				if won.ResolvedAt.After(fired[*won.RuleID]) {
					fired[*won.RuleID] = *won.ResolvedAt
				}
			}
		}
		for id, n := range counts {
			if _, err := tx.exec("UPDATE rules SET fire_count = fire_count + ?, last_fired_at = ? WHERE id = ?", n, fired[id], id); err != nil {
				return err
			}
		}
		var err error
		if logged, err = appendEvents(tx, evs); err != nil || notify == nil || len(logged) == 0 {
			return err
		}
		channel, payload := notify(logged)
		_, err = tx.exec("SELECT pg_notify(?, ?)", channel, payload)
		return err
	}
	var err error
	if s.dialect == SQLite {
		// SQLite takes its write lock at BEGIN IMMEDIATE: the head read is already
		// serialized. database/sql directly, as for every verdict (decideAndChainSQLite).
		err = s.writeSQL(ctx, func(tx sqlTx) error { return work(tx, "") })
	} else {
		// The head's row lock, held to commit, lines up every replica's appends.
		err = s.w(ctx).Transaction(func(tx *gorm.DB) error { return work(gormTx{tx}, " FOR UPDATE") })
	}
	if err != nil {
		return nil, nil, err
	}
	return stored, logged, nil
}

// insertDecided inserts one decided row, chained, and reads it back as stored.
func insertDecided(tx statements, e *models.Elicitation) (*models.Elicitation, error) {
	var params, content any
	if len(e.Params) > 0 {
		params = []byte(e.Params)
	}
	if len(e.Content) > 0 {
		content = []byte(e.Content)
	}
	var won models.Elicitation
	var wonParams, wonContent []byte
	err := tx.queryRow(`INSERT INTO elicitations (id, session_id, origin, params, status, action, content, resolved_by,
		resolved_via, created_at, resolved_at, expires_at, logged, notified, call_key, rule_id, token_id, chained)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, TRUE) RETURNING `+elicitationColumns,
		[]any{e.ID, e.SessionID, e.Origin, params, e.Status, e.Action, content, e.ResolvedBy, e.ResolvedVia,
			e.CreatedAt, e.ResolvedAt, e.ExpiresAt, e.Logged, e.Notified, e.CallKey, e.RuleID, e.TokenID},
		&won.ID, &won.SessionID, &won.Origin, &wonParams, &won.Status, &won.Action, &wonContent, &won.ResolvedBy,
		&won.ResolvedVia, &won.CreatedAt, &won.ResolvedAt, &won.ExpiresAt, &won.ConsumedAt, &won.LeaseUntil,
		&won.Logged, &won.Notified, &won.CallKey, &won.RuleID)
	if isUniqueViolation(err) {
		return nil, ErrConflict
	}
	if err != nil {
		return nil, err
	}
	won.Params, won.Content, won.TokenID = wonParams, wonContent, e.TokenID
	return &won, nil
}
