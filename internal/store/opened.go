package store

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/models"
)

// OpensInOneCommit reports whether InsertOpened is how a new prompt should be stored:
// on SQLite. There a commit writes every page it touched, two system calls a page, and
// a prompt stored and then announced in a commit of its own took two commits (and a
// third statement to mark it logged) before a person could see it. On Postgres,
// prompts parked at once share one INSERT and their announcements one append
// (internal/groupcommit): a transaction for each prompt would undo that.
func (s *Store) OpensInOneCommit() bool { return s.dialect == SQLite }

// openedColumns are the columns InsertOpened writes, in the order of its arguments; the
// others (the verdict's, consumed_at, chained) take their defaults, as for a prompt
// nobody has decided.
const openedColumns = `id, session_id, origin, params, status, created_at, expires_at, lease_until, logged, notified,
	call_key, rule_id, token_id`

// openedParams is how many openedColumns there are.
const openedParams = 13

// InsertOpened stores the new pending prompt e and the stream events evs announcing
// it, in one transaction, and returns the events' rows aligned with evs (ErrConflict
// when e's id is taken: a retry re-attaching raced this one). e should already be
// marked logged as far as evs take it: no event here claims a stage.
func (s *Store) InsertOpened(ctx context.Context, e *models.Elicitation, evs []models.LoggedEvent) ([]models.SessionEvent, error) {
	var logged []models.SessionEvent
	err := s.writeSQL(ctx, func(tx sqlTx) error {
		if _, err := tx.exec(`INSERT INTO elicitations (`+openedColumns+`) VALUES `+placeholders(1, openedParams),
			e.ID, e.SessionID, e.Origin, []byte(e.Params), e.Status, e.CreatedAt, e.ExpiresAt, e.LeaseUntil, e.Logged,
			e.Notified, e.CallKey, e.RuleID, e.TokenID); err != nil {
			return err
		}
		var err error
		logged, err = appendEventsBatch(tx, evs)
		return err
	})
	if isUniqueViolation(err) {
		return nil, ErrConflict
	}
	return logged, err
}
