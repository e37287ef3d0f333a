// Package store is the GORM implementation of the persistence Gatehouse's core needs.
// It opens SQLite (pure Go, the embedded default) or Postgres from one URL and applies
// the embedded, versioned migrations with goose.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/libtnb/sqlite"
	"github.com/pressly/goose/v3"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/groupcommit"
	"github.com/gatehouse-dev/gatehouse/migrations"
)

// Dialect names the database flavour behind a Store.
type Dialect string

// Supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Store wraps the GORM handle. Its methods are the only SQL in the program.
type Store struct {
	db *gorm.DB
	// wdb is the pool writes go through. On SQLite it holds a single connection:
	// SQLite admits one writer at a time, and queueing writers in Go is far cheaper
	// than letting them collide and back off in SQLite's busy handler (which sleeps
	// for milliseconds). On Postgres it is the same pool as db.
	wdb *gorm.DB
	// Rule answers are journaled (see JournalDecided) on SQLite in fj, files of its
	// own beside the database, so a journal write never queues behind the writer; on
	// Postgres through jdb, a small pool whose commits skip the WAL flush.
	fj      *fileJournal
	jdb     *gorm.DB
	dialect Dialect
	url     string
	// timeout bounds each statement (Postgres; 0 on SQLite). See DefaultTimeout.
	timeout time.Duration
	// sessions caches session rows, which never change once created.
	sessions *sessionCache
	// rules caches the live rules while it can be trusted (see ruleCache).
	rules *ruleCache
	// stopCheckpoints ends the SQLite checkpointer (nil on Postgres); Close waits
	// for checkpointsDone.
	stopCheckpoints chan struct{}
	checkpointsDone chan struct{}
	closeOnce       sync.Once
	// inserts gathers prompts stored at once into one INSERT (Postgres; nil on SQLite,
	// whose single writer commits without a network round trip).
	inserts *groupcommit.Group[*insertion]
	// stmts keeps the SQLite writer's statements prepared (nil on Postgres).
	stmts *stmtCache
	// openings gathers prompts opened with their announcements at once into one
	// transaction (Postgres; nil on SQLite).
	openings *groupcommit.Group[*opening]
	// decisions gathers verdicts given at once into one transaction (Postgres; nil on
	// SQLite).
	decisions *groupcommit.Group[*decision]
}

// ErrNotFound is returned when a row does not exist. It is the domain's sentinel, so
// callers above the store can match it without importing this package.
var ErrNotFound = errs.ErrNotFound

// ErrConflict is returned when a unique constraint refuses a row.
var ErrConflict = errs.ErrConflict

// Open connects to url: "sqlite://PATH" (the file and its directory are created on first
// run) or "postgres://…". It does not migrate; call Migrate.
func Open(url string) (*Store, error) { return OpenWith(url, Options{}) }

// OpenWith is Open with options.
func OpenWith(url string, o Options) (*Store, error) {
	// Single statements run without GORM's implicit transaction (BEGIN/COMMIT around
	// every write): each is atomic on its own, and the hot paths save two round trips.
	// Multi-statement writes use explicit transactions.
	gcfg := &gorm.Config{Logger: logger.Discard, NowFunc: func() time.Time { return time.Now().UTC() },
		SkipDefaultTransaction: true}
	switch {
	case strings.HasPrefix(url, "sqlite://"), strings.HasPrefix(url, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite:"), "//")
		if path == "" {
			return nil, fmt.Errorf("sqlite url %q has no path", url)
		}
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return nil, fmt.Errorf("create database directory: %w", err)
			}
		}
		// WAL lets readers run beside the single writer; busy_timeout makes concurrent
		// writers queue instead of failing with SQLITE_BUSY. Checkpoints run beside
		// the writer, not in its commits (checkpointSQLite). temp_store(MEMORY): a
		// multi-row INSERT keeps the pages it changes in a statement journal, which
		// past 64 KiB went to a temporary file — two write(2)s per page, a twentieth
		// of storing a batch of rule answers; every sort here is bounded by a LIMIT.
		dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_pragma=wal_autocheckpoint(0)&_pragma=temp_store(MEMORY)&_txlock=immediate"
		db, err := openSQLite(dsn, gcfg, 4)
		if err != nil {
			return nil, err
		}
		wdb, err := openSQLite(dsn, gcfg, 1)
		if err != nil {
			closeGorm(db)
			return nil, err
		}
		wsql, err := wdb.DB()
		if err != nil {
			closeGorm(db)
			closeGorm(wdb)
			return nil, err
		}
		s := &Store{db: db, wdb: wdb, fj: newFileJournal(path), dialect: SQLite, url: url, sessions: newSessionCache(sessionCacheSize),
			rules: newRuleCache(true), stmts: newStmtCache(wsql),
			stopCheckpoints: make(chan struct{}), checkpointsDone: make(chan struct{})}
		go s.checkpointSQLite(s.stopCheckpoints, s.checkpointsDone)
		return s, nil
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		// Surviving a database restart or failover: every statement and transaction
		// without a deadline of its own gets one (a dead server means a 503, not a
		// hang), and "cannot reach the database" errors become errs.ErrUnavailable
		// (see pgDialector). The pool heals itself: pgx pings a connection that sat
		// idle for over a second before handing it out and database/sql replaces one
		// that fails that check, so connections the restart killed are discarded, not
		// used. Connections are also recycled every half hour, so after a failover
		// behind a DNS name or proxy none stays pinned to the old server.
		timeout := o.Timeout
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		gcfg.TranslateError = true
		db, err := openPostgres(url, gcfg, 20, timeout)
		if err != nil {
			return nil, err
		}
		// The decision journal's own pool: its commits do not wait for the WAL flush
		// (see JournalDecided).
		jdb, err := openPostgres(withRuntimeParam(url, "synchronous_commit", "off"), gcfg, journalConns, timeout)
		if err != nil {
			closeGorm(db)
			return nil, err
		}
		s := &Store{db: db, wdb: db, jdb: jdb, dialect: Postgres, url: url, timeout: timeout, sessions: newSessionCache(sessionCacheSize),
			rules: newRuleCache(false)}
		s.inserts = &groupcommit.Group[*insertion]{Run: s.insertGroup, Max: maxGroupInserts}
		s.openings = &groupcommit.Group[*opening]{Run: s.openGroup, Max: maxGroupOpenings}
		s.decisions = &groupcommit.Group[*decision]{Run: s.decideGroup, Max: maxGroupDecisions}
		return s, nil
	default:
		return nil, fmt.Errorf("unsupported database url %q: want sqlite://PATH or postgres://…", url)
	}
}

