package elicit

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/models"
)

// A rule's answer waits for one small write — its row in the decision journal — and
// nothing else: the prompt row, its audit chain link, the rule's fire count and the
// stream events announcing it are stored behind the answer, in batches, by one
// goroutine at a time (storeBehind). Journal rows left by a crash are stored by the
// next process's Replay. Everything read through the API or pages first waits for the
// answers given before it to be stored (Settle), so nobody here sees an answer whose
// record is not yet in the audit trail.

// maxBehind bounds how many journaled answers one commit stores.
const maxBehind = 512

// gatherFor is how long the storing goroutine lets answers gather before a commit,
// unless someone waits for it (Settle, an MCP approval): a commit's cost is mostly
// per statement and per page written, not per row, so one commit for a fifth of a
// second of answers costs far less than many small ones — and its burst of work
// competes less often with the answers themselves (measured: at one connection, p99
// 2.4 ms with 5 ms of gathering against 1.1 ms with 200 ms). Nobody reading waits for
// it (Settle cuts it short); another replica's streams show the answers up to this
// much later.
const gatherFor = 200 * time.Millisecond

// DefaultMaxBacklog bounds the answers journaled here and not yet stored (see
// Options.MaxBacklog). Past it, a rule's answer waits for the storing goroutine to
// catch up, so the backlog — what it holds in memory, what a read's Settle waits for —
// stays bounded when answers come faster than they can be stored, and the answers'
// rate is the rate at which they are stored.
const DefaultMaxBacklog = 2 * maxBehind

// backlog is the answers journaled here whose prompts are not yet stored: those
// queued, and the batch being stored.
type backlog struct {
	mu      sync.Mutex
	queue   []*queuedRow
	storing int // the answers in the batch being stored
	running bool
	// queued counts the answers ever queued, done those stored (or given up on: still
	// journaled, for Replay). changed is closed, and replaced, whenever done moves.
	queued, done uint64
	changed      chan struct{}
	// hurry cuts the gathering short: someone waits for what is queued.
	hurry chan struct{}
	// max bounds the backlog (Options.MaxBacklog), the batch being stored included: a
	// batch stalled in its commit is still held in memory; held counts the answers
	// waiting for room in it.
	max, held int
}

// size is how many answers the backlog holds. b.mu is held.
func (b *backlog) size() int { return len(b.queue) + b.storing }

// rush tells the storing goroutine not to wait for more answers to gather.
func (b *backlog) rush() {
	select {
	case b.hurry <- struct{}{}:
	default:
	}
}

// storeBehind queues q — journaled and about to be answered — to be stored, starting
// the goroutine that stores the queue unless one is running. When the backlog is full
// (Options.MaxBacklog) it waits for it to shrink, or for ctx to end or the server to stop: the
// answer is journaled either way, and is stored in its turn.
func (s *Service) storeBehind(ctx context.Context, q *queuedRow) {
	b := &s.behind
	b.mu.Lock()
	b.queue = append(b.queue, q)
	b.queued++
	start := !b.running
	b.running = true
	over, full := b.size() > b.max, len(b.queue) >= maxBehind
	b.mu.Unlock()
	if q.storedCh != nil || over || full {
		b.rush() // someone waits, or a whole batch does: no reason to gather more
	}
	if start {
		go s.storeQueue()
	}
	if over {
		s.waitForRoom(ctx)
	}
}

// waitForRoom waits until the backlog is within its bound again, ctx ends or the
// server stops.
func (s *Service) waitForRoom(ctx context.Context) {
	b := &s.behind
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held++
	defer func() { b.held-- }()
	for b.size() > b.max {
		ch := b.changedCh()
		b.mu.Unlock()
		select {
		case <-ch:
			b.mu.Lock()
		case <-ctx.Done():
			b.mu.Lock()
			return
		case <-s.shutdown:
			b.mu.Lock()
			return
		}
	}
}

// changedCh is the channel closed when done next moves. b.mu is held.
func (b *backlog) changedCh() chan struct{} {
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.changed
}

// storeQueue stores the queue, a batch per commit, until it is empty. Answers given
// while one commit runs make up the next.
func (s *Service) storeQueue() {
	b := &s.behind
	for {
		b.mu.Lock()
		full := len(b.queue) >= maxBehind
		b.mu.Unlock()
		if !full {
			gather := time.NewTimer(gatherFor)
			select {
			case <-gather.C:
			case <-b.hurry:
				gather.Stop()
			case <-s.shutdown:
				gather.Stop()
			}
		}
		b.mu.Lock()
		n := min(len(b.queue), maxBehind)
		if n == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		batch := b.queue[:n:n]
		if b.queue = b.queue[n:]; len(b.queue) == 0 {
			b.queue = nil
		}
		b.storing = n
		b.mu.Unlock()
		s.storeJournaled(batch)
		for _, q := range batch {
			if q.storedCh != nil {
				close(q.storedCh)
			}
		}
		b.mu.Lock()
		b.storing = 0
		b.done += uint64(n)
		if b.changed != nil {
			close(b.changed)
			b.changed = nil
		}
		b.mu.Unlock()
	}
}

