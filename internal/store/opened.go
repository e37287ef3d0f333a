package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// openedColumns are the columns InsertOpened writes, in the order of openedArgs; the
// others (the verdict's, consumed_at, chained) take their defaults, as for a prompt
// nobody has decided.
const openedColumns = `id, session_id, origin, params, status, created_at, expires_at, lease_until, logged, notified,
	call_key, rule_id, token_id`

// openedParams is how many openedColumns there are.
const openedParams = 13

// openedArgs are e's values for openedColumns.
func openedArgs(e *models.Elicitation) []any {
	return []any{e.ID, e.SessionID, e.Origin, []byte(e.Params), e.Status, e.CreatedAt, e.ExpiresAt, e.LeaseUntil, e.Logged,
		e.Notified, e.CallKey, e.RuleID, e.TokenID}
}

// InsertOpened stores the new pending prompt e and the stream events evs announcing
// it, in one transaction, and returns the events' rows aligned with evs (ErrConflict
// when e's id is taken: a retry re-attaching raced this one). e should already be
// marked logged as far as evs take it: no event here claims a stage. notify, when
// set (Postgres), names the NOTIFY the commit sends for the events' rows, as for
// AppendEvents.
//
// A prompt stored in a commit of its own and then announced in another took two
// commits — on SQLite every page each touched written twice, on Postgres two
// write-ahead-log flushes — before a person could see it. On Postgres, prompts opened
// at once also share the transaction (internal/groupcommit): one INSERT, one append,
// one NOTIFY and one flush for all of them, as a burst of parks otherwise went
// through one commit after another.
func (s *Store) InsertOpened(ctx context.Context, e *models.Elicitation, evs []models.LoggedEvent,
	notify *models.Notice) ([]models.SessionEvent, error) {
	o := &opening{ctx: ctx, row: e, evs: evs, notify: notify}
	if s.openings == nil {
		o.err = s.openTogether(ctx, []*opening{o})
	} else {
		s.openings.Do(o)
	}
	return o.logged, o.err
}

// opening is one InsertOpened waiting for its group (Postgres).
type opening struct {
	ctx    context.Context
	row    *models.Elicitation
	evs    []models.LoggedEvent
	notify *models.Notice
	logged []models.SessionEvent
	err    error
}

// maxGroupOpenings bounds the prompts one transaction opens (13 parameters each).
const maxGroupOpenings = 64

// openGroup opens a group of prompts in one transaction (Postgres). A group that
// fails — one of its ids taken (a retry re-attaching), a session deleted meanwhile —
// is opened prompt by prompt, so each gets its own outcome.
func (s *Store) openGroup(g []*opening) {
	if len(g) > 1 {
		// The group's transaction is everyone's: no one caller hanging up cancels it.
		if s.openTogether(context.WithoutCancel(g[0].ctx), g) == nil {
			return
		}
	}
	for _, o := range g {
		o.err = s.openTogether(o.ctx, []*opening{o})
	}
}

// openTogether stores g's prompts and appends their events in one transaction, then
// hands each opening its events' rows. The NOTIFY is the first opening's: every
// opening of a store comes from its one bus, whose notice only names the rows.
func (s *Store) openTogether(ctx context.Context, g []*opening) error {
	args := make([]any, 0, len(g)*openedParams)
	var evs []models.LoggedEvent
	for _, o := range g {
		args = append(args, openedArgs(o.row)...)
		evs = append(evs, o.evs...)
	}
	var logged []models.SessionEvent
	var err error
	if s.dialect == Postgres && g[0].notify != nil && len(evs) > 0 && len(evs) <= models.MaxNoticeRows {
		logged, err = s.openInOneStatement(ctx, len(g), args, evs, g[0].notify)
	} else {
		err = s.writeSQL(ctx, func(tx sqlTx) error {
			if _, err := tx.exec(`INSERT INTO elicitations (`+openedColumns+`) VALUES `+placeholders(len(g), openedParams), args...); err != nil {
				return err
			}
			var err error
			if logged, err = appendEventsBatch(tx, evs); err != nil || g[0].notify == nil {
				return err
			}
			return notifyRows(tx, logged, g[0].notify)
		})
	}
	if isUniqueViolation(err) {
		err = ErrConflict
	}
	if err != nil {
		return err
	}
	for _, o := range g {
		o.logged, logged = logged[:len(o.evs):len(o.evs)], logged[len(o.evs):]
	}
	return nil
}

