package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse-dev/gatehouse/internal/audit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// pgDigests is the SQL for SHA-256(origin) ‖ SHA-256(params) ‖ SHA-256(content) of the
// row alias r, over the text Postgres returns for each (see internal/audit).
func pgDigests(r string) string {
	return `sha256(convert_to(` + r + `.origin, 'UTF8'))
		|| sha256(convert_to(CAST(` + r + `.params AS TEXT), 'UTF8'))
		|| sha256(coalesce(convert_to(CAST(` + r + `.content AS TEXT), 'UTF8'), ''::bytea))`
}

// decideAndChainSQLite is DecideElicitation on SQLite: the conditional update and the
// chain append in one transaction (writes are serialized by SQLite's write lock, taken
// at BEGIN IMMEDIATE). query must return elicitationColumns.
//
// It talks to database/sql directly rather than through GORM: this transaction is on
// the path from a person's verdict to the waiting agent, and GORM's transaction and
// row-scanning machinery cost about as much as the statements themselves (issue 13).
func (s *Store) decideAndChainSQLite(ctx context.Context, query string, args []any, d audit.Decision) (*models.Elicitation, error) {
	var won *models.Elicitation
	err := s.writeSQL(ctx, func(tx sqlTx) error {
		var err error
		won, err = scanElicitation(tx.tx.QueryRowContext(ctx, query, args...))
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
		_, err = appendChain(tx, head, d, won.Origin, won.Params, won.Content)
		return err
	})
	if err != nil {
		return nil, err
	}
	return won, nil
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

// appendChain writes the chain row after head for decision d and moves the head, in
// the caller's transaction.
func appendChain(tx statements, head ChainHead, d audit.Decision, origin string, params, content []byte) (ChainHead, error) {
	next := ChainHead{Seq: head.Seq + 1, Hash: audit.Link(d, origin, params, content, head.Hash)}
	if _, err := tx.exec("INSERT INTO audit_chain (seq, elicitation_id, prev_hash, hash) VALUES (?, ?, ?, ?)",
		next.Seq, d.ElicitationID, head.Hash, next.Hash); err != nil {
		return head, err
	}
	_, err := tx.exec("UPDATE audit_head SET seq = ?, prev_hash = ?, hash = ? WHERE id = 1", next.Seq, head.Hash, next.Hash)
	return next, err
}

// AuditHead reads the chain's head: its last sequence number and hash.
func (s *Store) AuditHead(ctx context.Context) (int64, string, error) {
	h, err := chainHead(s.ctx(ctx), false)
	return h.Seq, h.Hash, err
}

// chainBatch bounds one backfill transaction.
const chainBatch = 200

// ChainUnchained appends to the audit chain every decided prompt the chain lacks —
// those decided before the chain existed, or by a replica running older code during a
// rolling upgrade — oldest decision first, and returns how many it chained. The
// partial index elicitations_unchained makes this cheap when there is nothing to do.
func (s *Store) ChainUnchained(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := s.chainUnchainedBatch(ctx)
		total += n
		if err != nil || n < chainBatch {
			return total, err
		}
	}
}

func (s *Store) chainUnchainedBatch(ctx context.Context) (int, error) {
	n := 0
	err := s.w(ctx).Transaction(func(tx *gorm.DB) error {
		n = 0
		head, err := chainHead(tx, s.dialect == Postgres)
		if err != nil {
			return err
		}
		// What is hashed is what is stored: params and content read back as text.
		var rows []struct {
			ID, SessionID, Origin, Status           string
			Action, ResolvedBy, ResolvedVia, RuleID *string
			ResolvedAt                              *time.Time
			Params                                  string
			Content                                 *string
			InChain                                 bool
		}
		err = tx.Raw(`SELECT e.id, e.session_id, e.origin, e.status, e.action, e.resolved_by, e.resolved_via, e.rule_id, e.resolved_at,
				CAST(e.params AS TEXT) AS params, CAST(e.content AS TEXT) AS content,
				EXISTS (SELECT 1 FROM audit_chain c WHERE c.elicitation_id = e.id) AS in_chain
			FROM elicitations e WHERE e.status <> ? AND NOT e.chained ORDER BY e.resolved_at, e.id LIMIT ?`,
			models.StatusPending, chainBatch).Scan(&rows).Error
		if err != nil {
			return err
		}
		for _, r := range rows {
			if !r.InChain {
				d := audit.Decision{ElicitationID: r.ID, SessionID: r.SessionID, Status: r.Status,
					Action: deref(r.Action), ResolvedBy: deref(r.ResolvedBy), ResolvedVia: deref(r.ResolvedVia), RuleID: deref(r.RuleID)}
				if r.ResolvedAt != nil {
					d.ResolvedAt = *r.ResolvedAt
				}
				if head, err = appendChain(gormTx{tx}, head, d, r.Origin, []byte(r.Params), []byte(deref(r.Content))); err != nil {
					return err
				}
			}
			if err := tx.Exec("UPDATE elicitations SET chained = TRUE WHERE id = ?", r.ID).Error; err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// chainSelect reads chain rows with their prompts as audit.Record columns; params and
// content come back as the text that was hashed.
const chainSelect = `SELECT c.seq, c.prev_hash, c.hash, c.elicitation_id, e.id IS NULL AS missing,
	e.session_id, e.origin, CAST(e.params AS TEXT) AS params, e.status, e.action,
	CAST(e.content AS TEXT) AS content, e.resolved_by, e.resolved_via, e.rule_id, e.resolved_at, e.created_at
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

func (s *Store) scanChain(q *gorm.DB) ([]audit.Record, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []audit.Record
	for rows.Next() {
		var r audit.Record
		var session, origin, params, status, action, content, by, via, rule sql.NullString
		var resolvedAt, createdAt sql.NullTime
		if err := rows.Scan(&r.Seq, &r.PrevHash, &r.Hash, &r.ElicitationID, &r.Missing, &session, &origin, &params,
			&status, &action, &content, &by, &via, &rule, &resolvedAt, &createdAt); err != nil {
			return nil, err
		}
		r.SessionID, r.Origin, r.Status, r.Action = session.String, origin.String, status.String, action.String
		r.ResolvedBy, r.ResolvedVia, r.RuleID = by.String, via.String, rule.String
		if params.Valid {
			r.Params = []byte(params.String)
		}
		if content.Valid {
			r.Content = []byte(content.String)
		}
		r.ResolvedAt, r.CreatedAt = resolvedAt.Time, createdAt.Time
		out = append(out, r)
	}
	return out, rows.Err()
}

// UnchainedDecided lists up to limit decided prompts that have no chain row, oldest
// decision first — verification reports them (the backfill chains legitimate ones).
func (s *Store) UnchainedDecided(ctx context.Context, limit int) ([]string, error) {
	var ids []string
	err := s.ctx(ctx).Raw(`SELECT e.id FROM elicitations e WHERE e.status <> ?
		AND NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.elicitation_id = e.id)
		ORDER BY e.resolved_at, e.id LIMIT ?`, models.StatusPending, limit).Scan(&ids).Error
	return ids, err
}
