package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"gorm.io/gorm"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// pgLinkV2 is audit.LinkV2 in SQL: the version 2 hash (hex) of the elicitations row
// alias r, of the given kind, chained after prevHex (an SQL expression giving the
// previous hash as hex). Each field is 0x00 when NULL, else 0x01 ‖ SHA-256 of the text
// Postgres returns for it; times as audit.TimeLayout.
func pgLinkV2(r, kind, prevHex string) string {
	field := func(expr string) string {
		return `CASE WHEN (` + expr + `) IS NULL THEN decode('00', 'hex') ELSE decode('01', 'hex') || sha256(convert_to(` + expr + `, 'UTF8')) END`
	}
	at := func(col string) string {
		return `to_char(` + r + `.` + col + ` AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
	}
	parts := []string{`convert_to('` + audit.TagV2 + `', 'UTF8')`,
		field(r + `.id`), field(r + `.session_id`), field(r + `.origin`), field(`CAST(` + r + `.params AS TEXT)`),
		field(r + `.status`), field(r + `.action`), field(`CAST(` + r + `.content AS TEXT)`),
		field(r + `.resolved_by`), field(r + `.resolved_via`), field(at(`resolved_at`)), field(r + `.rule_id`),
		field(r + `.call_key`), field(at(`created_at`)), field(at(`expires_at`)), field(`CAST('` + kind + `' AS TEXT)`),
		`decode(` + prevHex + `, 'hex')`}
	return `encode(sha256(` + strings.Join(parts, "\n\t\t\t|| ") + `), 'hex')`
}

// decideAndChainSQLite is DecideElicitation on SQLite: the conditional update and the
// chain append in one transaction (writes are serialized by SQLite's write lock, taken
// at BEGIN IMMEDIATE), and — for a rule's decision (ruleID) — the rule's fire count.
// query must return elicitationColumns.
//
// It talks to database/sql directly rather than through GORM: this transaction is on
// the path from a person's verdict to the waiting agent, and GORM's transaction and
// row-scanning machinery cost about as much as the statements themselves.
func (s *Store) decideAndChainSQLite(ctx context.Context, query string, args []any, ruleID string) (*models.Elicitation, error) {
	var won *models.Elicitation
	err := s.writeSQL(ctx, func(tx sqlTx) error {
		var err error
		won, err = scanElicitation(tx.row(query, args))
		if errors.Is(err, sql.ErrNoRows) {
			won = nil
			return nil // not pending (or not this session's): nothing to decide
		}
		if err != nil {
			return err
		}
		var head ChainHead
		if err := tx.queryRow("SELECT seq, hash FROM audit_head WHERE id = 1", nil, &head.Seq, &head.Hash); err != nil {
			return err
		}
		// What is hashed is the row as stored, read back by the deciding statement.
		if _, err = appendChain(tx, head, entryOf(won), false); err != nil || ruleID == "" || won.ResolvedAt == nil {
			return err
		}
		_, err = tx.exec("UPDATE rules SET fire_count = fire_count + 1, last_fired_at = ? WHERE id = ?", *won.ResolvedAt, ruleID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return won, nil
}

// entryOf is a stored row's decision record as the chain hashes it.
func entryOf(e *models.Elicitation) *audit.Entry {
	return &audit.Entry{ElicitationID: e.ID, SessionID: e.SessionID, Origin: e.Origin, Params: e.Params, Status: e.Status,
		Action: e.Action, Content: e.Content, ResolvedBy: e.ResolvedBy, ResolvedVia: e.ResolvedVia, ResolvedAt: e.ResolvedAt,
		RuleID: e.RuleID, CallKey: e.CallKey, CreatedAt: e.CreatedAt, ExpiresAt: e.ExpiresAt}
}

// ChainHead is the chain's last sequence number and hash (0 and audit.Genesis when empty).
type ChainHead struct {
	Seq  int64
	Hash string
}

// chainHead reads the head row; lock takes its row lock (Postgres) for the transaction.
func chainHead(tx *gorm.DB, lock bool) (ChainHead, error) {
	q := "SELECT seq, hash FROM audit_head WHERE id = 1"
	if lock {
		q += " FOR UPDATE"
	}
	var h ChainHead
	return h, tx.Raw(q).Scan(&h).Error
}

// appendChain writes the version 2 chain row after head for e and moves the head, in
// the caller's transaction.
func appendChain(tx statements, head ChainHead, e *audit.Entry, backfilled bool) (ChainHead, error) {
	return appendLinks(tx, head, []*audit.Entry{e}, backfilled)
}

// appendLinks writes the version 2 chain rows after head for entries, in order — one
// insert for them all — and moves the head to the last, in the caller's transaction.
func appendLinks(tx statements, head ChainHead, entries []*audit.Entry, backfilled bool) (ChainHead, error) {
	links := make([]any, 0, len(entries)*6)
	prev, last := head, head
	for _, e := range entries {
		prev = last
		last = ChainHead{Seq: prev.Seq + 1, Hash: audit.LinkV2(e, backfilled, prev.Hash)}
		links = append(links, last.Seq, e.ElicitationID, prev.Hash, last.Hash, audit.Current, backfilled)
	}
	err := inChunks(tx, len(entries), 6, func(lo, hi int) error {
		_, err := tx.exec("INSERT INTO audit_chain (seq, elicitation_id, prev_hash, hash, version, backfilled) VALUES "+
			placeholders(hi-lo, 6), links[lo*6:hi*6]...)
		return err
	})
	if err != nil {
		return head, err
	}
	_, err = tx.exec("UPDATE audit_head SET seq = ?, prev_hash = ?, hash = ? WHERE id = 1", last.Seq, prev.Hash, last.Hash)
	return last, err
}

// placeholders is the VALUES list of rows rows of perRow parameters: "(?, ?), (?, ?)".
func placeholders(rows, perRow int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", perRow), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(one+", ", rows), ", ")
}

// AuditHead reads the chain's head: its last sequence number and hash.
func (s *Store) AuditHead(ctx context.Context) (int64, string, error) {
	h, err := chainHead(s.ctx(ctx), false)
	return h.Seq, h.Hash, err
}

// chainBatch is how many rows the backfill reads per query.
const chainBatch = 200

// Backfill is what ChainUnchained did.
type Backfill struct {
	// Chained is how many prompts decided before the chain began it appended (each
	// marked backfilled).
	Chained int
	// Refused is how many decided prompts without a chain row it left out because
	// they were decided after the chain began: such a row was edited and unchained
	// (or decided by a replica that does not chain); `gatehouse audit verify` reports
	// them.
	Refused int
}

// ChainUnchained appends to the audit chain the decided prompts it lacks that were
// decided before the chain began — those from a version without the chain — oldest
// decision first, each marked backfilled (the mark is part of its hash). "Before the
// chain began" is by decided time, then id: every such prompt when the chain is empty
// (all in one transaction, so a second replica starting at once waits and then finds
// nothing to do), else only prompts that sort before the chain's first row. A decided
// prompt without a chain row that sorts after it — someone edited a chained decision
// and removed its chain row, or an older replica decided it after the chain began —
// is never chained here, so a tampered decision cannot be laundered into a chain that
// verifies; it is counted in Refused and `gatehouse audit verify` names it.
func (s *Store) ChainUnchained(ctx context.Context) (Backfill, error) {
	var res Backfill
	err := s.inTx(ctx, s.wdb, func(tx *gorm.DB) error {
		res = Backfill{}
		head, err := chainHead(tx, s.dialect == Postgres)
		if err != nil {
			return err
		}
		// Rows whose chain row exists (chained by a path that did not set the mark).
		if err := tx.Exec(`UPDATE elicitations SET chained = TRUE WHERE status <> ? AND NOT chained
			AND EXISTS (SELECT 1 FROM audit_chain c WHERE c.elicitation_id = elicitations.id)`, models.StatusPending).Error; err != nil {
			return err
		}
		var first *audit.Record // the chain's first row; nil while the chain is empty
		if head.Seq > 0 {
			rows, err := s.scanChain(tx.Raw(chainSelect + `LEFT JOIN elicitations e ON e.id = c.elicitation_id
				WHERE c.seq = 1`))
			if err != nil {
				return err
			}
			if len(rows) == 0 || rows[0].Missing {
				first = &audit.Record{} // no first row to compare with: nothing predates it
			} else {
				first = &rows[0]
			}
		}
		q := `SELECT ` + entryColumns + ` FROM elicitations e WHERE e.status <> ? AND NOT e.chained`
		if first != nil {
			q += ` AND e.resolved_at IS NOT NULL` // undated: cannot predate anything
		}
		q += ` ORDER BY e.resolved_at NULLS FIRST, ` + s.byteOrder("e.id") + ` LIMIT ?`
		for {
			rows, err := s.scanEntries(tx.Raw(q, models.StatusPending, chainBatch))
			if err != nil {
				return err
			}
			for i := range rows {
				r := &rows[i]
				if first != nil && (first.ElicitationID == "" || !audit.Before(r, first)) {
					// Sorted by the same key: every later row is after the chain began too.
					return s.countRefused(tx, &res)
				}
				if head, err = appendChain(gormTx{tx}, head, &r.Entry, true); err != nil {
					return err
				}
				if err := tx.Exec("UPDATE elicitations SET chained = TRUE WHERE id = ?", r.ElicitationID).Error; err != nil {
					return err
				}
				res.Chained++
			}
			if len(rows) < chainBatch {
				return s.countRefused(tx, &res)
			}
		}
	})
	return res, err
}

func (s *Store) countRefused(tx *gorm.DB, res *Backfill) error {
	var n int64
	err := tx.Raw(`SELECT COUNT(*) FROM elicitations e WHERE e.status <> ? AND NOT e.chained
		AND NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.elicitation_id = e.id)`, models.StatusPending).Scan(&n).Error
	res.Refused = int(n)
	return err
}

// byteOrder is col compared byte by byte (as Go compares strings), whatever the
// database's collation.
func (s *Store) byteOrder(col string) string {
	if s.dialect == Postgres {
		return col + ` COLLATE "C"`
	}
	return col // SQLite's default collation is BINARY
}

// entryColumns reads an elicitations row (alias e) as audit.Entry; params and content
// come back as the text that is hashed.
const entryColumns = `e.id, e.session_id, e.origin, CAST(e.params AS TEXT) AS params, e.status, e.action,
	CAST(e.content AS TEXT) AS content, e.resolved_by, e.resolved_via, e.resolved_at, e.rule_id, e.call_key,
	e.created_at, e.expires_at`

// chainSelect reads chain rows with their prompts as audit.Record columns.
const chainSelect = `SELECT c.seq, c.prev_hash, c.hash, c.version, c.backfilled, c.elicitation_id, e.id IS NULL AS missing,
	` + entryColumns + `
	FROM audit_chain c `

// ChainPage reads up to limit chain rows after seq after, in order, each with its
// prompt as stored (Missing when the prompt row is gone). Verification reads the
// chain this way, a page at a time.
func (s *Store) ChainPage(ctx context.Context, after int64, limit int) ([]audit.Record, error) {
	return s.scanChain(s.ctx(ctx).Raw(chainSelect+`LEFT JOIN elicitations e ON e.id = c.elicitation_id
		WHERE c.seq > ? ORDER BY c.seq LIMIT ?`, after, limit))
}

// ExportPage reads up to limit chain rows after seq after that match f, in order.
func (s *Store) ExportPage(ctx context.Context, f audit.Filter, after int64, limit int) ([]audit.Record, error) {
	q := chainSelect + `JOIN elicitations e ON e.id = c.elicitation_id WHERE c.seq > ?`
	args := []any{after}
	if f.RootIDs != nil {
		if len(f.RootIDs) == 0 {
			return nil, nil
		}
		q += ` AND e.session_id IN (SELECT id FROM sessions WHERE root_id IN ?)`
		args = append(args, f.RootIDs)
	}
	if f.SessionPath != "" {
		q += ` AND e.session_id IN (SELECT id FROM sessions WHERE path LIKE ? ESCAPE '\')`
		args = append(args, likePrefix(f.SessionPath))
	}
	if !f.From.IsZero() {
		q += ` AND e.resolved_at >= ?`
		args = append(args, f.From.UTC())
	}
	if !f.To.IsZero() {
		q += ` AND e.resolved_at < ?`
		args = append(args, f.To.UTC())
	}
	if f.Person != "" {
		q += ` AND e.resolved_by = ?`
		args = append(args, f.Person)
	}
	if f.Outcome != "" {
		if status, action := audit.OutcomeColumns(f.Outcome); action != "" {
			q += ` AND e.status = ? AND e.action = ?`
			args = append(args, status, action)
		} else {
			q += ` AND e.status = ?`
			args = append(args, status)
		}
	}
	q += ` ORDER BY c.seq LIMIT ?`
	args = append(args, limit)
	return s.scanChain(s.ctx(ctx).Raw(q, args...))
}

