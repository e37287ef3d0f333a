package park

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
	"github.com/gatehouse-dev/gatehouse/internal/rules"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Call is a tool call a policy asks a person about on behalf of a client that does not
// block on the verdict but comes back for it (the MCP proxy: a multi round-trip
// input_required result, a -32042 error), or — Hold — that waits on the call itself.
// Its prompt is found again by its call key (Prompt.CallKey), so a retried call never
// opens a second prompt.
type Call struct {
	// Prompt is the prompt to open when the call has none yet: session, origin, call
	// key, person, params, and the wait (Timeout) of a prompt the client comes back for.
	Prompt elicit.Prompt
	// Tool and Args are the call as Gatehouse rules see it (no working directory: a
	// cwd-scoped rule never answers it). Only allow and deny rules answer a call; an ask
	// rule's wait does not apply to a client that comes back on its own schedule.
	Tool string
	Args map[string]any
	// Hints are the tool's annotations from its server, for rating the call (risk).
	Hints *risk.Hints
	// DeclinedSince: an earlier prompt of the call declined at or after this time is
	// its answer still; one declined before it is asked again (store.LatestMCPApproval).
	DeclinedSince time.Time
	// RetryWait bounds how long a retry whose prompt is still pending waits for a
	// verdict before it is answered as before (--mcp-retry-wait).
	RetryWait time.Duration
	// Hold: the caller waits on the prompt (Asked.Waiter), re-attaching to a pending
	// prompt of the call.
	Hold bool
	// RulesOnly: the client cannot be asked (it declared no input kind Gatehouse can
	// use): only a rule answers, and nothing is opened.
	RulesOnly bool
}

// Asked is where a Call stands.
type Asked struct {
	// Row is the call's prompt as it stands: decided (by a rule, or earlier by a
	// person), or pending (just opened, or still pending after the retry's wait). Nil
	// with a Waiter, and for RulesOnly when no rule answered.
	Row *models.Elicitation
	// Waiter is, for Hold, the wait on the call's pending prompt; the caller must Wait
	// or Close it.
	Waiter *elicit.Waiter
}

// Ask asks a person about c, or finds the answer c already has. The work that touches
// the database — the rules, finding the call's prompt, opening or attaching to it —
// runs in a slot like every park's; the retry's wait for a verdict does not. It
// returns elicit.ErrClientGone when ctx ended while waiting for a slot.
func (s *Service) Ask(ctx context.Context, c Call) (Asked, error) {
	if err := s.take(ctx); err != nil {
		return Asked{}, err
	}
	var a Asked
	var retry *models.Elicitation // a pending prompt the retry waits on
	err := s.inSlot(func() (err error) {
		a, retry, err = s.askInSlot(ctx, c)
		return err
	})
	if err != nil || retry == nil {
		return a, err
	}
	row, err := s.AwaitRetry(ctx, c.Prompt.Person, retry.ID, c.RetryWait)
	return Asked{Row: row}, err
}

// AwaitRetry is the wait of a client that came back for a prompt still pending (by
// call key, or by the prompt a signed requestState names): it gives the person up to
// wait more, as one of person's parked requests, and returns the row as it then
// stands. Running out of time, or the client leaving, leaves the prompt pending for
// the next retry (elicit.Service.WaitAtMost).
func (s *Service) AwaitRetry(ctx context.Context, person, id string, wait time.Duration) (*models.Elicitation, error) {
	return s.elicit.WaitAtMost(ctx, person, id, wait)
}

// askInSlot is Ask's work in its slot; retry is the call's pending prompt the retry is
// to wait on.
func (s *Service) askInSlot(ctx context.Context, c Call) (a Asked, retry *models.Elicitation, err error) {
	critical := s.rateCall(&c)
	if s.rules != nil {
		// A Gatehouse rule answers without asking anyone; the prompt is recorded as
		// decided by it.
		row, err := s.rules.AnswerNow(ctx, c.Prompt, rules.Subject{Session: c.Prompt.Session, Tool: c.Tool, Input: c.Args, Critical: critical})
		if err != nil || row != nil {
			return Asked{Row: row}, nil, err
		}
	}
	if c.RulesOnly {
		return Asked{}, nil, nil
	}
	prev, err := s.elicit.LatestMCPApproval(ctx, c.Prompt.Session.ID, c.Prompt.CallKey, c.DeclinedSince)
	if err != nil {
		return Asked{}, nil, err
	}
	switch {
	case prev != nil && !prev.IsPending():
		return Asked{Row: prev}, nil, nil
	case c.Hold:
		p := c.Prompt
		if prev != nil {
			p.ID = prev.ID
		}
		w, err := s.elicit.Attach(ctx, p)
		return Asked{Waiter: w}, nil, err
	case prev != nil:
		return Asked{}, prev, nil
	}
	row, err := s.elicit.Open(ctx, c.Prompt)
	return Asked{Row: row}, nil, err
}
