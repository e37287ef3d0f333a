package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
)

// DefaultTimeout bounds every Postgres statement that has no deadline of its own,
// including the wait for a pooled connection and dialling a new one, and every
// transaction. A request on a database that stopped answering (a failover that left
// connections half-open, a network partition) answers 503 within this time instead of
// hanging until TCP gives up, which takes minutes. No statement of ours comes near it
// on a healthy database; the few that may (pruning a large event backlog) set their
// own, longer deadline.
const DefaultTimeout = 15 * time.Second

// Options tune Open. The zero value is the production default.
type Options struct {
	// Timeout overrides DefaultTimeout (Postgres only; tests shorten it).
	Timeout time.Duration
}

// cancelDeadlineDelay is how long a statement whose context ended waits for the server
// to confirm the cancel before its connection is cut.
const cancelDeadlineDelay = time.Second

// cancelOnServer makes a statement whose context ends (the statement timeout, a caller
// that gave up) cancel on the server too, with a cancel request, instead of pgx's
// default of only cutting the connection: a statement blocked in the server (on a lock,
// say) would otherwise run on after we answered 503 and could still commit — a verdict
// the person was told failed. When the server cannot be reached the connection is cut
// after cancelDeadlineDelay.
func cancelOnServer(_ context.Context, cfg *pgx.ConnConfig) error {
	cfg.BuildContextWatcherHandler = func(conn *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: conn, DeadlineDelay: cancelDeadlineDelay}
	}
	return nil
}

// pgDialector is the Postgres dialector with one change: every error GORM records is
// passed through Translate, which marks "the database cannot be reached" errors as
// errs.ErrUnavailable — in one place, whatever the statement, transaction or scan that
// met them — so the handlers answer 503 instead of 500. Other errors pass unchanged
// (store code matches unique violations by their text).
type pgDialector struct{ *postgres.Dialector }

// Translate implements gorm.ErrorTranslator.
func (pgDialector) Translate(err error) error {
	if isUnavailable(err) {
		return errs.Unavailable(err)
	}
	return err
}

// markUnavailableRows covers the one path where GORM sets an error without AddError
// (and so without Translate): the row-query callback behind Raw(…).Scan and Rows.
func markUnavailableRows(db *gorm.DB) error {
	return db.Callback().Row().After("gorm:row").Register("gatehouse:unavailable", func(tx *gorm.DB) {
		if isUnavailable(tx.Error) {
			tx.Error = errs.Unavailable(tx.Error)
		}
	})
}

// unavailable marks err as errs.ErrUnavailable when the database could not be reached,
// for errors that do not pass through GORM (the pool's Ping).
func unavailable(err error) error {
	if isUnavailable(err) {
		return errs.Unavailable(err)
	}
	return err
}

// isUnavailable reports whether err says the database is down, restarting, failing over
// or not answering, rather than that the statement itself was wrong:
//
//   - SQLSTATE class 08 (connection exception), 57P01 admin_shutdown (the server was
//     stopped or restarted under us), 57P02 crash_shutdown, 57P03 cannot_connect_now
//     (starting up or shutting down), 53300 too_many_connections;
//   - a failed connection attempt (refused, reset, DNS, TLS) of any kind;
//   - the connection dropping mid-statement (EOF, reset, broken pipe, a closed conn);
//   - a deadline: the statement timeout (DefaultTimeout) or the caller's own ran out
//     while waiting for a connection or an answer — including 57014 query_canceled,
//     which is how the server reports the cancel request cancelOnServer sends then
//     (or a statement_timeout an operator set: the database was too slow either way).
//
// A cancelled context (the client hung up) is not unavailability.
func isUnavailable(err error) bool {
	if err == nil || errors.Is(err, errs.ErrUnavailable) || errors.Is(err, context.Canceled) {
		return false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"),
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03",
			pgErr.Code == "53300", pgErr.Code == "57014":
			return true
		}
		return false // the server answered: the statement itself failed
	}
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.As(err, &netErr):
		return true
	}
	// SafeToRetry marks errors raised before anything was sent on the connection.
	return errors.Is(err, pgconn.ErrConnClosed) || pgconn.SafeToRetry(err)
}
