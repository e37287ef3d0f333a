package stream

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// EventLog is the durable log of session events both buses append to and replay
// from (internal/store implements it).
type EventLog interface {
	// AppendEvents writes evs in one transaction and returns their rows, aligned with
	// evs (a zero row: a lifecycle step logged before). notify, when set, is the
	// NOTIFY naming the rows written, sent inside that transaction (Postgres only).
	AppendEvents(ctx context.Context, evs []models.LoggedEvent, notify *models.Notice) ([]models.SessionEvent, error)
	EventsByID(ctx context.Context, ids []int64) ([]models.SessionEvent, error)
	EventsSince(ctx context.Context, sessionID string, after int64, limit int) ([]models.SessionEvent, error)
	OldestRetainedSeq(ctx context.Context, sessionID string) (int64, error)
	CurrentSeq(ctx context.Context, sessionID string) (int64, error)
}

// resumeLimit caps how many logged events one resume replays; a client further behind
// resynchronises from the session snapshot instead.
const resumeLimit = 1000

// Durable is the single-node bus: each event is appended to the database's event log
// (getting its per-session sequence number) and then fanned out in process.
type Durable struct {
	*Local
	st  EventLog
	log *slog.Logger
	// mu keeps append order and fan-out order the same, so a subscriber never sees
	// seq 6 before seq 5.
	mu sync.Mutex
}

// NewDurable returns a logged, in-process bus over st.
func NewDurable(st EventLog, log *slog.Logger) *Durable {
	return &Durable{Local: NewLocal(), st: st, log: log}
}

// Publish implements Bus.
func (d *Durable) Publish(sessions []string, events []Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := d.st.AppendEvents(ctx, toLogged(sessions, events), nil)
	if err != nil {
		// The row in elicitations is still the truth. A prompt's lifecycle event is
		// logged (and then delivered) by the repair sweep once the log takes writes
		// again; any other event goes to live subscribers without a sequence number
		// rather than not at all.
		d.log.Error("append stream events", "err", err)
		sessions, events = unstaged(sessions, events)
	} else {
		sessions, events = logged(sessions, events, rows)
	}
	d.Local.Publish(sessions, events)
}

// PublishIn implements Bus: the append and the fan-out happen under the lock Publish
// takes, so the caller's events keep their place in the log's order.
func (d *Durable) PublishIn(sessions []string, events []Event, write AppendFunc) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	rows, err := write(toLogged(sessions, events), nil)
	if err != nil {
		return err
	}
	d.Local.Publish(logged(sessions, events, rows))
	return nil
}

// Resume implements Bus.
func (d *Durable) Resume(ctx context.Context, session string, after int64) ([]Event, bool, error) {
	return resume(ctx, d.st, session, after)
}

// Head implements Bus.
func (d *Durable) Head(ctx context.Context, session string) (int64, error) {
	return d.st.CurrentSeq(ctx, session)
}

func toLogged(sessions []string, events []Event) []models.LoggedEvent {
	out := make([]models.LoggedEvent, len(events))
	for i, ev := range events {
		out[i] = models.LoggedEvent{SessionID: sessions[i], Type: ev.Type, Data: ev.Data, ElicitationID: ev.ElicitationID, Stage: ev.Stage}
	}
	return out
}

// logged keeps the events the log took (a staged event logged before is dropped:
// whoever logged it delivered it), each with its sequence number.
func logged(sessions []string, events []Event, rows []models.SessionEvent) ([]string, []Event) {
	var outS []string
	var outE []Event
	for i, ev := range events {
		if rows[i].ID == 0 {
			continue
		}
		ev.Seq = rows[i].Seq
		outS, outE = append(outS, sessions[i]), append(outE, ev)
	}
	return outS, outE
}

// unstaged keeps the events that are not lifecycle steps of a prompt.
func unstaged(sessions []string, events []Event) ([]string, []Event) {
	var outS []string
	var outE []Event
	for i, ev := range events {
		if ev.Stage == 0 {
			outS, outE = append(outS, sessions[i]), append(outE, ev)
		}
	}
	return outS, outE
}

func fromRow(r models.SessionEvent) Event {
	ev := Event{Type: r.Type, Data: []byte(r.Data), Seq: r.Seq}
	if r.ElicitationID != nil {
		ev.ElicitationID = *r.ElicitationID
	}
	return ev
}

func resume(ctx context.Context, st EventLog, session string, after int64) ([]Event, bool, error) {
	// The head is read before the oldest retained event: an event appended in between
	// then shows up as retained (and is replayed below) instead of as "nothing
	// retained, yet something published" — which sent a client resuming a session's
	// first events to the pending-only fallback, with a gap in its sequence (TestChaos).
	cur, err := st.CurrentSeq(ctx, session)
	if err != nil || after > cur {
		// An id from the future (a restored database, a made-up value) cannot be
		// trusted as a resume point.
		return nil, false, err
	}
	oldest, err := st.OldestRetainedSeq(ctx, session)
	if err != nil {
		return nil, false, err
	}
	if oldest > after+1 {
		return nil, false, nil // a gap: events after `after` were pruned
	}
	if oldest == 0 {
		// Nothing retained: fine only if nothing was published after `after`.
		return nil, cur <= after, nil
	}
	rows, err := st.EventsSince(ctx, session, after, resumeLimit+1)
	if err != nil {
		return nil, false, err
	}
	if len(rows) > resumeLimit {
		return nil, false, nil
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = fromRow(r)
	}
	return out, true, nil
}
