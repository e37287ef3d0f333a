package elicit

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/internal/groupcommit"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/models"
)

// maxGroup bounds the rows of one journal write of rule answers, and so its
// statement's parameters.
const maxGroup = 128

// queuedRow is one rule answer's row on its way into a commit shared with the answers
// given meanwhile (see DecideByRule).
type queuedRow struct {
	row *models.Elicitation
	// sess is the row's session and params its params, from which its events are
	// made (announce).
	sess   *models.Session
	params map[string]any
	// sessions and events are the stream events announcing it, events[i] to sessions[i].
	sessions []string
	events   []stream.Event
	// stored is the row as stored, once it is; err is why the journal write failed.
	stored *models.Elicitation
	err    error
	// journaledAt is where the row is in the decision journal, when the journal
	// needs it to forget the row (store.ForgetJournaledAt); zero otherwise.
	journaledAt int64
	// storedCh, when set, is closed once the row is stored (or given up on: stored
	// stays nil), for an answer that may not leave before.
	storedCh chan struct{}
}

// newJournalGroup groups concurrent rule answers into shared journal writes: nobody
// waits for company — a lone answer is written at once — and under load each write
// carries what queued behind the one before.
func (s *Service) newJournalGroup() *groupcommit.Group[*queuedRow] {
	return &groupcommit.Group[*queuedRow]{Max: maxGroup, Run: func(batch []*queuedRow) {
		rows := make([]*models.Elicitation, len(batch))
		for i, q := range batch {
			rows[i] = q.row
		}
		// The write is every queued request's, not the leader's alone: it does not end
		// with any one request's context.
		at, err := s.store.JournalDecided(context.Background(), rows)
		for i, q := range batch {
			q.err = err
			if err == nil && at != nil {
				q.journaledAt = at[i]
			}
		}
	}}
}
