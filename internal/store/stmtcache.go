package store

import (
	"context"
	"database/sql"
	"sync"
)

// maxPrepared bounds the statements a stmtCache keeps prepared.
const maxPrepared = 64

// stmtCache keeps the SQLite writer's statements prepared: SQLite spends much of a
// short statement's time preparing it, and the single writer connection runs the same
// few statements over and over. A statement first seen inside a transaction cannot be
// prepared there — preparing takes a connection, and the transaction holds the only
// one — so it is noted, and prepared once that transaction has ended.
type stmtCache struct {
	db *sql.DB

	mu     sync.Mutex
	stmts  map[string]*sql.Stmt
	wanted map[string]bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}, wanted: map[string]bool{}}
}

// get returns query's prepared statement, or nil (noting it, while there is room).
func (c *stmtCache) get(query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[query]; ok {
		return st
	}
	if len(c.stmts)+len(c.wanted) < maxPrepared {
		c.wanted[query] = true
	}
	return nil
}

// prepareWanted prepares the statements noted since the last call. Call it holding no
// connection of the pool.
func (c *stmtCache) prepareWanted(ctx context.Context) {
	if c == nil {
		return
	}
	c.mu.Lock()
	wanted := c.wanted
	c.wanted = map[string]bool{}
	c.mu.Unlock()
	for q := range wanted {
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			continue // run unprepared
		}
		c.mu.Lock()
		c.stmts[q] = st
		c.mu.Unlock()
	}
}

// close closes every prepared statement.
func (c *stmtCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = map[string]*sql.Stmt{}
}
