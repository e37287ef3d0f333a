package elicit

import (
	"context"
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/models"
)

// groupCommit stores rule-decided rows, grouping the ones that arrive while a commit is
// under way into the next commit (one transaction, one sync for many answers). Nobody
// waits for company: a lone request commits at once, so grouping costs no latency, and
// under load each commit carries everything that queued behind the one before.
//
// There is no goroutine of its own: the first request to find no commit under way leads
// — commits the queue, its own row among it — and hands the lead to the oldest request
// queued meanwhile, so no request commits other requests' rows for ever.
type groupCommit struct {
	// commit stores a batch's rows (setting each one's stored row) and publishes them.
	commit func(ctx context.Context, batch []*queuedRow) error

	mu    sync.Mutex
	busy  bool
	queue []*queuedRow
}

// maxGroup bounds the rows of one commit, and so its statements' parameters.
const maxGroup = 128

// queuedRow is one request's row on its way into a commit.
type queuedRow struct {
	row *models.Elicitation
	// sessions and events are the stream events announcing it, events[i] to sessions[i].
	sessions []string
	events   []stream.Event
	stored   *models.Elicitation
	err      error
	// done is told true when this request is to lead the next commit, false when its
	// row was committed (stored and err are set).
	done chan bool
}

// store commits me's row, alone or with the rows queued beside it, and returns it as
// stored.
func (g *groupCommit) store(ctx context.Context, me *queuedRow) (*models.Elicitation, error) {
	me.done = make(chan bool, 1)
	g.mu.Lock()
	g.queue = append(g.queue, me)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if !lead && !<-me.done {
		return me.stored, me.err
	}
	// The leader is the oldest queued request, so its row is in the batch it commits.
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()

	// Rows of other requests are committed too: the commit must not end with this
	// request's context.
	err := g.commit(context.WithoutCancel(ctx), batch)

	g.mu.Lock()
	var next *queuedRow
	if len(g.queue) > 0 {
		next = g.queue[0]
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	for _, q := range batch {
		q.err = err
		if q != me {
			q.done <- false
		}
	}
	if next != nil {
		next.done <- true
	}
	return me.stored, me.err
}
