package elicit

import "sync"

// waiters maps an elicitation id to the parked requests waiting on it. A wake is a
// signal to re-read the row, never the verdict itself.
type waiters struct {
	mu sync.Mutex
	m  map[string]map[chan struct{}]struct{}
}

func newWaiters() *waiters { return &waiters{m: map[string]map[chan struct{}]struct{}{}} }

func (w *waiters) add(id string) chan struct{} {
	c := make(chan struct{}, 1)
	w.mu.Lock()
	set := w.m[id]
	if set == nil {
		set = map[chan struct{}]struct{}{}
		w.m[id] = set
	}
	set[c] = struct{}{}
	w.mu.Unlock()
	return c
}

func (w *waiters) remove(id string, c chan struct{}) {
	w.mu.Lock()
	if set := w.m[id]; set != nil {
		delete(set, c)
		if len(set) == 0 {
			delete(w.m, id)
		}
	}
	w.mu.Unlock()
}

func (w *waiters) count(id string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m[id])
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
			signal(set)
		}
		return
	}
	signal(w.m[id])
}

func signal(set map[chan struct{}]struct{}) {
	for c := range set {
		select {
		case c <- struct{}{}:
		default: // already signalled
		}
	}
}
