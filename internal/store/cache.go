package store

import (
	"container/list"
	"sync"

	"github.com/gatehouse-dev/gatehouse/models"
)

// sessionCache keeps recently used session rows. It is safe to cache them, on every
// replica, because a session row never changes after it is created (its id, parent,
// root, path and owner are fixed), and every route starts by loading one — so the
// hot paths (hooks, evaluate, resolve, publishing) skip a database read.
type sessionCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // front = most recent
	items map[string]*list.Element
}

func newSessionCache(max int) *sessionCache {
	return &sessionCache{max: max, order: list.New(), items: map[string]*list.Element{}}
}

// get returns a copy of the cached session, so callers cannot modify the cache.
func (c *sessionCache) get(id string) (*models.Session, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[id]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	s := *el.Value.(*models.Session)
	return &s, true
}

func (c *sessionCache) put(s *models.Session) {
	cp := *s
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[s.ID]; ok {
		el.Value = &cp
		c.order.MoveToFront(el)
		return
	}
	c.items[s.ID] = c.order.PushFront(&cp)
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*models.Session).ID)
	}
}