// entryDest scans entryColumns; NULLs everywhere are allowed (a chain row whose
// prompt is missing).
type entryDest struct {
	id, session, origin, params, status, action, content, by, via, rule, callKey sql.NullString
	resolvedAt, createdAt, expiresAt                                             sql.NullTime
}

func (d *entryDest) targets() []any {
	return []any{&d.id, &d.session, &d.origin, &d.params, &d.status, &d.action, &d.content, &d.by, &d.via,
		&d.resolvedAt, &d.rule, &d.callKey, &d.createdAt, &d.expiresAt}
}

func (d *entryDest) entry() audit.Entry {
	opt := func(v sql.NullString) *string {
		if !v.Valid {
			return nil
		}
		s := v.String
		return &s
	}
	e := audit.Entry{ElicitationID: d.id.String, SessionID: d.session.String, Origin: d.origin.String, Status: d.status.String,
		Action: opt(d.action), ResolvedBy: opt(d.by), ResolvedVia: opt(d.via), RuleID: opt(d.rule), CallKey: opt(d.callKey),
		CreatedAt: d.createdAt.Time, ExpiresAt: d.expiresAt.Time}
	if d.params.Valid {
		e.Params = []byte(d.params.String)
	}
	if d.content.Valid {
		e.Content = []byte(d.content.String)
	}
	if d.resolvedAt.Valid {
		at := d.resolvedAt.Time
		e.ResolvedAt = &at
	}
	return e
}

