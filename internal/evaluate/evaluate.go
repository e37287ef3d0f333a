// Package evaluate is the policy-evaluation use case (§6.3): an agent asks whether it
// may go on with what it is about to do. The policies answer ALLOW or DENY, or ASK; an
// ASK a person can approve, from a caller who may park, becomes a prompt whose verdict
// is the answer. The HTTP layer parses the request and waits; the decisions are here.
package evaluate

import (
	"context"
	"time"

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
	// maxWait is the server's longest wait (a policy's own timeout is capped to it).
	maxWait time.Duration
}

// New builds the use case over the policy engine; urlMode publishes parked ASKs in MCP
// URL mode (§6.6).
func New(policies *policy.Engine, urlMode bool) *Service {
	if policies == nil {
		policies = policy.New()
	}
	return &Service{policies: policies, urlMode: urlMode, maxWait: 24 * time.Hour}
}

// WithMaxWait sets the server's longest wait (--elicitation-timeout), which caps a
// policy's own timeout; it returns s.
func (s *Service) WithMaxWait(d time.Duration) *Service {
	if d > 0 {
		s.maxWait = d
	}
	return s
}

// Ask is an ASK a person is to decide: the prompt to park and, when the policy set its
// own wait (timeout, on_timeout), what to answer when that wait runs out.
type Ask struct {
	Prompt elicit.Prompt
	// OwnWait is set when the policy gave its own timeout or on_timeout: a wait that
	// runs out is then answered TimedOut (or OnTimeout), naming the timeout.
	OwnWait bool
	// OnTimeout is the verdict when the wait runs out (nil: no verdict).
	OnTimeout *models.Verdict
}

// Evaluate answers at once, or returns the ASK to park when a person is to decide:
// an ASK on a phase a person can approve from a caller who may park. Anyone else gets
// the ASK back, for their own harness to handle.
func (s *Service) Evaluate(ctx context.Context, r Request) (Answer, *Ask) {
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
	ask := &Ask{Prompt: elicit.Prompt{Session: sess, Origin: models.OriginPolicy,
		Params: policy.PromptParams(ev, res, s.urlMode), URLMode: s.urlMode, Timeout: res.Timeout}}
	if res.Timeout > 0 || res.OnTimeout != "" {
		ask.OwnWait = true
		wait := res.Timeout
		if wait <= 0 {
			wait = s.maxWait
		}
		onTimeout := res.OnTimeout
		if onTimeout == "" {
			onTimeout = "none"
		}
		ask.Prompt.Params["timeout_seconds"] = int64(wait / time.Second)
		ask.Prompt.Params["on_timeout"] = onTimeout
		ask.OnTimeout = elicit.TimeoutVerdict(onTimeout, wait, "policy '"+res.Policy+"'")
	}
	return Answer{}, ask
}

// Decided is the answer a parked ASK ends with when a person decided: accept allows;
// decline and cancel deny, saying which.
func Decided(r models.Verdict) Answer {
	switch r.Action {
	case models.ActionAccept:
		return Answer{Result: ResultAllow}
	case models.ActionDecline:
		// A verdict a rule gave (or a timeout answer) says so in its feedback; a
		// person's own "no" is "declined" (§6.3).
		if r.Bool(models.ContentAutomatic) {
			if fb := r.String("feedback"); fb != "" {
				return Answer{Result: ResultDeny, Reason: fb}
			}
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
