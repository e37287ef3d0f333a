package store

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/models"
)

// The decision journal: a Gatehouse rule's answer is recorded in it — one small record
// per answer, written with the answers given at the same moment — before the request
// the rule answered is told. The prompt row, its audit chain link, the rule's fire count
// and its stream events are written behind it, in batches (InsertDecided), and the
// journal records they were made from are forgotten. A record still journaled after a
// crash is turned into them when the next process starts (internal/elicit, journal.go).
// On SQLite the journal is a file beside the database (filejournal.go); on Postgres the
// decision_journal table, which every replica can read.

// journalConns is the Postgres journal pool's size: its statements are one short
// INSERT, and concurrent answers share one (elicit's group commit).
const journalConns = 4

// ErrJournalClaimed: see errs.ErrJournalClaimed (another replica stored some of the
// journaled rows InsertDecided was given, after this one stalled past the age at which
// journal rows are taken as orphaned).
var ErrJournalClaimed = errs.ErrJournalClaimed

// withRuntimeParam returns the Postgres url with a run-time parameter (a setting every
// session opened through it starts with) added.
func withRuntimeParam(raw, key, value string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw // OpenWith reports the url's error on the main pool
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// JournalDecided records rows — prompts a rule decided, as InsertDecided will store
// them — in the decision journal, in one write. It is the only write an answer waits
// for: SQLite appends it to the journal's file (filejournal.go); Postgres commits it
// without waiting for the write-ahead log's flush (synchronous_commit off), so a crash
// of Postgres itself may lose the last fraction of a second of them
// (docs/performance.md).
//
// On SQLite it returns where each row went in the journal, aligned with rows, for
// ForgetJournaledAt. On Postgres it returns nil: the commit that stores the rows
// deletes them.
func (s *Store) JournalDecided(ctx context.Context, rows []*models.Elicitation) ([]int64, error) {
	now := time.Now().UTC()
	if s.fj != nil {
		return s.fj.Append(rows, now)
	}
	// JSON on Postgres, where a replica of an earlier release, mid-upgrade, may be the
	// one that replays the rows.
	args := make([]any, 0, 3*len(rows))
	for _, r := range rows {
		body, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		args = append(args, r.ID, body, now)
	}
	// database/sql directly, not GORM: this is on the path of every answer a rule
	// gives. So the statement's deadline and the unavailable error are set here.
	db, err := s.jdb.DB()
	if err != nil {
		return nil, err
	}
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	_, err = db.ExecContext(ctx, numberPlaceholders("INSERT INTO decision_journal (id, body, created_at) VALUES "+placeholders(len(rows), 3)), args...)
	return nil, unavailable(err)
}

// JournaledDecisions returns up to limit journaled rows written before before, oldest
// first. On SQLite these are the rows an earlier process left: one process holds every
// answer it journaled.
func (s *Store) JournaledDecisions(ctx context.Context, before time.Time, limit int) ([]*models.Elicitation, error) {
	if s.fj != nil {
		return s.fj.Left(before, limit)
	}
	rows, err := s.jdb.WithContext(ctx).Raw("SELECT body FROM decision_journal WHERE created_at < ? ORDER BY created_at, id LIMIT ?",
		before.UTC(), limit).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*models.Elicitation
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, err
		}
		e, err := decodeJournaled(body)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// StillJournaled reports which of ids are still in the decision journal.
func (s *Store) StillJournaled(ctx context.Context, ids []string) (map[string]bool, error) {
	if s.fj != nil {
		return s.fj.Holds(ids)
	}
	return presentIDs(s.jdb.WithContext(ctx), "decision_journal", ids)
}

// ExistingElicitations reports which of ids are stored prompts.
func (s *Store) ExistingElicitations(ctx context.Context, ids []string) (map[string]bool, error) {
	return presentIDs(s.ctx(ctx), "elicitations", ids)
}

// presentIDs reports which of ids are rows of table (a constant name), a few hundred
// ids a statement.
func presentIDs(db *gorm.DB, table string, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	for _, part := range idChunks(ids) {
		var some []string
		if err := db.Raw("SELECT id FROM "+table+" WHERE id IN ?", part).Scan(&some).Error; err != nil {
			return nil, err
		}
		for _, id := range some {
			out[id] = true
		}
	}
	return out, nil
}

// ForgetJournaled drops ids from the decision journal: a replay's rows whose prompts
// were stored before. On Postgres the commit that stores journaled rows deletes them.
// The SQLite journal is a file of its own, so its records go after the prompts'
// commit (ForgetJournaledAt) — a crash in between leaves them journaled, and the replay
// skips the prompts already stored.
func (s *Store) ForgetJournaled(ctx context.Context, ids []string) error {
	if s.fj != nil {
		return s.fj.Forget(ids)
	}
	for _, part := range idChunks(ids) {
		if len(part) == 0 {
			continue
		}
		if err := s.jdb.WithContext(ctx).Exec("DELETE FROM decision_journal WHERE id IN ?", part).Error; err != nil {
			return err
		}
	}
	return nil
}

// ForgetJournaledAt drops the SQLite journal's records at the positions JournalDecided
// returned, once their prompts are stored (nothing to do on Postgres).
func (s *Store) ForgetJournaledAt(_ context.Context, at []int64) error {
	if s.fj != nil {
		s.fj.ForgetAtPositions(at)
	}
	return nil
}

// idChunks splits ids into lists one statement binds cheaply on either database (see
// sqliteStatementParams).
func idChunks(ids []string) [][]string {
	var out [][]string
	for len(ids) > sqliteStatementParams {
		out, ids = append(out, ids[:sqliteStatementParams]), ids[sqliteStatementParams:]
	}
	return append(out, ids)
}

// claimJournaled deletes the rows' journal entries in tx (Postgres, where the journal
// is a table of the same database): the rows are stored by whoever deletes them.
func claimJournaled(tx statements, rows []*models.Elicitation) error {
	ids := make([]string, len(rows))
	marks := make([]string, len(rows))
	args := make([]any, len(rows))
	for i, r := range rows {
		ids[i], marks[i], args[i] = r.ID, "?", r.ID
	}
	n, err := tx.exec("DELETE FROM decision_journal WHERE id IN ("+strings.Join(marks, ", ")+")", args...)
	if err != nil {
		return err
	}
	if n != int64(len(rows)) {
		return ErrJournalClaimed
	}
	return nil
}
