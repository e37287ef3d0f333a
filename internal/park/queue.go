package park

import (
	"context"
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
)

// ParkThen is Park for a caller with nothing to wait on: it returns at once, and then
// gets what Park would return — on a worker goroutine, once the request had its turn
// in a slot (given back before then is called). While every slot is taken the request
// waits in a queue, first come first served, as the few words it takes here. A held
// request (internal/held) waiting for its turn in Park kept a goroutine blocked with
// its stack: a burst of thousands of parks held as many goroutines, whose stacks, once
// freed, stayed in the process's resident memory long after the burst.
//
// A request whose ctx ended while it waited is given elicit.ErrClientGone when its turn
// comes, with nothing prepared or parked.
func (s *Service) ParkThen(ctx context.Context, prepare Prepare, then func(Parked, error)) {
	s.queued.Add(1)
	s.line.push(turn{ctx, prepare, then})
	s.nextTurns()
}

// turn is one queued ParkThen.
type turn struct {
	ctx     context.Context
	prepare Prepare
	then    func(Parked, error)
}

// runTurn runs t in the slot the caller took, on a worker, then gives the slot back
// (to the next queued turn, if any) and calls t.then.
func (s *Service) runTurn(t turn) {
	var p Parked
	s.inSlotThen(func() (err error) {
		if t.ctx.Err() != nil {
			return elicit.ErrClientGone
		}
		p, err = s.prepareAndAttach(t.ctx, t.prepare)
		return err
	}, func(err error) { t.then(p, err) })
}

// giveSlot gives a slot back and starts the queued turns that can now have one.
func (s *Service) giveSlot() {
	<-s.slots
	s.nextTurns()
}

// nextTurns starts queued turns while a slot is free. Every push and every slot given
// back is followed by a call, so no turn stays queued while a slot is free.
func (s *Service) nextTurns() {
	for {
		t, ok := s.line.popIf(func() bool {
			select {
			case s.slots <- struct{}{}:
				return true
			default:
				return false
			}
		})
		if !ok {
			return
		}
		s.queued.Add(-1)
		s.runTurn(t)
	}
}

// turns is a FIFO of queued turns.
type turns struct {
	mu   sync.Mutex
	head int
	q    []turn
}

func (l *turns) push(t turn) {
	l.mu.Lock()
	l.q = append(l.q, t)
	l.mu.Unlock()
}

// popIf takes the oldest turn when there is one and take (a slot taken for it) says
// yes, under the queue's lock: a slot is never taken for a turn another caller pops.
func (l *turns) popIf(take func() bool) (turn, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.head == len(l.q) || !take() {
		return turn{}, false
	}
	t := l.q[l.head]
	l.q[l.head] = turn{}
	l.head++
	switch {
	case l.head == len(l.q): // drained: start over, keeping the array unless it grew large
		l.head, l.q = 0, l.q[:0]
		if cap(l.q) > 1024 {
			l.q = nil
		}
	case l.head >= 1024 && 2*l.head >= len(l.q): // never drained: move the rest down
		n := copy(l.q, l.q[l.head:])
		clear(l.q[n:])
		l.head, l.q = 0, l.q[:n]
	}
	return t, true
}