// scanEntries reads rows of entryColumns.
func (s *Store) scanEntries(q *gorm.DB) ([]audit.Record, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []audit.Record
	for rows.Next() {
		var d entryDest
		if err := rows.Scan(d.targets()...); err != nil {
			return nil, err
		}
		out = append(out, audit.Record{Entry: d.entry()})
	}
	return out, rows.Err()
}

func (s *Store) scanChain(q *gorm.DB) ([]audit.Record, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []audit.Record
	for rows.Next() {
		var r audit.Record
		var chainID string
		var d entryDest
		if err := rows.Scan(append([]any{&r.Seq, &r.PrevHash, &r.Hash, &r.Version, &r.Backfilled, &chainID, &r.Missing}, d.targets()...)...); err != nil {
			return nil, err
		}
		r.Entry = d.entry()
		r.ElicitationID = chainID // the chain row's, also when the prompt is missing
		out = append(out, r)
	}
	return out, rows.Err()
}

// UnchainedDecided lists up to limit decided prompts that have no chain row, oldest
// decision first — verification reports them (the backfill chains only those decided
// before the chain began).
func (s *Store) UnchainedDecided(ctx context.Context, limit int) ([]string, error) {
	var ids []string
	err := s.ctx(ctx).Raw(`SELECT e.id FROM elicitations e WHERE e.status <> ?
		AND NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.elicitation_id = e.id)
		ORDER BY e.resolved_at, e.id LIMIT ?`, models.StatusPending, limit).Scan(&ids).Error
	return ids, err
}
