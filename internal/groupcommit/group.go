// Package groupcommit lets writes that arrive while one transaction runs share the
// next, instead of each waiting its turn for a transaction of its own.
//
// On Postgres a commit is a write-ahead-log flush, and some commits hold a hot lock
// until it is done (publishing a session's events updates that session's row and sends
// a NOTIFY): a burst of requests parking at once went through one commit after another.
// With a Group, one commit carries as many of them as arrived meanwhile.
//
// The first caller to arrive leads: it runs the queued items (its own first) and, once
// they are done, hands the lead to the oldest caller still queued, if any — so no caller
// waits for more than the group before its own.
package groupcommit

import "sync"

// Group runs items in groups. Its zero value is not usable: set Run.
type Group[T any] struct {
	// Run does one group's work — typically one transaction — and records each item's
	// outcome in the item itself.
	Run func(items []T)
	// Max bounds a group: the sum of Weight over its items (at least one item).
	Max int
	// Weight is an item's share of Max; nil weighs each item 1.
	Weight func(T) int

	mu      sync.Mutex
	queue   []*entry[T]
	leading bool
}

type entry[T any] struct {
	item T
	// turn is told true when the entry leads next, false once it has been run.
	turn chan bool
}

// Do runs item with the next group and returns once that group has run.
func (g *Group[T]) Do(item T) {
	e := &entry[T]{item: item, turn: make(chan bool, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, e)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if !lead && !<-e.turn {
		return
	}
	g.mu.Lock()
	batch := g.take()
	g.mu.Unlock()
	items := make([]T, len(batch))
	for i, b := range batch {
		items[i] = b.item
	}
	defer func() {
		// Even if Run panicked: the others are not left waiting for a lead that
		// never comes.
		for _, b := range batch[1:] {
			b.turn <- false
		}
		g.mu.Lock()
		if len(g.queue) > 0 {
			g.queue[0].turn <- true
		} else {
			g.leading = false
		}
		g.mu.Unlock()
	}()
	g.Run(items)
}

// take removes the next group from the queue: the oldest entries, up to Max (at least
// one). g.mu is held.
func (g *Group[T]) take() []*entry[T] {
	n, weight := 0, 0
	for n < len(g.queue) {
		w := 1
		if g.Weight != nil {
			w = g.Weight(g.queue[n].item)
		}
		if n > 0 && weight+w > g.Max {
			break
		}
		weight += w
		n++
	}
	batch := g.queue[:n:n]
	if g.queue = g.queue[n:]; len(g.queue) == 0 {
		g.queue = nil // let the backing array go
	}
	return batch
}

// Queued is how many callers wait for a group to take them (not counting the group
// running): how a test knows its callers have all arrived.
func (g *Group[T]) Queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}