// storeJournaled stores batch, retrying while the database is unavailable. It gives up
// only when the server is shutting down: the rows stay journaled for Replay.
func (s *Service) storeJournaled(batch []*queuedRow) {
	wait := 50 * time.Millisecond
	for len(batch) > 0 {
		err := s.commitDecided(context.Background(), batch)
		if err == nil {
			s.forgetJournaled(batch)
			return
		}
		if errors.Is(err, errs.ErrJournalClaimed) || errors.Is(err, errs.ErrConflict) {
			// Stored already, some of them (by another replica, or a replay): keep
			// the rest.
			if batch, err = s.unstored(batch); err == nil {
				continue
			}
		}
		s.log.Error("store rule answers from the decision journal", "answers", len(batch), "err", err)
		select {
		case <-s.shutdown:
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// unstored is the part of batch still in the decision journal and not stored.
func (s *Service) unstored(batch []*queuedRow) ([]*queuedRow, error) {
	ctx := context.Background()
	left, err := s.store.StillJournaled(ctx, rowIDs(batch))
	if err != nil {
		return batch, err
	}
	stored, err := s.store.ExistingElicitations(ctx, rowIDs(batch))
	if err != nil {
		return batch, err
	}
	keep := batch[:0:0]
	for _, q := range batch {
		if left[q.row.ID] && !stored[q.row.ID] {
			keep = append(keep, q)
		}
	}
	return keep, nil
}

// forgetJournaled drops batch's rows from the journal once their prompts are stored
// (nothing to do where that commit did it). A failure only leaves rows Replay will
// skip.
func (s *Service) forgetJournaled(batch []*queuedRow) {
	var at []int64
	for _, q := range batch {
		if q.journaledAt != 0 {
			at = append(at, q.journaledAt)
		}
	}
	if err := s.store.ForgetJournaledAt(context.Background(), at); err != nil {
		s.log.Warn("forget stored rule answers in the decision journal", "answers", len(batch), "err", err)
	}
}

func rowIDs(batch []*queuedRow) []string {
	ids := make([]string, len(batch))
	for i, q := range batch {
		ids[i] = q.row.ID
	}
	return ids
}

// Behind reports whether some rule answer given here is not stored yet.
func (s *Service) Behind() bool {
	b := &s.behind
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done < b.queued
}

// Settle returns once every rule answer given here before it was called is stored —
// prompt, audit link, fire count, events — or when ctx ends. Reads call it first
// (handlers), so what a person or program reads includes every answer given before.
func (s *Service) Settle(ctx context.Context) {
	b := &s.behind
	b.mu.Lock()
	target := b.queued
	for b.done < target {
		b.rush()
		ch := b.changedCh()
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
		b.mu.Lock()
	}
	b.mu.Unlock()
}

// Replay stores the prompts of the rule answers journaled before now-age and not
// stored yet: left by a crash of this process or of another replica (on Postgres,
// where a stalled replica that still holds some of them finds them claimed). Run at
// start, before serving, with age zero; and now and then with an age no live replica
// lags behind by.
func (s *Service) Replay(ctx context.Context, age time.Duration) (int, error) {
	total := 0
	for {
		rows, err := s.store.JournaledDecisions(ctx, time.Now().Add(-age), maxBehind)
		if err != nil || len(rows) == 0 {
			return total, err
		}
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		stored, err := s.store.ExistingElicitations(ctx, ids)
		if err != nil {
			return total, err
		}
		var batch []*queuedRow
		var done []string
		for _, r := range rows {
			if stored[r.ID] {
				done = append(done, r.ID)
				continue
			}
			q, err := s.journaledRow(ctx, r)
			if err != nil {
				return total, err
			}
			batch = append(batch, q)
		}
		if err := s.store.ForgetJournaled(ctx, done); err != nil {
			return total, err
		}
		if len(batch) > 0 {
			err := s.commitDecided(ctx, batch)
			if errors.Is(err, errs.ErrJournalClaimed) {
				continue // another replica stored some: read what is left
			}
			if err != nil {
				return total, err
			}
			// By id: rows read back from the journal carry no position.
			if err := s.store.ForgetJournaled(ctx, rowIDs(batch)); err != nil {
				return total, err
			}
			total += len(batch)
		}
		if len(rows) < maxBehind {
			return total, nil
		}
	}
}

// journaledRow is a journaled prompt row as DecideByRule queued it.
func (s *Service) journaledRow(ctx context.Context, row *models.Elicitation) (*queuedRow, error) {
	sess, err := s.store.GetSession(ctx, row.SessionID)
	if err != nil {
		return nil, err
	}
	var params map[string]any
	if err := json.Unmarshal(row.Params, &params); err != nil {
		return nil, err
	}
	return &queuedRow{row: row, sess: sess, params: params}, nil
}
