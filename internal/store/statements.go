package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"gorm.io/gorm"
)

// statements runs the statements of one transaction, through GORM or through
// database/sql directly — the latter where the ORM's per-statement cost showed on a
// hot path — so that such a transaction is written once for both.
type statements interface {
	// exec runs a statement and reports the rows it affected.
	exec(query string, args ...any) (int64, error)
	// queryRow runs a statement returning one row and scans it into dest.
	queryRow(query string, args []any, dest ...any) error
	// queryRows runs a statement and calls each with a scanner for every row it returns.
	queryRows(query string, args []any, each func(scan func(dest ...any) error) error) error
	// maxParams is how many parameters one statement should carry.
	maxParams() int
}

// Parameters one multi-row statement carries at most. Postgres allows 65,535 and SQLite
// 32,766. On SQLite, statements of 120 store a batch of rule answers as fast as larger
// ones (BenchmarkInsertDecided: 120 and 480 within noise of each other), and they stay
// cheap to bind under a driver that finds each parameter by scanning the argument list
// (binding then costs the square of a statement's parameters).
const (
	sqliteStatementParams   = 120
	postgresStatementParams = 60000
)

// inChunks calls f for each run [lo, hi) of n rows of perRow parameters that one
// statement of tx carries.
func inChunks(tx statements, n, perRow int, f func(lo, hi int) error) error {
	per := max(1, tx.maxParams()/perRow)
	for lo := 0; lo < n; lo += per {
		if err := f(lo, min(n, lo+per)); err != nil {
			return err
		}
	}
	return nil
}

func (g gormTx) maxParams() int {
	if g.tx.Dialector.Name() == "postgres" {
		return postgresStatementParams
	}
	return sqliteStatementParams
}

func (t sqlTx) maxParams() int {
	if t.postgres {
		return postgresStatementParams
	}
	return sqliteStatementParams
}

// gormTx runs statements in a GORM transaction.
type gormTx struct{ tx *gorm.DB }

func (g gormTx) exec(query string, args ...any) (int64, error) {
	res := g.tx.Exec(query, args...)
	return res.RowsAffected, res.Error
}

func (g gormTx) queryRow(query string, args []any, dest ...any) error {
	// Rows, not Row: its errors pass through the dialector's translation
	// (errs.ErrUnavailable on Postgres; see markUnavailableRows).
	rows, err := g.tx.Raw(query, args...).Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	return rows.Close()
}

func (g gormTx) queryRows(query string, args []any, each func(scan func(dest ...any) error) error) error {
	rows, err := g.tx.Raw(query, args...).Rows()
	if err != nil {
		return err
	}
	return eachRow(rows, each)
}

// eachRow calls each for every row of rows, then closes them.
func eachRow(rows *sql.Rows, each func(scan func(dest ...any) error) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := each(rows.Scan); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}

// sqlTx runs statements in a database/sql transaction. Statements are written with ?
// placeholders, as for GORM; on Postgres (postgres) they become $1, $2, … and errors
// saying the database is down become errs.ErrUnavailable, as GORM's dialector does.
type sqlTx struct {
	ctx      context.Context
	tx       *sql.Tx
	postgres bool
	stmts    *stmtCache // SQLite's writer: statements kept prepared (nil: none)
}

// stmt is query's prepared statement in t, or nil.
func (t sqlTx) stmt(query string) *sql.Stmt {
	if st := t.stmts.get(query); st != nil {
		return t.tx.StmtContext(t.ctx, st)
	}
	return nil
}

func (t sqlTx) execRaw(query string, args []any) (sql.Result, error) {
	if st := t.stmt(query); st != nil {
		return st.ExecContext(t.ctx, args...)
	}
	return t.tx.ExecContext(t.ctx, t.q(query), args...)
}

// row runs a statement returning one row.
func (t sqlTx) row(query string, args []any) *sql.Row {
	if st := t.stmt(query); st != nil {
		return st.QueryRowContext(t.ctx, args...)
	}
	return t.tx.QueryRowContext(t.ctx, t.q(query), args...)
}

// q is query as the driver takes it.
func (t sqlTx) q(query string) string {
	if !t.postgres {
		return query
	}
	return numberPlaceholders(query)
}

// numberPlaceholders rewrites each ? of query as $1, $2, … in order. The statements
// given to a sqlTx have no ? of their own in literals or identifiers.
func numberPlaceholders(query string) string {
	n := strings.Count(query, "?")
	if n == 0 {
		return query
	}
	b := make([]byte, 0, len(query)+n*4)
	i := 0
	for j := 0; j < len(query); j++ {
		if query[j] != '?' {
			b = append(b, query[j])
			continue
		}
		i++
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(i), 10)
	}
	return string(b)
}

func (t sqlTx) exec(query string, args ...any) (int64, error) {
	res, err := t.execRaw(query, args)
	if err != nil {
		return 0, unavailable(err)
	}
	return res.RowsAffected()
}

// execLastID runs an INSERT and returns the rowid of the last row it made — on SQLite,
// where the rows of one multi-row INSERT get consecutive rowids, in order, ending at it
// (one writer at a time; AUTOINCREMENT hands out max+1 for each row). Postgres has no
// such id: read them back with RETURNING.
func (t sqlTx) execLastID(query string, args ...any) (int64, error) {
	res, err := t.execRaw(query, args)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

func (t sqlTx) queryRow(query string, args []any, dest ...any) error {
	return unavailable(t.row(query, args).Scan(dest...))
}

func (t sqlTx) queryRows(query string, args []any, each func(scan func(dest ...any) error) error) error {
	rows, err := t.tx.QueryContext(t.ctx, t.q(query), args...)
	if err != nil {
		return unavailable(err)
	}
	return unavailable(eachRow(rows, each))
}

// writeSQL runs fn in a database/sql transaction on the write pool and commits it when
// fn returns nil. On Postgres the transaction runs under the statement timeout unless
// ctx has a deadline of its own (as inTx).
func (s *Store) writeSQL(ctx context.Context, fn func(tx sqlTx) error) error {
	db, err := s.wdb.DB()
	if err != nil {
		return err
	}
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return unavailable(err)
	}
	defer tx.Rollback() // a no-op once committed
	if err := fn(sqlTx{ctx: ctx, tx: tx, postgres: s.dialect == Postgres, stmts: s.stmts}); err != nil {
		return err
	}
	err = unavailable(tx.Commit())
	s.stmts.prepareWanted(ctx)
	return err
}
