// Package evaluate is the policy-evaluation use case (§6.3): an agent asks whether it
// may go on with what it is about to do. The policies answer ALLOW or DENY, or ASK; an
// ASK a person can approve, from a caller who may park, becomes a prompt whose verdict
// is the answer. The HTTP layer parses the request and waits; the decisions are here.
package evaluate

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Results of an evaluation.
const (
	ResultAllow = "POLICY_ACTION_ALLOW"
	ResultDeny  = "POLICY_ACTION_DENY"
	ResultAsk   = "POLICY_ACTION_ASK"
)

// Reasons given when a parked ASK ends without an approval.
const (
	ReasonDeclined   = "Approval was declined."
	ReasonNotGranted = "Approval was not granted."
	ReasonTimedOut   = "Timed out: nobody decided in time. No person declined this request."
)

// Answer is what the agent is told.
type Answer struct {
	Result string `json:"result"`
	Reason string `json:"reason,omitempty"`
}

// Request is one evaluation: an event of phase in session, asked by user, who holds
// level on the session's tree.
type Request struct {
	Session *models.Session
	User    string
	Level   auth.Level
	Phase   string
	Target  string
	Data    map[string]any
	Context map[string]any
}

// Service evaluates policies and parks the ASKs a person decides.
type Service struct {
	policies *policy.Engine
	urlMode  bool
}

// New builds the use case over the policy engine; urlMode publishes parked ASKs in MCP
// URL mode (§6.6).
func New(policies *policy.Engine, urlMode bool) *Service {
	if policies == nil {
		policies = policy.New()
	}
	return &Service{policies: policies, urlMode: urlMode}
}

// Evaluate answers at once, or returns the prompt to park when a person is to decide:
// an ASK on a phase a person can approve from a caller who may park. Anyone else gets
// the ASK back, for their own harness to handle.
func (s *Service) Evaluate(ctx context.Context, r Request) (Answer, *elicit.Prompt) {
	sess := r.Session
	ev := policy.NewEvent(policy.SessionInfo{ID: sess.ID, Depth: sess.Depth, RootID: sess.RootID},
		r.User, r.Phase, r.Target, r.Data, r.Context)
	res := s.policies.EvaluateContext(ctx, ev)
	switch res.Action {
	case policy.Deny:
		return Answer{Result: ResultDeny, Reason: res.Reason}, nil
	case policy.Allow:
		return Answer{Result: ResultAllow}, nil
	}
	if !r.Level.CanPark() || !approvable(r.Phase) {
		return Answer{Result: ResultAsk, Reason: res.Reason}, nil
	}
	return Answer{}, &elicit.Prompt{Session: sess, Origin: models.OriginPolicy,
		Params: policy.PromptParams(ev, res, s.urlMode), URLMode: s.urlMode}
}

// Decided is the answer a parked ASK ends with when a person decided: accept allows;
// decline and cancel deny, saying which.
func Decided(r elicit.Result) Answer {
	switch r.Action {
	case elicit.ActionAccept:
		return Answer{Result: ResultAllow}
	case elicit.ActionDecline:
		// A verdict a rule gave (or a timeout answer) says so in its feedback; only a
		// person's own "no" is "declined".
		if fb, _ := r.Content["feedback"].(string); fb != "" {
			return Answer{Result: ResultDeny, Reason: fb}
		}
		return Answer{Result: ResultDeny, Reason: ReasonDeclined}
	}
	return NoVerdict
}

// TimedOut is the answer when a parked ASK's wait ran out with no decision: the agent
// may not go on, and is told it was a timeout, not a person's refusal.
var TimedOut = Answer{Result: ResultDeny, Reason: ReasonTimedOut}

// NoVerdict is the answer when a parked ASK ends without a person's verdict (it
// expired, its client left, the server stopped): the agent may not go on.
var NoVerdict = Answer{Result: ResultDeny, Reason: ReasonNotGranted}

// approvable: a person can approve what the agent is about to do, not what has already
// happened (tool results, LLM responses).
func approvable(phase string) bool {
	return phase == policy.PhaseToolCall || phase == policy.PhaseLLMRequest || phase == policy.PhaseRequest
}
