package elicit

import (
	"context"
	"encoding/json"

	"github.com/gatehouse-dev/gatehouse/models"
)

// DecideByRule records a verdict a Gatehouse rule gives without asking anyone: the
// prompt is opened (or re-attached, for a retry with the same id) and decided at once
// with resolved_via "rule", the rule's id and by (the person who made the rule), so
// the audit trail and every page show the automatic decision like any other. When the
// prompt was already decided — a retry of a request decided earlier — that verdict
// stands and is returned instead.
func (s *Service) DecideByRule(ctx context.Context, p Prompt, r models.Verdict, by, ruleID string) (Ended, error) {
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
			s.log.Info("elicitation decided by rule", "session_id", row.SessionID, "elicitation_id", row.ID,
				"origin", row.Origin, "action", r.Action, "rule_id", ruleID)
			return endedOf(done), nil
		}
	}
	cur, err := s.store.GetElicitation(ctx, row.ID)
	if err != nil {
		return Ended{}, err
	}
	return endedOf(cur), nil
}
