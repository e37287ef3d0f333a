package elicit

import (
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
)

// DefaultMaxParkedPerPerson is the cap on one person's parked requests when none is
// configured (--max-parked-per-person).
const DefaultMaxParkedPerPerson = 1000

// parkCounts caps the requests one person keeps parked — waiting for a person's verdict
// — in this process. Every parked request holds a connection (a file descriptor), a
// goroutine and its waiter; without a cap one person's agents can park until the
// process runs out of descriptors, and then nobody else's request is even accepted.
//
// The count is per process, not across replicas: counting across replicas would cost a
// database query (or a shared counter) on every park, the hot path, and what the cap
// protects — descriptors, goroutines, memory — is each process's own. With several
// replicas behind a balancer a person may park up to the cap on each.
//
// Requests answered at once (a rule, a policy ALLOW, a retry of a decided prompt) never
// take a slot; a slot is given back when the wait ends, however it ends.
type parkCounts struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

func newParkCounts(max int) *parkCounts {
	if max <= 0 {
		max = DefaultMaxParkedPerPerson
	}
	return &parkCounts{max: max, n: map[string]int{}}
}

// take counts one more parked request of person, or refuses it (errs.TooManyRequests,
// saying what the limit is and how many are parked) when person is at the cap. give
// gives the slot back, once per take.
func (c *parkCounts) take(person string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.n[person]; n >= c.max {
		return errs.TooManyRequests("too many parked requests: %d of yours are waiting for a person here (at most %d per person); answer or cancel some first", n, c.max)
	}
	c.n[person]++
	return nil
}

func (c *parkCounts) give(person string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[person]--; c.n[person] <= 0 {
		delete(c.n, person)
	}
}
