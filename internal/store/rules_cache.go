package store

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// ruleCache holds the rules that were live when last read, by tool, so a hook does
// not query the rules table every time. It answers only while it can be as right as
// the query: every rule change on this replica drops it after its commit, a change on
// another replica drops it when this replica hears the change's NOTIFY, and it is not
// used at all while trusted says this replica might be missing notes (SQLite has one
// process: always trusted; Postgres: while the LISTEN connection is up, see
// CacheRulesWhile). A read that began before a drop is never stored (gen).
//
// Rows are kept without their fire counts, which change with every answer: a count
// shown to a person is read from the table (GetRule, ListRules).
type ruleCache struct {
	trusted atomic.Pointer[func() bool]

	mu sync.Mutex
	// gen counts drops; a read stores what it found only if no drop came in between.
	gen    uint64
	loaded bool
	// at is the time the rows were read as of: rules expired then are not here, so
	// the cache answers only for that time or later.
	at     time.Time
	byTool map[string][]models.Rule
	// dropped is closed, and replaced, by every drop (Store.RuleCacheDropped).
	dropped chan struct{}
}

func newRuleCache(alwaysTrusted bool) *ruleCache {
	c := &ruleCache{dropped: make(chan struct{})}
	if alwaysTrusted {
		yes := func() bool { return true }
		c.trusted.Store(&yes)
	}
	return c
}

func (c *ruleCache) isTrusted() bool {
	f := c.trusted.Load()
	return f != nil && (*f)()
}

// get returns tool's rules live at now, oldest first (a copy), when the cache can
// answer for now.
func (c *ruleCache) get(tool string, now time.Time) ([]models.Rule, bool) {
	if !c.isTrusted() {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.loaded || now.Before(c.at) {
		return nil, false
	}
	return liveAt(c.byTool[tool], now), true
}

// begin starts a read meant for the cache: ok is false when the cache is not trusted
// (query for the one tool instead); gen is passed to put.
func (c *ruleCache) begin() (gen uint64, ok bool) {
	if !c.isTrusted() {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen, true
}

// put stores rows, every rule live at at, unless the cache was dropped since begin.
func (c *ruleCache) put(gen uint64, at time.Time, rows []models.Rule) {
	byTool := make(map[string][]models.Rule)
	for _, r := range rows {
		byTool[r.Tool] = append(byTool[r.Tool], r)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	c.loaded, c.at, c.byTool = true, at, byTool
}

// drop forgets every rule and refuses reads that began before it.
func (c *ruleCache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.loaded, c.byTool = false, nil
	close(c.dropped)
	c.dropped = make(chan struct{})
}

// liveAt returns the rules of rows not expired at now, in a new slice.
func liveAt(rows []models.Rule, now time.Time) []models.Rule {
	var out []models.Rule
	for _, r := range rows {
		if r.ExpiresAt == nil || r.ExpiresAt.After(now) {
			out = append(out, r)
		}
	}
	return out
}

// CacheRulesWhile lets LiveRulesForTool answer from memory while trusted reports true
// (Postgres: while this replica's LISTEN connection is up, so it hears every rule
// change made on other replicas). Whoever calls it must also call DropRules for every
// RulesChannel note and whenever the LISTEN connection is re-established. On SQLite
// the cache is always used.
func (s *Store) CacheRulesWhile(trusted func() bool) {
	if s.dialect == SQLite {
		return
	}
	s.rules.trusted.Store(&trusted)
}

// DropRules forgets the cached rules: a rule changed (on another replica) or notes
// about changes may have been missed.
func (s *Store) DropRules() { s.rules.drop() }

// RuleCacheDropped returns a channel closed at the next DropRules (or rule change on
// this replica): what a test waits on to know a replica heard of a change.
func (s *Store) RuleCacheDropped() <-chan struct{} {
	s.rules.mu.Lock()
	defer s.rules.mu.Unlock()
	return s.rules.dropped
}
