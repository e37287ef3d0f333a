package store

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// SeedAudit writes n decided prompts of session sid, each with about paramBytes of
// params, and n audit chain rows for them, straight into the database in two
// statements: the audit export's benchmark and tests need many rows fast. The hashes
// are placeholders, so the chain does not verify — never call it on a database that
// serves.
func (s *Store) SeedAudit(ctx context.Context, sid string, n, paramBytes int) error {
	db, err := s.SQL()
	if err != nil {
		return err
	}
	ph := func(q string) string {
		if s.Dialect() != Postgres {
			return q
		}
		for i := 1; strings.Contains(q, "?"); i++ {
			q = strings.Replace(q, "?", "$"+strconv.Itoa(i), 1)
		}
		return q
	}
	params := `{"message":"run it?","tool_input":{"command":"` + strings.Repeat("x", max(paramBytes-50, 0)) + `"}}`
	now := time.Now().UTC()
	series := `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) `
	if s.Dialect() == Postgres {
		series = `WITH n(i) AS (SELECT generate_series(1, CAST(? AS INTEGER))) `
	}
	if _, err := db.ExecContext(ctx, ph(series+`INSERT INTO elicitations (id, session_id, origin, params, status, action,
		resolved_by, resolved_via, created_at, resolved_at, expires_at, logged, chained)
		SELECT 'seed_' || i, ?, 'claude_permission', ?, 'resolved', 'accept', 'alice', 'api', ?, ?, ?, 2, TRUE FROM n`),
		n, sid, params, now, now, now); err != nil {
		return err
	}
	zeros := strings.Repeat("0", 64)
	_, err = db.ExecContext(ctx, ph(series+`INSERT INTO audit_chain (seq, elicitation_id, prev_hash, hash)
		SELECT i + (SELECT seq FROM audit_head WHERE id = 1), 'seed_' || i, ?, ? FROM n`), n, zeros, zeros)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, `UPDATE audit_head SET seq = seq + `+strconv.Itoa(n)+` WHERE id = 1`)
	return err
}
