package elicit

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/internal/groupcommit"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/models"
)

// maxGroup bounds the rows of one commit of rule answers, and so its statements'
// parameters.
const maxGroup = 128

// queuedRow is one rule answer's row on its way into a commit shared with the answers
// given meanwhile (see DecideByRule).
type queuedRow struct {
	row *models.Elicitation
	// sessions and events are the stream events announcing it, events[i] to sessions[i].
	sessions []string
	events   []stream.Event
	// stored and err are the commit's outcome: the row as stored, or why not.
	stored *models.Elicitation
	err    error
}

// newRuleGroup groups concurrent rule answers into shared commits: nobody waits for
// company — a lone answer commits at once — and under load each commit carries what
// queued behind the one before.
func (s *Service) newRuleGroup() *groupcommit.Group[*queuedRow] {
	return &groupcommit.Group[*queuedRow]{Max: maxGroup, Run: func(batch []*queuedRow) {
		// The commit is every queued request's, not the leader's alone: it does not end
		// with any one request's context.
		err := s.commitDecided(context.Background(), batch)
		for _, q := range batch {
			q.err = err
		}
	}}
}