// openInOneStatement is openTogether on Postgres as one statement — the prompts'
// INSERT, their sessions' sequence numbers, the events' INSERT and the NOTIFY naming
// them — so one round trip, its own transaction, instead of six (BEGIN, four
// statements, COMMIT). Each is a wake-up of Postgres and then of Gatehouse, on the
// path between a request parking and a person seeing it: opening one prompt took
// 0.72–0.79 ms that way and 0.38–0.46 ms in one statement, its commit's flush
// included. n prompts' args are openedArgs; the rows come back aligned with evs.
//
// An event whose session is gone finds no sequence number, and its NULL seq fails the
// whole statement, prompts included — as the UPDATE that found no session failed the
// transaction.
func (s *Store) openInOneStatement(ctx context.Context, n int, args []any, evs []models.LoggedEvent,
	notice *models.Notice) ([]models.SessionEvent, error) {
	// Each session's events take the next numbers in evs' order: the k-th of a
	// session's gets its sequence number before the update plus k.
	counts := map[string]int64{}
	var order []string
	now := time.Now().UTC()
	rows := make([]models.SessionEvent, len(evs))
	evArgs := make([]any, 0, len(evs)*6)
	for i, ev := range evs {
		if counts[ev.SessionID] == 0 {
			order = append(order, ev.SessionID)
		}
		counts[ev.SessionID]++
		rows[i] = models.SessionEvent{SessionID: ev.SessionID, Type: ev.Type, Data: string(ev.Data), CreatedAt: now}
		if ev.ElicitationID != "" {
			id := ev.ElicitationID
			rows[i].ElicitationID = &id
		}
		evArgs = append(evArgs, ev.SessionID, counts[ev.SessionID], rows[i].Type, rows[i].Data, rows[i].ElicitationID, now)
	}
	slices.Sort(order) // the order every appender locks sessions in (appendEventsBatch)
	for _, sid := range order {
		args = append(args, sid)
	}
	for _, sid := range order {
		args = append(args, sid, counts[sid])
	}
	args = append(args, evArgs...)
	args = append(args, notice.Channel)
	// Postgres runs a statement's parts in an order of its own (one no other part
	// reads, last), and each part locks rows as it goes: so the order of the locks is
	// spelled out. The prompts are inserted first (l counts them before it locks
	// anything), then the sessions' rows are locked in id order (l), and only then
	// updated (s reads l) — the order of the transaction of statements this replaces,
	// with the sessions in the order every other append takes them.
	query := `WITH p AS (INSERT INTO elicitations (` + openedColumns + `) VALUES ` + placeholders(n, openedParams) + ` RETURNING 1),
		l AS (SELECT sessions.id FROM sessions WHERE sessions.id IN ` + placeholders(1, len(order)) + `
			AND (SELECT count(*) FROM p) > 0 ORDER BY sessions.id FOR NO KEY UPDATE),
		s AS (UPDATE sessions SET event_seq = sessions.event_seq + c.n
			FROM (VALUES ` + castPlaceholders(len(order), "text", "bigint") + `) AS c(id, n)
			WHERE sessions.id = c.id AND sessions.id IN (SELECT l.id FROM l)
			RETURNING sessions.id, sessions.event_seq - c.n AS base),
		e AS (INSERT INTO session_events (session_id, seq, type, data, elicitation_id, created_at)
			SELECT v.sid, s.base + v.k, v.type, v.data, v.eid, v.at
			FROM (VALUES ` + castPlaceholders(len(evs), "text", "bigint", "text", "text", "text", "timestamptz") + `) AS v(sid, k, type, data, eid, at)
			LEFT JOIN s ON s.id = v.sid
			RETURNING id, session_id, seq),
		notified AS (SELECT pg_notify(?, string_agg(id::text, ',' ORDER BY id)) FROM e)
		SELECT e.id, e.session_id, e.seq FROM e CROSS JOIN notified`
	db, err := s.wdb.DB()
	if err != nil {
		return nil, err
	}
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	res, err := db.QueryContext(ctx, numberPlaceholders(query), args...)
	if err != nil {
		return nil, unavailable(err)
	}
	// Back by session and sequence number: a session's rows in seq order are its
	// events in evs' order.
	type key struct {
		session string
		seq     int64
	}
	ids := map[key]int64{}
	first := map[string]int64{} // each session's lowest seq in this statement
	err = eachRow(res, func(scan func(dest ...any) error) error {
		var id, seq int64
		var sid string
		if err := scan(&id, &sid, &seq); err != nil {
			return err
		}
		ids[key{sid, seq}] = id
		if f, ok := first[sid]; !ok || seq < f {
			first[sid] = seq
		}
		return nil
	})
	if err != nil {
		return nil, unavailable(err)
	}
	if len(ids) != len(evs) { // the statement stores every event or fails: a bug
		return nil, fmt.Errorf("open prompts: %d of %d events stored", len(ids), len(evs))
	}
	next := first
	for i := range rows {
		sid := rows[i].SessionID
		rows[i].Seq = next[sid]
		next[sid]++
		rows[i].ID = ids[key{sid, rows[i].Seq}]
	}
	return rows, nil
}

// castPlaceholders is placeholders for a VALUES list whose columns have no table to
// take their types from: each ? cast to its column's type.
func castPlaceholders(rows int, types ...string) string {
	one := make([]string, len(types))
	for i, t := range types {
		one[i] = "?::" + t
	}
	row := "(" + strings.Join(one, ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", rows), ", ")
}
