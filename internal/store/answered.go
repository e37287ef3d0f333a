package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
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
// prompt that waits for a person takes (insert, log, decide, log), and a handful of
// statements for the batch, however large, rather than a handful for each row — on
// Postgres every statement is a round trip made while the chain's head is locked.
func (s *Store) InsertDecided(ctx context.Context, rows []*models.Elicitation, evs []models.LoggedEvent,
	notify *models.Notice) ([]*models.Elicitation, []models.SessionEvent, error) {
	var stored []*models.Elicitation
	var logged []models.SessionEvent
	work := func(tx statements, lock string) error {
		var head ChainHead
		if err := tx.queryRow("SELECT seq, hash FROM audit_head WHERE id = 1"+lock, nil, &head.Seq, &head.Hash); err != nil {
			return err
		}
		if s.dialect == Postgres {
			// Under the head's lock, so two replicas storing the same journaled
			// rows (a restart's replay beside a stalled replica) take turns.
			if err := claimJournaled(tx, rows); err != nil {
				return err
			}
		}
		var err error
		if stored, err = insertDecidedRows(tx, rows, s.dialect == Postgres); err != nil {
			return err
		}
		if err := chainDecided(tx, head, stored); err != nil {
			return err
		}
		if err := countFires(tx, stored); err != nil {
			return err
		}
		if logged, err = appendEventsBatch(tx, evs); err != nil || notify == nil {
			return err
		}
		return notifyRows(tx, logged, notify)
	}
	// database/sql directly, as for every verdict on SQLite (decideAndChainSQLite):
	// GORM's statement building was a tenth of an answer's CPU on Postgres. SQLite
	// takes its write lock at BEGIN IMMEDIATE, so the head read is already serialized;
	// on Postgres the head's row lock, held to commit, lines up every replica's appends.
	lock := ""
	if s.dialect == Postgres {
		lock = " FOR UPDATE"
	}
	if err := s.writeSQL(ctx, func(tx sqlTx) error { return work(tx, lock) }); err != nil {
		return nil, nil, err
	}
	return stored, logged, nil
}

