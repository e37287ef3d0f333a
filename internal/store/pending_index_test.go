package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// TestPendingPromptsAreFoundByTheirOwnIndex: the expiry sweep, the pending count and
// the inbox's pending list read the index of pending prompts alone — not every prompt
// ever decided — on both databases. On Postgres each statement is planned as a cached
// plan for any parameter values (a generic plan), which can use a partial index only
// when the statement names the pending status itself rather than binding it.
func TestPendingPromptsAreFoundByTheirOwnIndex(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		ctx := context.Background()
		st := testserver.OpenStore(t, db.NewURL(t))
		sess := testserver.NewSession(t, st)
		sqlDB, err := st.SQL()
		if err != nil {
			t.Fatal(err)
		}
		postgres := db.Name == "postgres"
		emptyObject := "CAST('{}' AS BLOB)" // as the server writes params: bytes
		if postgres {
			emptyObject = "'{}'"
		}
		// Many decided prompts and a few pending ones, and statistics that say so.
		fill := `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
			INSERT INTO elicitations (id, session_id, origin, params, status, created_at, expires_at, resolved_at)
			SELECT 'elicit_' || i, '` + sess.ID + `', 'claude_permission', ` + emptyObject + `,
				CASE WHEN i % 500 = 0 THEN 'pending' ELSE 'resolved' END, ?, ?, ? FROM n`
		now := time.Now().UTC()
		if postgres {
			fill = strings.Replace(strings.Replace(strings.Replace(fill, "?", "$1", 1), "?", "$2", 1), "?", "$3", 1)
		}
		if _, err := sqlDB.ExecContext(ctx, fill, now, now.Add(time.Hour), now); err != nil {
			t.Fatal(err)
		}
		if _, err := sqlDB.ExecContext(ctx, "ANALYZE"); err != nil {
			t.Fatal(err)
		}

		type statement struct {
			sql  string
			vars []any
		}
		var ran []statement
		g := store.GormOf(st)
		if err := g.Callback().Query().After("gorm:query").Register("test:capture", func(tx *gorm.DB) {
			ran = append(ran, statement{tx.Statement.SQL.String(), append([]any(nil), tx.Statement.Vars...)})
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = g.Callback().Query().Remove("test:capture") })
		if _, err := st.DuePending(ctx, now.Add(2*time.Hour), 100); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CountPending(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := st.PendingMatching(ctx, models.PendingQuery{Limit: 50}); err != nil {
			t.Fatal(err)
		}
		if len(ran) != 3 {
			t.Fatalf("captured %d statements, want 3: %+v", len(ran), ran)
		}
		for _, s := range ran {
			if plan := planOf(t, ctx, sqlDB, postgres, s.sql, s.vars); !strings.Contains(plan, "elicitations_pending_expires") {
				t.Errorf("%s\nis not served by the index of pending prompts:\n%s", s.sql, plan)
			}
		}
	})
}

// planOf is the plan the database makes for query; on Postgres the generic plan, made
// once for any values of its parameters.
func planOf(t *testing.T, ctx context.Context, db *sql.DB, postgres bool, query string, vars []any) string {
	t.Helper()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var rows *sql.Rows
	if postgres {
		if _, err := conn.ExecContext(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
			t.Fatal(err)
		}
		defer conn.ExecContext(ctx, "RESET plan_cache_mode; DEALLOCATE ALL")
		if _, err := conn.ExecContext(ctx, "PREPARE q AS "+query); err != nil {
			t.Fatal(err)
		}
		args := make([]string, len(vars))
		for i, v := range vars {
			switch v := v.(type) {
			case time.Time:
				args[i] = "'" + v.UTC().Format("2006-01-02 15:04:05.999999Z07:00") + "'"
			case string:
				args[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
			default:
				args[i] = fmt.Sprint(v)
			}
		}
		execute := "EXPLAIN EXECUTE q"
		if len(args) > 0 {
			execute += "(" + strings.Join(args, ", ") + ")"
		}
		rows, err = conn.QueryContext(ctx, execute)
	} else {
		rows, err = conn.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, vars...)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var lines []string
	for rows.Next() {
		dest := make([]any, len(cols))
		for i := range dest {
			dest[i] = new(any)
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		for _, d := range dest {
			if s, ok := (*d.(*any)).(string); ok {
				lines = append(lines, s)
			}
		}
	}
	return regexp.MustCompile(`\s+`).ReplaceAllString(strings.Join(lines, "\n"), " ")
}