// openPostgres opens a pool of at most conns connections to url, which survives a
// database restart (see OpenWith).
func openPostgres(url string, gcfg *gorm.Config, conns int, timeout time.Duration) (*gorm.DB, error) {
	dialector, ok := postgres.New(postgres.Config{DSN: url,
		OptionOpenDB: []stdlib.OptionOpenDB{stdlib.OptionBeforeConnect(cancelOnServer)}}).(*postgres.Dialector)
	if !ok {
		return nil, errors.New("open postgres: unexpected dialector type")
	}
	db, err := gorm.Open(pgDialector{dialector}, gcfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if err := markUnavailableRows(db); err != nil {
		closeGorm(db)
		return nil, err
	}
	if err := statementDeadlines(db, timeout); err != nil {
		closeGorm(db)
		return nil, err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	sqlDB.SetMaxOpenConns(conns)
	sqlDB.SetMaxIdleConns(conns)
	sqlDB.SetConnMaxLifetime(30 * time.Minute)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	return db, nil
}

// sessionCacheSize bounds the session row cache.
const sessionCacheSize = 10000

func openSQLite(dsn string, gcfg *gorm.Config, conns int) (*gorm.DB, error) {
	// SQLite (pure Go) spends much of a short query parsing it: keep prepared statements
	// per connection (bounded LRU). Postgres needs no help: pgx caches them already.
	// Not GORM's on the single-connection writer: GORM prepares a new statement under its
	// cache lock while waiting for a connection, so a transaction holding the only
	// connection and preparing a statement of its own (the audit chain's) deadlocks
	// against it. The writer's hot statements go through database/sql (writeSQL), which
	// keeps them prepared after their transaction (stmtCache).
	cfg := *gcfg
	cfg.PrepareStmt = conns > 1
	cfg.PrepareStmtMaxSize = 256
	db, err := gorm.Open(sqlite.Open(dsn), &cfg)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	sqlDB.SetMaxOpenConns(conns)
	sqlDB.SetMaxIdleConns(conns)
	sqlDB.SetConnMaxIdleTime(0)
	return db, nil
}

func closeGorm(db *gorm.DB) {
	if sqlDB, err := db.DB(); err == nil {
		sqlDB.Close()
	}
}

// Dialect reports which database this store talks to.
func (s *Store) Dialect() Dialect { return s.dialect }

// URL returns the url the store was opened with.
func (s *Store) URL() string { return s.url }

// Migrate applies every embedded migration for the store's dialect that has not run yet
// and reports each applied step on log. The logger is a parameter (nil = silent) rather
// than slog.Default so tests and embedders decide where migration noise goes.
func (s *Store) Migrate(ctx context.Context, log *slog.Logger) error {
	sqlDB, err := s.wdb.DB()
	if err != nil {
		return err
	}
	sub, err := fs.Sub(migrations.FS, string(s.dialect))
	if err != nil {
		return err
	}
	gd := goose.DialectSQLite3
	if s.dialect == Postgres {
		gd = goose.DialectPostgres
	}
	p, err := goose.NewProvider(gd, sqlDB, sub)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if log == nil {
		return nil
	}
	for _, r := range res {
		log.Info("migration applied", "version", r.Source.Version, "duration", r.Duration)
	}
	return nil
}

// pingTimeout bounds Ping, so /healthz answers 503 promptly when the database hangs.
const pingTimeout = 3 * time.Second

// Ping checks that the database answers. A database that cannot be reached is
// errs.ErrUnavailable.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := sqlDB.PingContext(ctx); err != nil {
		return unavailable(err)
	}
	return nil
}

// Timeout is the bound on each statement without a deadline of its own (0: none).
func (s *Store) Timeout() time.Duration { return s.timeout }

// Close releases the connection pools.
func (s *Store) Close() error {
	if s.stopCheckpoints != nil {
		s.closeOnce.Do(func() { close(s.stopCheckpoints) })
		<-s.checkpointsDone
	}
	s.stmts.close()
	if s.wdb != s.db {
		closeGorm(s.wdb)
	}
	if s.fj != nil {
		s.fj.Close()
	} else {
		closeGorm(s.jdb)
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// SQL exposes the underlying pool for components (such as the Postgres bus) that need it.
func (s *Store) SQL() (*sql.DB, error) { return s.db.DB() }

// ctx is the handle for reads; w is the handle for writes (see Store.wdb).
func (s *Store) ctx(ctx context.Context) *gorm.DB { return s.db.WithContext(ctx) }

func (s *Store) w(ctx context.Context) *gorm.DB { return s.wdb.WithContext(ctx) }

func notFound(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ErrNotFound
	}
	return err
}

func isUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "unique") || strings.Contains(msg, "duplicate key") || strings.Contains(msg, "23505")
}
