package rules

import (
	"context"
	"fmt"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Subject is what a parking request asks to do, as rules see it.
type Subject struct {
	Session *models.Session
	// Tool is the tool's name as the agent gives it (Claude's tool_name; "shell" for
	// Codex command approvals; a policy evaluation's event.data.name).
	Tool string
	// Kind is what the tool does, as the agent that sent it says (models.HookTool);
	// "" (policy evaluations, MCP) leaves it to the tool's name (KindOf). A request
	// whose kind is not the one a rule's tool name has is never matched by the rule.
	Kind models.ToolKind
	// Input is the tool's input (its arguments); the pattern is compared with the
	// field the tool's kind names (see KindOf), never a field the agent picks.
	Input map[string]any
	// Cwd is the agent's working directory, when it says ("" never matches a cwd scope).
	Cwd string
	// Critical: the request was rated critical (internal/risk). No allow rule answers
	// it — a rule made for `curl … | sh` of one script must not run the next one
	// unseen — so a person decides; deny and ask rules still apply.
	Critical bool
}

// Applied is what a matching rule did to a request about to park.
type Applied struct {
	Rule *models.Rule
	// Ended is set when the rule answered (allow, deny): the prompt is already
	// recorded as decided by the rule; nothing parks.
	Ended *elicit.Ended
	// Prompt is, for an ask rule, the prompt to park instead: with the rule's wait and
	// its id.
	Prompt elicit.Prompt
	// OnTimeout is, for an ask rule that answers when its wait runs out, that answer
	// (its feedback names the timeout); nil: the usual "no verdict".
	OnTimeout *models.Verdict
}

// precedence orders effects when several rules match: a deny wins, then an ask.
func precedence(effect string) int {
	switch effect {
	case models.EffectDeny:
		return 3
	case models.EffectAsk:
		return 2
	}
	return 1
}

// Match returns the live rule that applies to subj (nil when none): the tool equals,
// the pattern matches the target, the scope covers the request, and the rule's creator
// still holds edit access on the request's session tree. A deny beats an ask beats an
// allow; among equals the oldest wins.
func (s *Service) Match(ctx context.Context, subj Subject) (*models.Rule, error) {
	if subj.Session == nil || subj.Tool == "" {
		return nil, nil
	}
	rows, err := s.store.LiveRulesForTool(ctx, subj.Tool, s.now())
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	var best *models.Rule
	for i := range rows {
		r := &rows[i]
		if best != nil && precedence(r.Effect) <= precedence(best.Effect) {
			continue
		}
		if subj.Critical && r.Effect == models.EffectAllow {
			continue
		}
		if !s.covers(r, subj) || !s.matcher(r).matches(subj, strictReading(r.Effect, r.OnTimeout)) {
			continue
		}
		lvl, err := s.access.LevelOn(ctx, subj.Session.RootID, r.CreatedBy)
		if err != nil {
			return nil, err
		}
		if lvl < auth.Edit {
			continue
		}
		best = r
	}
	return best, nil
}

// covers reports whether r's scope includes the request.
func (s *Service) covers(r *models.Rule, subj Subject) bool {
	switch r.ScopeKind {
	case ScopeSession:
		return subj.Session.RootID == r.ScopeValue
	case ScopeAgent:
		return subj.Session.AgentID == r.ScopeValue
	case ScopeCwd:
		return underDir(subj.Cwd, r.ScopeValue)
	case ScopeGlobal:
		return true
	}
	return false
}

// matcher returns r's compiled pattern (cached: a rule's tool and pattern never
// change). A stored pattern that does not compile matches nothing.
func (s *Service) matcher(r *models.Rule) *ruleMatcher {
	if m, ok := s.compiled.Load(r.ID); ok {
		return m.(*ruleMatcher)
	}
	m, err := compileRule(r.Tool, r.MatchKind, r.Pattern, r.MatchArgument)
	if err != nil {
		m = &ruleMatcher{kind: KindTool, text: func(string) bool { return false }}
	}
	s.compiled.Store(r.ID, m)
	return m
}

// Apply runs the rules on a request about to park as p. With no matching rule it
// returns nil. An allow or deny rule records the decision (resolved_via "rule", the
// rule's id, by its creator) and returns the verdict; an ask rule returns the prompt to
// park with the rule's wait. Either way the rule's fire count goes up: an allow or deny
// rule's in the commit of the decision it made (a retry of a request it answered
// already does not count again), an ask rule's here.
func (s *Service) Apply(ctx context.Context, p elicit.Prompt, subj Subject) (*Applied, error) {
	r, err := s.Match(ctx, subj)
	if err != nil || r == nil {
		return nil, err
	}
	out := &Applied{Rule: r}
	switch r.Effect {
	case models.EffectAllow, models.EffectDeny:
		res := models.Verdict{Action: models.ActionAccept}
		if r.Effect == models.EffectDeny {
			res = models.Verdict{Action: models.ActionDecline, Content: map[string]any{models.ContentAutomatic: true,
				"feedback": fmt.Sprintf("Denied by Gatehouse rule %s (made by %s).", r.ID, r.CreatedBy)}}
		}
		v, err := s.elicit.DecideByRule(ctx, p, res, r.CreatedBy, r.ID)
		if err != nil {
			return nil, err
		}
		out.Ended = &v
		return out, nil
	}
	if err := s.store.RuleFired(ctx, r.ID, s.now()); err != nil {
		return nil, err
	}
	p.RuleID = r.ID
	wait := s.elicit.Timeout()
	if r.TimeoutSeconds > 0 {
		wait = time.Duration(r.TimeoutSeconds) * time.Second
		p.Timeout = wait
	}
	params := make(map[string]any, len(p.Params)+3)
	for k, v := range p.Params {
		params[k] = v
	}
	params["rule_id"] = r.ID
	params["timeout_seconds"] = int64(wait / time.Second)
	onTimeout := r.OnTimeout
	if onTimeout == "" {
		onTimeout = OnTimeoutNone
	}
	params["on_timeout"] = onTimeout
	p.Params = params
	out.Prompt = p
	out.OnTimeout = elicit.TimeoutVerdict(onTimeout, wait, "Gatehouse rule "+r.ID)
	return out, nil
}

// AnswerNow is Apply for callers that take only an immediate answer (the MCP proxy's
// policy ASK, through park.Service.Ask): an allow or deny rule decides p and returns
// the decided row; with no matching rule, or an ask rule (which such callers do not
// apply), it returns nil.
func (s *Service) AnswerNow(ctx context.Context, p elicit.Prompt, subj Subject) (*models.Elicitation, error) {
	r, err := s.Match(ctx, subj)
	if err != nil || r == nil || r.Effect == models.EffectAsk {
		return nil, err
	}
	applied, err := s.Apply(ctx, p, subj)
	if err != nil || applied == nil || applied.Ended == nil {
		return nil, err
	}
	return applied.Ended.Row, nil
}