// notifyRows sends, in tx, the NOTIFY notify names for the logged rows: a NOTIFY's
// payload is capped at 8,000 bytes, so a slice of models.MaxNoticeRows at a time.
func notifyRows(tx statements, logged []models.SessionEvent, notify *models.Notice) error {
	for rest := logged; len(rest) > 0; {
		n := min(len(rest), models.MaxNoticeRows)
		if _, err := tx.exec("SELECT pg_notify(?, ?)", notify.Channel, notify.Payload(rest[:n])); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// decidedColumns are the columns InsertDecided writes, in the order of decidedArgs.
const decidedColumns = `id, session_id, origin, params, status, action, content, resolved_by, resolved_via,
	created_at, resolved_at, expires_at, logged, notified, call_key, rule_id, token_id, chained`

// decidedParams is how many decidedColumns there are.
const decidedParams = 18

// decidedArgs are e's values for decidedColumns. No params or content is NULL (a nil
// interface: SQLite would store a nil []byte as an empty blob, which the audit chain
// tells apart from NULL).
func decidedArgs(e *models.Elicitation) []any {
	var params, content any
	if len(e.Params) > 0 {
		params = []byte(e.Params)
	}
	if len(e.Content) > 0 {
		content = []byte(e.Content)
	}
	return []any{e.ID, e.SessionID, e.Origin, params, e.Status, e.Action, content, e.ResolvedBy, e.ResolvedVia,
		e.CreatedAt, e.ResolvedAt, e.ExpiresAt, e.Logged, e.Notified, e.CallKey, e.RuleID, e.TokenID, true}
}

// insertDecidedRows inserts rows, a statement per chunk, and returns them as stored,
// aligned with rows. Postgres keeps params and content as JSONB, which reorders keys
// and spacing, and the audit chain must hash a row as the database hands it back: so
// there (readBack) each row comes back through RETURNING, matched by id (RETURNING
// promises no order). SQLite keeps them as the text written, and every other column
// as given (times already in UTC, to the microsecond): the rows are their own stored
// form, and reading them back was a third of the cost of storing an answer.
func insertDecidedRows(tx statements, rows []*models.Elicitation, readBack bool) ([]*models.Elicitation, error) {
	byID := make(map[string]*models.Elicitation, len(rows))
	err := inChunks(tx, len(rows), decidedParams, func(lo, hi int) error {
		args := make([]any, 0, (hi-lo)*decidedParams)
		for _, r := range rows[lo:hi] {
			args = append(args, decidedArgs(r)...)
		}
		insert := `INSERT INTO elicitations (` + decidedColumns + `) VALUES ` + placeholders(hi-lo, decidedParams)
		if !readBack {
			_, err := tx.exec(insert, args...)
			return err
		}
		return tx.queryRows(insert+` RETURNING `+elicitationColumns, args, func(scan func(dest ...any) error) error {
			var e models.Elicitation
			var params, content []byte
			if err := scan(&e.ID, &e.SessionID, &e.Origin, &params, &e.Status, &e.Action, &content, &e.ResolvedBy,
				&e.ResolvedVia, &e.CreatedAt, &e.ResolvedAt, &e.ExpiresAt, &e.ConsumedAt, &e.LeaseUntil, &e.Logged,
				&e.Notified, &e.CallKey, &e.RuleID); err != nil {
				return err
			}
			e.Params, e.Content = params, content
			byID[e.ID] = &e
			return nil
		})
	})
	if isUniqueViolation(err) {
		return nil, ErrConflict
	}
	if err != nil {
		return nil, err
	}
	out := make([]*models.Elicitation, len(rows))
	for i, r := range rows {
		if !readBack {
			e := *r
			out[i] = &e
			continue
		}
		e, ok := byID[r.ID]
		if !ok {
			return nil, fmt.Errorf("insert decided: row %s did not come back", r.ID)
		}
		e.TokenID = r.TokenID
		out[i] = e
	}
	return out, nil
}

// chainDecided links stored rows into the audit chain after head, in order.
func chainDecided(tx statements, head ChainHead, stored []*models.Elicitation) error {
	entries := make([]*audit.Entry, len(stored))
	for i, e := range stored {
		entries[i] = entryOf(e)
	}
	_, err := appendLinks(tx, head, entries, false)
	return err
}

// countFires moves each rule's fire count by the rows it decided, in the same commit.
func countFires(tx statements, stored []*models.Elicitation) error {
	counts, last := map[string]int{}, map[string]time.Time{}
	var order []string
	for _, e := range stored {
		if e.RuleID == nil || e.ResolvedAt == nil {
			continue
		}
		id := *e.RuleID
		if counts[id] == 0 {
			order = append(order, id)
		}
		counts[id]++
		if e.ResolvedAt.After(last[id]) {
			last[id] = *e.ResolvedAt
		}
	}
	for _, id := range order { // in a fixed order: two replicas' batches lock rules alike
		if _, err := tx.exec("UPDATE rules SET fire_count = fire_count + ?, last_fired_at = ? WHERE id = ?", counts[id], last[id], id); err != nil {
			return err
		}
	}
	return nil
}

// appendEventsBatch appends evs — none of which claims a stage (or whose stages are
// claimed already) — to the log: one sequence update per session, one insert for all.
// Rows come back aligned with evs.
func appendEventsBatch(tx statements, evs []models.LoggedEvent) ([]models.SessionEvent, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	perSession := map[string]int64{}
	var order []string
	for _, ev := range evs {
		if perSession[ev.SessionID] == 0 {
			order = append(order, ev.SessionID)
		}
		perSession[ev.SessionID]++
	}
	// Each session's row is locked, by the update taking its sequence numbers, until
	// commit: every transaction takes them in id order, so two of them never wait for
	// each other in a cycle (which Postgres breaks after a second by failing one).
	slices.Sort(order)
	next := map[string]int64{} // the next seq to hand out in each session
	for _, sid := range order {
		var last int64
		if err := tx.queryRow("UPDATE sessions SET event_seq = event_seq + ? WHERE id = ? RETURNING event_seq",
			[]any{perSession[sid], sid}, &last); err != nil {
			return nil, err
		}
		next[sid] = last - perSession[sid] + 1
	}
	now := time.Now().UTC()
	rows := make([]models.SessionEvent, len(evs))
	args := make([]any, 0, len(evs)*6)
	at := map[string]map[int64]int{} // session → seq → index in evs
	for i, ev := range evs {
		row := models.SessionEvent{SessionID: ev.SessionID, Seq: next[ev.SessionID], Type: ev.Type, Data: string(ev.Data), CreatedAt: now}
		next[ev.SessionID]++
		if ev.ElicitationID != "" {
			id := ev.ElicitationID
			row.ElicitationID = &id
		}
		rows[i] = row
		if at[row.SessionID] == nil {
			at[row.SessionID] = map[int64]int{}
		}
		at[row.SessionID][row.Seq] = i
		args = append(args, row.SessionID, row.Seq, row.Type, row.Data, row.ElicitationID, row.CreatedAt)
	}
	const insert = "INSERT INTO session_events (session_id, seq, type, data, elicitation_id, created_at) VALUES "
	if lt, ok := tx.(sqlTx); ok && !lt.postgres {
		// SQLite: the ids follow from the last one, not read back row by row.
		err := inChunks(tx, len(evs), 6, func(lo, hi int) error {
			last, err := lt.execLastID(insert+placeholders(hi-lo, 6), args[lo*6:hi*6]...)
			for i := lo; i < hi && err == nil; i++ {
				rows[i].ID = last - int64(hi-1-i)
			}
			return err
		})
		return rows, err
	}
	err := inChunks(tx, len(evs), 6, func(lo, hi int) error {
		return tx.queryRows(insert+placeholders(hi-lo, 6)+" RETURNING id, session_id, seq", args[lo*6:hi*6], func(scan func(dest ...any) error) error {
			var id, seq int64
			var sid string
			if err := scan(&id, &sid, &seq); err != nil {
				return err
			}
			rows[at[sid][seq]].ID = id
			return nil
		})
	})
	return rows, err
}
