package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/models"
)

// The decision journal: a Gatehouse rule's answer is recorded in it — one small row per
// answer, written by one statement — before the request the rule answered is told. The
// prompt row, its audit chain link, the rule's fire count and its stream events are
// written behind it, in batches (InsertDecided), and the journal rows they were made
// from are deleted. A row still journaled after a crash is turned into them when the
// next process starts (internal/elicit, journal.go).

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

// openJournalSQLite opens (creating) the SQLite decision journal beside the database
// at path: one connection for its writes, and one that only checkpoints it
// (ForgetJournaled), so no answer's write waits on a checkpoint's file sync.
func openJournalSQLite(path string, gcfg *gorm.Config) (*gorm.DB, *sql.DB, error) {
	dsn := "file:" + path + ".decisions?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_pragma=wal_autocheckpoint(0)&_txlock=immediate"
	db, err := openSQLite(dsn, gcfg, 1)
	if err != nil {
		return nil, nil, err
	}
	// No index but the rowid: an answer's write touches one page, the last. The
	// table holds only the answers of the last few milliseconds, so the deletes by id
	// scan a handful of pages.
	if err := db.Exec(`CREATE TABLE IF NOT EXISTS decision_journal (
		id TEXT NOT NULL, body BLOB NOT NULL, created_at DATETIME NOT NULL)`).Error; err != nil {
		closeGorm(db)
		return nil, nil, fmt.Errorf("create the decision journal: %w", err)
	}
	ck, err := sql.Open("sqlite", dsn)
	if err != nil {
		closeGorm(db)
		return nil, nil, fmt.Errorf("open the decision journal's checkpointer: %w", err)
	}
	ck.SetMaxOpenConns(1)
	return db, ck, nil
}

// checkpointJournalEvery is how many forgotten journal rows (SQLite) go between two
// checkpoints of the journal's WAL: often enough to keep it a few megabytes at most.
const checkpointJournalEvery = 2048

// JournalDecided records rows — prompts a rule decided, as InsertDecided will store
// them — in the decision journal, in one statement. It is the only write an answer
// waits for: SQLite commits it to the journal's own file; Postgres commits it without
// waiting for the write-ahead log's flush (synchronous_commit off), so a crash of
// Postgres itself may lose the last fraction of a second of them (docs/performance.md).
//
// On SQLite it returns where each row went in the journal (its rowid), aligned with
// rows, for ForgetJournaledAt: the journal has no index on ids (an answer's write
// touches one page), so deleting by id would scan it. On Postgres it returns nil: the
// commit that stores the rows deletes them.
func (s *Store) JournalDecided(ctx context.Context, rows []*models.Elicitation) ([]int64, error) {
	now := time.Now().UTC()
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
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	if s.dialect == Postgres {
		values := make([]string, len(rows))
		for i := range rows {
			values[i] = fmt.Sprintf("($%d, $%d, $%d)", 3*i+1, 3*i+2, 3*i+3)
		}
		_, err = db.ExecContext(ctx, "INSERT INTO decision_journal (id, body, created_at) VALUES "+strings.Join(values, ", "), args...)
		return nil, unavailable(err)
	}
	// SQLite: one statement per few dozen rows (see sqliteStatementParams), in one
	// transaction when there are several. The journal's one connection is its only
	// writer, and a table without an explicit rowid gives the rows of one INSERT
	// consecutive rowids ending at the last one inserted.
	at := make([]int64, 0, len(rows))
	insert := func(exec func(ctx context.Context, query string, args ...any) (sql.Result, error), lo, hi int) error {
		res, err := exec(ctx, "INSERT INTO decision_journal (id, body, created_at) VALUES "+placeholders(hi-lo, 3), args[3*lo:3*hi]...)
		if err != nil {
			return err
		}
		last, err := res.LastInsertId()
		if err != nil {
			return err
		}
		for id := last - int64(hi-lo) + 1; id <= last; id++ {
			at = append(at, id)
		}
		return nil
	}
	per := sqliteStatementParams / 3
	if len(rows) <= per {
		return at, insert(db.ExecContext, 0, len(rows))
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() // a no-op once committed
	for lo := 0; lo < len(rows); lo += per {
		if err := insert(tx.ExecContext, lo, min(len(rows), lo+per)); err != nil {
			return nil, err
		}
	}
	return at, tx.Commit()
}

// JournaledDecisions returns up to limit journaled rows written before before, oldest
// first.
func (s *Store) JournaledDecisions(ctx context.Context, before time.Time, limit int) ([]*models.Elicitation, error) {
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
		var e models.Elicitation
		if err := json.Unmarshal(body, &e); err != nil {
			return nil, fmt.Errorf("a decision journal row does not decode: %w", err)
		}
		out = append(out, &e)
	}
	return out, rows.Err()
}

// StillJournaled reports which of ids are still in the decision journal.
func (s *Store) StillJournaled(ctx context.Context, ids []string) (map[string]bool, error) {
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

// ForgetJournaled deletes ids from the decision journal: a replay's rows whose prompts
// were stored before. On Postgres the commit that stores journaled rows deletes them.
// The SQLite journal is a database of its own, so its rows go after the prompts'
// commit (ForgetJournaledAt) — a crash in between leaves them journaled, and the replay
// skips the prompts already stored.
func (s *Store) ForgetJournaled(ctx context.Context, ids []string) error {
	for _, part := range idChunks(ids) {
		if len(part) == 0 {
			continue
		}
		if err := s.jdb.WithContext(ctx).Exec("DELETE FROM decision_journal WHERE id IN ?", part).Error; err != nil {
			return err
		}
	}
	return s.checkpointJournal(ctx, len(ids))
}

// ForgetJournaledAt deletes the SQLite journal's rows at the rowids JournalDecided
// returned, once their prompts are stored: a lookup each, where deleting by id would
// scan the journal while answers wait for its one connection.
func (s *Store) ForgetJournaledAt(ctx context.Context, at []int64) error {
	for lo := 0; lo < len(at); lo += sqliteStatementParams {
		hi := min(len(at), lo+sqliteStatementParams)
		if err := s.jdb.WithContext(ctx).Exec("DELETE FROM decision_journal WHERE rowid IN ?", at[lo:hi]).Error; err != nil {
			return err
		}
	}
	return s.checkpointJournal(ctx, len(at))
}

// checkpointJournal checkpoints the SQLite journal's WAL once every
// checkpointJournalEvery forgotten rows, on a connection of its own: never in an
// answer's commit.
func (s *Store) checkpointJournal(ctx context.Context, forgotten int) error {
	if s.jck == nil || forgotten == 0 || s.forgotten.Add(int64(forgotten)) < checkpointJournalEvery {
		return nil
	}
	s.forgotten.Store(0)
	_, err := s.jck.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
	return err
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
