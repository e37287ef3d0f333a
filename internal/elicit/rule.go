package elicit

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/models"
)

// DecideByRule records a verdict a Gatehouse rule gives without asking anyone: the
// prompt is stored already decided, with resolved_via "rule", the rule's id and by (the
// person who made the rule), so the audit trail and every page show the automatic
// decision like any other. It returns once the decision is committed to the decision
// journal (store.JournalDecided): the answer it gives never runs ahead of its record.
// The prompt row, its audit chain link, the rule's fire count and its events are
// stored right behind it (journal.go); reads wait for them (Settle).
//
// A prompt with an id of its own (a retry that may re-attach: Claude's
// _gatehouse_elicitation_id, a Codex app-server's request id) is opened first; when it
// was already decided, that verdict stands and is returned instead.
func (s *Service) DecideByRule(ctx context.Context, p Prompt, r models.Verdict, by, ruleID string) (Ended, error) {
	if p.ID != "" {
		return s.decideOpenedByRule(ctx, p, r, by, ruleID)
	}
	p.ID = ids.NewOrdered(ids.ElicitationPrefix)
	row, params, err := s.newRow(p, false)
	if err != nil {
		return Ended{}, err
	}
	// Both databases keep microseconds; the chain hashes the row as stored.
	now := row.CreatedAt.UTC().Truncate(time.Microsecond)
	action, via := r.Action, models.ViaRule
	row.CreatedAt, row.ExpiresAt = now, row.ExpiresAt.UTC().Truncate(time.Microsecond)
	row.Status, row.Action, row.ResolvedBy, row.ResolvedVia, row.ResolvedAt, row.RuleID =
		models.StatusResolved, &action, &by, &via, &now, &ruleID
	if r.Content != nil {
		if row.Content, err = json.Marshal(r.Content); err != nil {
			return Ended{}, err
		}
	}
	// Its events are logged in the commit that stores it, so the row starts out logged
	// (and, as a prompt answered before anyone was told, needing no notification).
	row.Logged, row.Notified = models.LoggedResolved, models.NotifiedAll
	// Its events are made where it is stored, off the answer's path.
	q := &queuedRow{row: row, sess: p.Session, params: params}
	start := time.Now()
	s.journal.Do(q)
	if q.err != nil {
		return Ended{}, q.err
	}
	s.committed(time.Since(start))
	if p.CallKey != "" {
		// An MCP tool call's approval is spent on the call (Consume) as soon as it is
		// answered: its row must be stored first.
		q.storedCh = make(chan struct{})
	}
	s.storeBehind(ctx, q)
	if q.storedCh != nil {
		<-q.storedCh
		if q.stored == nil {
			return Ended{}, errors.New("the rule's answer is journaled but its prompt could not be stored")
		}
	}
	s.logRuleDecision(ctx, row, r.Action, ruleID)
	return endedOf(row), nil
}

// logRuleDecision logs a rule's decision at debug, not info: the request that asked was
// logged already and the decision is in the audit trail and on every page, while a line
// of its own for each tool call a rule answers doubled what a busy server logs (a
// twentieth of an answer's CPU went to it).
func (s *Service) logRuleDecision(ctx context.Context, row *models.Elicitation, action, ruleID string) {
	if s.log.Enabled(ctx, slog.LevelDebug) {
		s.log.Debug("elicitation decided by rule", "session_id", row.SessionID, "elicitation_id", row.ID,
			"origin", row.Origin, "action", action, "rule_id", ruleID)
	}
}

// announce fills in q's events: its request and its end, on its session and each of
// the session's ancestors.
func (s *Service) announce(q *queuedRow) {
	reqs, chain := s.requestEvents(q.sess, q.row.ID, q.params, q.row.Params)
	ends, _ := resolvedEvents(q.sess, q.row.ID)
	if reqs != nil {
		q.sessions, q.events = append(chain, chain...), append(reqs, ends...)
		for i := range q.events {
			q.events[i].Stage = 0 // no stage to claim: the row is inserted logged
		}
	}
}

// commitDecided stores journaled rule-decided rows: one transaction stores them all
// with the events announcing their requests and their ends (and, on Postgres, deletes
// their journal rows); then the callbacks see them and the events are delivered.
func (s *Service) commitDecided(ctx context.Context, batch []*queuedRow) error {
	rows := make([]*models.Elicitation, len(batch))
	var sessions []string
	var events []stream.Event
	for i, q := range batch {
		if q.events == nil {
			s.announce(q)
		}
		rows[i] = q.row
		sessions, events = append(sessions, q.sessions...), append(events, q.events...)
	}
	err := s.bus.PublishIn(sessions, events, func(evs []models.LoggedEvent, notify *models.Notice) ([]models.SessionEvent, error) {
		stored, logged, err := s.store.InsertDecided(ctx, rows, evs, notify)
		if err != nil {
			return nil, err
		}
		for i, q := range batch {
			q.stored = stored[i]
			s.run(&s.onOpened, q.stored)
			s.run(&s.onResolved, q.stored)
		}
		return logged, nil
	})
	if err == nil {
		for _, q := range batch {
			s.run(&s.onAnnounced, q.stored)
		}
	}
	return err
}

// decideOpenedByRule is DecideByRule for a prompt that may exist already: open it (or
// re-attach), then decide it unless it was decided before.
func (s *Service) decideOpenedByRule(ctx context.Context, p Prompt, r models.Verdict, by, ruleID string) (Ended, error) {
	row, err := s.Open(ctx, p)
	if err != nil {
		return Ended{}, err
	}
	if row.IsPending() {
		d := models.Decision{Status: models.StatusResolved, Action: r.Action, By: by, Via: models.ViaRule,
			At: s.clock.Now(), RuleID: ruleID}
		if r.Content != nil {
			if d.Content, err = json.Marshal(r.Content); err != nil {
				return Ended{}, err
			}
		}
		done, err := s.decide(ctx, row.ID, row.SessionID, d)
		if err != nil {
			return Ended{}, err
		}
		if done != nil {
			s.logRuleDecision(ctx, row, r.Action, ruleID)
			return endedOf(done), nil
		}
	}
	cur, err := s.store.GetElicitation(ctx, row.ID)
	if err != nil {
		return Ended{}, err
	}
	return endedOf(cur), nil
}
