package park

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/grants"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Escalation is how an agent's own refusals reach a person (--escalate-denials): a
// refused call (Job.Refusal) parks a prompt that waits at most Wait; an approval
// records a one-shot grant (internal/grants) and answers "retry"; the retried call
// (Job.Retry) spends the grant and is answered "allow" at once.
type Escalation struct {
	// On escalates refusals; off, each is answered at once, letting it stand.
	On bool
	// Wait bounds an escalated refusal's wait: its hook must be answered within the
	// agent's hook timeout.
	Wait time.Duration
	// Grants records and spends the grants; nil: no grants, so nothing is escalated.
	Grants *grants.Service
	// Policies narrow which refusals escalate: a DENY on phase permission_denied lets a
	// refusal stand (nil: every refusal escalates).
	Policies *policy.Engine
	Log      *slog.Logger
}

// Escalate sets how refusals escalate.
func Escalate(e Escalation) Option {
	return func(s *Service) {
		if e.Log == nil {
			e.Log = slog.Default()
		}
		s.esc = e
	}
}

// refusalStands answers a refused call at once, letting the refusal stand, when
// escalation is off or a policy keeps it; it reports whether it did.
func (s *Service) refusalStands(ctx context.Context, j *Job) bool {
	stands := !s.esc.On || s.esc.Grants == nil || j.Subject == nil
	if !stands && s.esc.Policies != nil {
		sess := j.Prompt.Session
		ev := policy.NewEvent(policy.SessionInfo{ID: sess.ID, Depth: sess.Depth, RootID: sess.RootID}, j.Person,
			policy.PhasePermissionDenied, "", map[string]any{"name": j.Subject.Tool, "arguments": j.Subject.Input,
				"reason": j.Refusal.Reason}, nil)
		stands = s.esc.Policies.EvaluateContext(ctx, ev).Action == policy.Deny
	}
	if stands {
		j.Immediate = j.Answer(models.Verdict{Action: models.ActionDecline}, "")
		return true
	}
	if s.esc.Wait > 0 {
		j.Prompt.Timeout = s.esc.Wait
	}
	return false
}

// spendGrant answers a call that may be a retry (Job.Retry) "allow" at once when a live
// grant is there for it, spending the grant; it reports whether it did. A call with
// no grant is handled as if grants did not exist.
func (s *Service) spendGrant(ctx context.Context, j *Job) (bool, error) {
	if s.esc.Grants == nil || j.Subject == nil {
		return false, nil
	}
	g, err := s.esc.Grants.Consume(ctx, grants.Call{Session: j.Prompt.Session.ID, Tool: j.Subject.Tool, Input: j.Subject.Input})
	if err != nil || g == nil {
		return false, err
	}
	s.esc.Log.Info("retry grant spent", "session_id", g.SessionID, "elicitation_id", g.ElicitationID,
		"tool", g.ToolName, "granted_by", g.GrantedBy)
	j.Immediate = j.Answer(models.Verdict{Action: models.ActionAccept}, g.GrantedBy)
	return true, nil
}

// reply is the answer to verdict v given on row — for an escalated refusal, an accept
// is answered only once its grant is stored: with no grant, the retry it announces
// would only be refused again, so a grant that cannot be stored lets the refusal stand.
func (a *answering) reply(ctx context.Context, v models.Verdict, row *models.Elicitation) any {
	by := resolvedBy(row)
	if !a.refusal || !v.Accepted() {
		return a.answer(v, by)
	}
	if a.grant == nil || row == nil {
		return a.answer(models.Verdict{Action: models.ActionDecline}, by)
	}
	if err := a.s.esc.Grants.Grant(ctx, row.ID, by, *a.grant); err != nil {
		a.s.esc.Log.Error("storing a retry grant failed; the refusal stands", "session_id", row.SessionID,
			"elicitation_id", row.ID, "err", err)
		return a.answer(models.Verdict{Action: models.ActionDecline}, by)
	}
	return a.answer(v, by)
}

// grantFor is the call an escalated refusal's grant will be for, kept on the job once
// its prompt and subject are let go (prepareAndAttach).
func grantFor(j *Job) *grants.Call {
	if j.Refusal == nil || j.Subject == nil {
		return nil
	}
	return &grants.Call{Session: j.Prompt.Session.ID, Tool: j.Subject.Tool, Input: j.Subject.Input}
}
