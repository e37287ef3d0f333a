package store

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/models"
)

// openedColumns are the columns InsertOpened writes, in the order of openedArgs; the
// others (the verdict's, consumed_at, chained) take their defaults, as for a prompt
// nobody has decided.
const openedColumns = `id, session_id, origin, params, status, created_at, expires_at, lease_until, logged, notified,
	call_key, rule_id, token_id`

// openedParams is how many openedColumns there are.
const openedParams = 13

// openedArgs are e's values for openedColumns.
func openedArgs(e *models.Elicitation) []any {
	return []any{e.ID, e.SessionID, e.Origin, []byte(e.Params), e.Status, e.CreatedAt, e.ExpiresAt, e.LeaseUntil, e.Logged,
		e.Notified, e.CallKey, e.RuleID, e.TokenID}
}

// InsertOpened stores the new pending prompt e and the stream events evs announcing
// it, in one transaction, and returns the events' rows aligned with evs (ErrConflict
// when e's id is taken: a retry re-attaching raced this one). e should already be
// marked logged as far as evs take it: no event here claims a stage. notify, when
// set (Postgres), names the NOTIFY the commit sends for the events' rows, as for
// AppendEvents.
//
// A prompt stored in a commit of its own and then announced in another took two
// commits — on SQLite every page each touched written twice, on Postgres two
// write-ahead-log flushes — before a person could see it. On Postgres, prompts opened
// at once also share the transaction (internal/groupcommit): one INSERT, one append,
// one NOTIFY and one flush for all of them, as a burst of parks otherwise went
// through one commit after another.
func (s *Store) InsertOpened(ctx context.Context, e *models.Elicitation, evs []models.LoggedEvent,
	notify func(rows []models.SessionEvent) (channel, payload string)) ([]models.SessionEvent, error) {
	o := &opening{ctx: ctx, row: e, evs: evs, notify: notify}
	if s.openings == nil {
		o.err = s.openTogether(ctx, []*opening{o})
	} else {
		s.openings.Do(o)
	}
	return o.logged, o.err
}

// opening is one InsertOpened waiting for its group (Postgres).
type opening struct {
	ctx    context.Context
	row    *models.Elicitation
	evs    []models.LoggedEvent
	notify func(rows []models.SessionEvent) (channel, payload string)
	logged []models.SessionEvent
	err    error
}

// maxGroupOpenings bounds the prompts one transaction opens (13 parameters each).
const maxGroupOpenings = 64

// openGroup opens a group of prompts in one transaction (Postgres). A group that
// fails — one of its ids taken (a retry re-attaching), a session deleted meanwhile —
// is opened prompt by prompt, so each gets its own outcome.
func (s *Store) openGroup(g []*opening) {
	if len(g) > 1 {
		// The group's transaction is everyone's: no one caller hanging up cancels it.
		if s.openTogether(context.WithoutCancel(g[0].ctx), g) == nil {
			return
		}
	}
	for _, o := range g {
		o.err = s.openTogether(o.ctx, []*opening{o})
	}
}

// openTogether stores g's prompts and appends their events in one transaction, then
// hands each opening its events' rows. The NOTIFY is the first opening's: every
// opening of a store comes from its one bus, whose notify only names the rows.
func (s *Store) openTogether(ctx context.Context, g []*opening) error {
	args := make([]any, 0, len(g)*openedParams)
	var evs []models.LoggedEvent
	for _, o := range g {
		args = append(args, openedArgs(o.row)...)
		evs = append(evs, o.evs...)
	}
	var logged []models.SessionEvent
	err := s.writeSQL(ctx, func(tx sqlTx) error {
		if _, err := tx.exec(`INSERT INTO elicitations (`+openedColumns+`) VALUES `+placeholders(len(g), openedParams), args...); err != nil {
			return err
		}
		var err error
		if logged, err = appendEventsBatch(tx, evs); err != nil || g[0].notify == nil {
			return err
		}
		return notifyRows(tx, logged, g[0].notify)
	})
	if isUniqueViolation(err) {
		err = ErrConflict
	}
	if err != nil {
		return err
	}
	for _, o := range g {
		o.logged, logged = logged[:len(o.evs):len(o.evs)], logged[len(o.evs):]
	}
	return nil
}
