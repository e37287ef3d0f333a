package elicit

import (
	"sync"

	"github.com/gatehouse-dev/gatehouse/models"
)

// waiters maps an elicitation id to the parked requests waiting on it. A wake carries
// either nothing — a signal to re-read the row — or, when this process committed the
// decision itself, the decided row, which saves the woken request a database read.
type waiters struct {
	mu sync.Mutex
	m  map[string]map[chan *models.Elicitation]struct{}
}

type waiterSet = map[chan *models.Elicitation]struct{}

func newWaiters() *waiters { return &waiters{m: map[string]waiterSet{}} }

// ids lists the prompts someone here waits on (whose leases this process renews).
func (w *waiters) ids() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.m))
	for id := range w.m {
		out = append(out, id)
	}
	return out
}

func (w *waiters) add(id string) chan *models.Elicitation {
	c := make(chan *models.Elicitation, 1)
	w.mu.Lock()
	set := w.m[id]
	if set == nil {
		set = waiterSet{}
		w.m[id] = set
	}
	set[c] = struct{}{}
	w.mu.Unlock()
	return c
}

func (w *waiters) remove(id string, c chan *models.Elicitation) {
	w.mu.Lock()
	if set := w.m[id]; set != nil {
		delete(set, c)
		if len(set) == 0 {
			delete(w.m, id)
		}
	}
	w.mu.Unlock()
}

// total reports how many requests are parked right now.
func (w *waiters) total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, set := range w.m {
		n += len(set)
	}
	return n
}

// wake signals the waiters of id; an empty id signals every waiter (after a lost bus
// connection anything may have been decided).
func (w *waiters) wake(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if id == "" {
		for _, set := range w.m {
			signal(set, nil)
		}
		return
	}
	signal(w.m[id], nil)
}

// wakeWith hands a row this process just decided to its waiters.
func (w *waiters) wakeWith(row *models.Elicitation) {
	w.mu.Lock()
	defer w.mu.Unlock()
	signal(w.m[row.ID], row)
}

func signal(set waiterSet, row *models.Elicitation) {
	for c := range set {
		select {
		case c <- row:
		default: // already signalled
		}
	}
}
