package store

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// Every Postgres statement and transaction without a deadline of its own gets one (a
// dead server is a 503, not a hang). GORM can do that itself (DefaultContextTimeout,
// DefaultTransactionTimeout) but drops the cancel function: the context and its timer
// then live for the whole timeout after the statement ended — a few hundred bytes for
// every statement of the last half minute, which with thousands of requests parking
// at once was a tenth of what a parked request cost. Here the deadline ends with the
// statement (or the transaction, inTx).

// cancelKey is where a statement's cancel function waits for the statement to end.
type cancelKey struct{}

// statementDeadlines registers the callbacks that give db's statements their deadline
// of timeout, each cancelled once its statement has run.
func statementDeadlines(db *gorm.DB, timeout time.Duration) error {
	// before gives the statement its deadline, its cancel function kept with it.
	before := func(db *gorm.DB) {
		if _, ok := db.Statement.Context.Deadline(); ok {
			return
		}
		ctx, cancel := context.WithTimeout(db.Statement.Context, timeout)
		db.Statement.Context = ctx
		db.Statement.Settings.Store(cancelKey{}, cancel)
	}
	after := func(db *gorm.DB) {
		if cancel, ok := db.Statement.Settings.LoadAndDelete(cancelKey{}); ok {
			cancel.(context.CancelFunc)()
		}
	}
	cb := db.Callback()
	const name, done = "gatehouse:deadline", "gatehouse:deadline_end"
	for _, err := range []error{
		cb.Create().Before("*").Register(name, before), cb.Create().After("*").Register(done, after),
		cb.Query().Before("*").Register(name, before), cb.Query().After("*").Register(done, after),
		cb.Update().Before("*").Register(name, before), cb.Update().After("*").Register(done, after),
		cb.Delete().Before("*").Register(name, before), cb.Delete().After("*").Register(done, after),
		cb.Raw().Before("*").Register(name, before), cb.Raw().After("*").Register(done, after),
		// A row query's rows are read after its callbacks have run (Rows, Scan): its
		// deadline must outlive them, so it gets one but is not cancelled here, as
		// GORM would not — its timer ends it.
		cb.Row().Before("*").Register(name, before),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// inTx runs fn in a transaction on db (the writers' handle, or a transaction on it,
// where this is a savepoint) with, on Postgres, the store's deadline when ctx has
// none, cancelled when the transaction ends.
func (s *Store) inTx(ctx context.Context, db *gorm.DB, fn func(tx *gorm.DB) error) error {
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	return db.WithContext(ctx).Transaction(fn)
}

// deadline is ctx with, on Postgres, the store's deadline when ctx has none — for the
// statements and transactions run through database/sql rather than GORM. The caller
// cancels it when they end.
func (s *Store) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || s.dialect != Postgres || s.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.timeout)
}
