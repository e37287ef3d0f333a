package inbox

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Resolver is the one resolver every verdict goes through (elicit.Service.Resolve).
type Resolver interface {
	Resolve(ctx context.Context, sid, eid string, r models.Verdict, by, via string) (elicit.Outcome, error)
}

// BulkAnswer is one answer given to several prompts at once from the inbox: approve
// them all, or reject them all with one reason.
type BulkAnswer struct {
	// IDs are the selected prompts' ids.
	IDs []string
	// Action is models.ActionAccept or models.ActionDecline; nothing else (in
	// particular never "approve and remember": a bulk answer creates no rule).
	Action string
	// Reason goes back to the agent with each rejection that can carry one; an
	// approval sends none.
	Reason string
}

// BulkReport says what a bulk answer did, prompt by prompt (ids in each list).
type BulkReport struct {
	Action string
	// Decided were answered by this request.
	Decided []string
	// AlreadyDecided were decided before this request reached them (someone else, a
	// timeout, the agent going away): the selection was stale; they were left alone.
	AlreadyDecided []string
	// NeedsReview are prompts the card shows only part of: they are never approved
	// from a list, so an approve skipped them (rejecting them is fine).
	NeedsReview []string
	// Risky are prompts of high or critical risk: never approved in bulk, only on
	// their own page.
	Risky []string
	// NeedsAnswers are prompts with a form or questions to fill in: an approve
	// skipped them.
	NeedsAnswers []string
	// NotFound are ids that name no prompt this person may decide.
	NotFound []string
}

// MaxBulk is the most prompts one bulk answer may name: one inbox page's worth.
const MaxBulk = MaxPending

// Answer gives one bulk answer, deciding each selected prompt on its own through the
// resolver — each gets its own verdict row, and the first verdict on a prompt wins, so
// one already decided elsewhere is reported, never decided again. Access is the
// inbox's: edit access on the prompt's tree. An approve skips what could not be
// approved from its card (needs review, needs answers) and says so; a reject reaches
// every selected prompt, with the reason where the prompt can carry one.
func (s *Service) Answer(ctx context.Context, r Resolver, user string, a BulkAnswer) (*BulkReport, error) {
	switch a.Action {
	case models.ActionAccept, models.ActionDecline:
	default:
		return nil, errs.Invalid(prompt.FieldAction, "choose approve or reject")
	}
	a.Reason = strings.TrimSpace(a.Reason)
	if len(a.Reason) > prompt.MaxFeedback {
		return nil, errs.Invalid(prompt.FieldFeedback, "keep the reason under 4,000 characters")
	}
	ids := dedupe(a.IDs)
	if len(ids) == 0 {
		return nil, errs.Invalid(FieldSelect, "select at least one request")
	}
	if len(ids) > MaxBulk {
		return nil, errs.Invalid(FieldSelect, "select at most %d requests at once", MaxBulk)
	}
	roots, err := s.Roots(ctx, user)
	if err != nil {
		return nil, err
	}
	mine := make(map[string]bool, len(roots))
	for _, id := range roots {
		mine[id] = true
	}
	form := url.Values{prompt.FieldAction: {a.Action}, prompt.FieldFeedback: {a.Reason}}
	rep := &BulkReport{Action: a.Action}
	for _, id := range ids {
		row, err := s.store.GetElicitation(ctx, id)
		if errors.Is(err, errs.ErrNotFound) {
			rep.NotFound = append(rep.NotFound, id)
			continue
		}
		if err != nil {
			return rep, err
		}
		sess, err := s.store.GetSession(ctx, row.SessionID)
		if errors.Is(err, errs.ErrNotFound) {
			rep.NotFound = append(rep.NotFound, id)
			continue
		}
		if err != nil {
			return rep, err
		}
		if !mine[sess.RootID] {
			rep.NotFound = append(rep.NotFound, id) // existence does not leak
			continue
		}
		if !row.IsPending() {
			rep.AlreadyDecided = append(rep.AlreadyDecided, id)
			continue
		}
		p := prompt.Describe(row.Origin, row.DecodeParams().All, s.md)
		if a.Action == models.ActionAccept {
			if p.NeedsReview() {
				rep.NeedsReview = append(rep.NeedsReview, id)
				continue
			}
			if p.Risky() {
				rep.Risky = append(rep.Risky, id)
				continue
			}
			if !p.QuickApprove() {
				rep.NeedsAnswers = append(rep.NeedsAnswers, id)
				continue
			}
		}
		// The verdict is the one the prompt's own page would build from this answer
		// (an approval flag where its schema has one; the reason only where it fits).
		d, ok := p.Submit(form)
		if !ok {
			rep.NeedsAnswers = append(rep.NeedsAnswers, id)
			continue
		}
		out, err := r.Resolve(ctx, row.SessionID, id, d, user, models.ViaInbox)
		if err != nil {
			return rep, err
		}
		switch out.Outcome {
		case elicit.OutcomeResolved:
			rep.Decided = append(rep.Decided, id)
		case elicit.OutcomeAlreadyResolved:
			rep.AlreadyDecided = append(rep.AlreadyDecided, id)
		default:
			rep.NotFound = append(rep.NotFound, id)
		}
	}
	return rep, nil
}

// FieldSelect is the form field (one per selected card) naming a prompt to answer.
const FieldSelect = "select"

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}
