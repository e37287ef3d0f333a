// Package park is the use case of every request that waits for a person — agent hooks,
// policy evaluations and the MCP proxy's calls: a bounded number prepare at once (read,
// authorize, decode, the rules, storing the prompt), then each waits for its verdict and
// is answered in its agent's format. How the connection waits (in its handler, held off
// net/http, or — for an MCP client — asked to come back) is the caller's concern; what
// is answered is decided here, and Gatehouse's rules are applied here only.
package park

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/grants"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
	"github.com/gatehouse-dev/gatehouse/internal/rules"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Job is a request ready to park: the caller's level on the session, the prompt (its
// ID, when set, re-attaches: Claude's _gatehouse_elicitation_id, Codex's deterministic
// id), and how to answer in the agent's protocol.
type Job struct {
	Level  auth.Level
	Prompt elicit.Prompt
	// TokenID is the token the request came with: a hooks-only token reads only what
	// it parked. Person is whose wait it is (--max-parked-per-person counts it).
	TokenID string
	Person  string
	// Answer turns a verdict into the body the agent reads; by is who gave it (a deny
	// without feedback names them: models.Verdict.DenyReason).
	Answer func(v models.Verdict, by string) any
	// NoVerdict is the body when the wait ends without a verdict; nil is an empty 200.
	NoVerdict any
	// Immediate, when set, is answered at once without parking.
	Immediate any
	// Subject, when set, is what Gatehouse rules match the request on (internal/rules):
	// a matching allow or deny rule answers at once, an ask rule sets the wait.
	Subject *rules.Subject
	// OnTimeout, when set, is the verdict given when the wait runs out (an ask rule's
	// on_timeout); its feedback names the timeout.
	OnTimeout *models.Verdict
	// TimedOut, when set, is the "no verdict" body for a wait of its own (OwnWait: an
	// ask rule's) that ran out, naming the timeout; nil: NoVerdict.
	TimedOut any
	OwnWait  bool
	// Fingerprint, when set, is the hash of the request the prompt's deterministic ID
	// was made from (a Codex app-server's JSON-RPC id): a prompt of that ID opened for
	// a different request is not re-attached to (checkRetry).
	Fingerprint string

	// Refusal, when set, is an agent's own refusal of the call in Subject, escalated to
	// a person (see Escalation): answered at once when it stands, and an accept is
	// answered only with its grant stored.
	Refusal *models.HookRefusal
	// Retry marks a call that may be an escalated refusal's retry: a live grant for it
	// answers Answer(accept) at once. GrantsOnly answers such a call NoVerdict at once
	// when it has none, instead of parking it — a hook installed only to let retries
	// through.
	Retry, GrantsOnly bool
	// grant is the call an escalated refusal's grant is for (grantFor).
	grant *grants.Call
}

// Prepare reads, authorizes and decodes a request about to park. It runs in a slot.
type Prepare func() (*Job, error)

// Parked is a request prepared to park: answered at once (Immediate), or waiting on
// a prompt (Await).
type Parked struct {
	job *Job // until it waits (trimmed)
	a   *answering
	w   *elicit.Waiter
}

// answering is what a waiting request keeps of its Job: how to answer. A whole Job —
// the prompt it stored, the subject the rules matched — is a few hundred bytes more,
// for each of thousands of waits.
type answering struct {
	answer    func(v models.Verdict, by string) any
	noVerdict any
	onTimeout *models.Verdict
	timedOut  any
	// s, refusal and grant answer an escalated refusal: an accept is answered only
	// once its grant is stored (Service.answer).
	s       *Service
	refusal bool
	grant   *grants.Call
}

// trimmed is p keeping only what its wait needs to answer (s: the service that
// stores an escalated refusal's grant).
func (p Parked) trimmed(s *Service) Parked {
	j := p.job
	a := &answering{answer: j.Answer, noVerdict: j.NoVerdict, onTimeout: j.OnTimeout,
		s: s, refusal: j.Refusal != nil, grant: j.grant}
	if j.OwnWait {
		a.timedOut = j.TimedOut
	}
	return Parked{w: p.w, a: a}
}

// Immediate is the answer given at once without parking (a rule's, a policy's ALLOW,
// a retire's), and true; false when there is none.
func (p Parked) Immediate() (any, bool) {
	if p.job == nil {
		return nil, false
	}
	return p.job.Immediate, p.job.Immediate != nil
}

// Waiting reports whether the request waits on a prompt; when it does not (and has no
// Immediate answer) it is answered NoVerdict at once.
func (p Parked) Waiting() bool { return p.w != nil }

// NoVerdict is the answer when no verdict comes (nil: the empty 200).
func (p Parked) NoVerdict() any {
	if p.a != nil {
		return p.a.noVerdict
	}
	return p.job.NoVerdict
}

// Ended reports whether the prompt a waiting request parked on has ended already (a
// retry that re-attached to a decided prompt), so there is nothing to hold.
func (p Parked) Ended() bool { return p.w != nil && p.w.Ended() }

// Service runs the park use case. One Service serves the whole process — hooks, policy
// evaluations and the MCP proxy — so its slots bound every park's database work at once.
type Service struct {
	elicit *elicit.Service
	rules  *rules.Service // nil: no Gatehouse rules
	risk   *risk.Table    // nil: the built-in risk table
	esc    Escalation
	slots  chan struct{}
	work   *workers // where work in a slot runs (inSlot)
	// queued counts requests waiting for a slot (Queued): in Park, or in line (ParkThen).
	queued atomic.Int64
	line   turns
}

// DefaultSlots is how many requests may prepare a park at once: read, authorize and
// write the prompt. The database takes one write at a time (SQLite) or a pool's worth
// (Postgres), so more in flight only queue there — each on a goroutine whose stack
// grew deep in the ORM, which is what thousands of requests parking at once cost in
// memory. The rest wait for a slot: in Park on a goroutine that stayed small, a held
// request in line with none (ParkThen).
const DefaultSlots = 64

// New returns a Service that lets slots requests prepare at once.
func New(el *elicit.Service, rs *rules.Service, slots int, opts ...Option) *Service {
	s := &Service{elicit: el, rules: rs, slots: make(chan struct{}, slots), work: newWorkers()}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Option configures a Service.
type Option func(*Service)

// RateBy rates every request by t (the policy file's risk table, policy.Engine.Risk)
// instead of the built-in table alone.
func RateBy(t *risk.Table) Option { return func(s *Service) { s.risk = t } }

// Queued is how many requests wait for a slot to prepare right now: a burst's queue.
func (s *Service) Queued() int { return int(s.queued.Load()) }

// take waits for a slot; elicit.ErrClientGone when ctx ends first.
func (s *Service) take(ctx context.Context) error {
	select {
	case s.slots <- struct{}{}:
		return nil
	default:
	}
	s.queued.Add(1)
	defer s.queued.Add(-1)
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return elicit.ErrClientGone
	}
}

// TryPark prepares and parks at once when a slot is free; ok false when every slot is
// taken (the caller may hold the request off net/http, then call Park).
func (s *Service) TryPark(ctx context.Context, prepare Prepare) (p Parked, ok bool, err error) {
	select {
	case s.slots <- struct{}{}:
		err = s.inSlot(func() (err error) { p, err = s.prepareAndAttach(ctx, prepare); return err })
		return p, true, err
	default:
		return Parked{}, false, nil
	}
}

// Park waits for a slot to prepare, then prepares and parks. It returns
// elicit.ErrClientGone when ctx ended while waiting: nothing was parked.
func (s *Service) Park(ctx context.Context, prepare Prepare) (p Parked, err error) {
	if err := s.take(ctx); err != nil {
		return Parked{}, err
	}
	err = s.inSlot(func() (err error) { p, err = s.prepareAndAttach(ctx, prepare); return err })
	return p, err
}

// inSlot runs work — prepare, the rules and attaching the prompt — in the slot the
// caller took, on one of the slots' workers, which gives the slot back (before the
// caller hears back, so a caller that goes on at once finds it free); the caller's
// goroutine — which then waits — keeps the small stack it has (see elicit.Waiter).
func (s *Service) inSlot(work func() error) error {
	ch := make(chan error, 1)
	s.inSlotThen(work, func(err error) { ch <- err })
	return <-ch
}

// inSlotThen is inSlot without waiting: done gets work's error on the worker, once the
// slot is given back.
func (s *Service) inSlotThen(work func() error, done func(error)) {
	s.work.run(func() {
		err := safely(work)
		s.giveSlot()
		done(err)
	})
}

// safely runs work; a panic is its error. A goroutine of its own is beyond any Recover
// middleware: a panic is the request's 500.
func safely(work func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while preparing a park: %v\n%s", r, debug.Stack())
		}
	}()
	return work()
}

// prepareAndAttach is Park's work in its slot.
func (s *Service) prepareAndAttach(ctx context.Context, prepare Prepare) (Parked, error) {
	j, err := prepare()
	if err != nil || j.Immediate != nil || !j.Level.CanPark() {
		return Parked{job: j}, err
	}
	if j.Retry {
		if answered, err := s.spendGrant(ctx, j); err != nil || answered {
			return Parked{job: j}, err
		}
	}
	if j.GrantsOnly {
		return Parked{job: j}, nil // no grant: "no verdict", the agent's own check decides
	}
	if j.Refusal != nil && s.refusalStands(ctx, j) {
		return Parked{job: j}, nil
	}
	j.grant = grantFor(j)
	if err := s.checkRetry(ctx, j); err != nil {
		return Parked{job: j}, err
	}
	j.Prompt.TokenID = j.TokenID
	s.rate(j)
	if answered, err := s.applyRules(ctx, j); err != nil || answered {
		return Parked{job: j}, err
	}
	// The wait is the caller's: one of their parked requests, at most
	// --max-parked-per-person (429 beyond; answers given at once above never count).
	j.Prompt.Person = j.Person
	w, err := s.elicit.Attach(ctx, j.Prompt)
	if err != nil {
		return Parked{job: j}, err
	}
	// The prompt is stored and published now, the rules applied; the wait keeps only
	// how to answer, in a Job of its own: the rest of j is a few hundred bytes that
	// thousands of waits would keep for nothing.
	return Parked{job: j, w: w}.trimmed(s), nil
}

// checkRetry refuses (409) to re-attach a request to a prompt that was opened for a
// different request under the same deterministic id — a Codex app-server that
// restarted its id counter, say. Re-attaching would hand one command's verdict to
// another.
func (s *Service) checkRetry(ctx context.Context, j *Job) error {
	if j.Fingerprint == "" || j.Prompt.ID == "" {
		return nil
	}
	row, err := s.elicit.GetInSession(ctx, j.Prompt.Session.ID, j.Prompt.ID)
	if errors.Is(err, errs.ErrNotFound) {
		return nil // nothing to re-attach to here (another session's id: elicit.Open answers 400)
	}
	if err != nil {
		return err
	}
	if stored := row.DecodeParams().CodexFingerprint; stored != "" && stored != j.Fingerprint {
		return errs.Conflict("request id was already used in this session by a different request; " +
			"send each request under a fresh id (or a new session per app-server connection)")
	}
	return nil
}

// Close lets a parked request go without waiting for its verdict (the prompt stays
// pending: it lapses after the disconnect grace, or a retry re-attaches to it).
func (p Parked) Close() {
	if p.w != nil {
		p.w.Close()
	}
}

// Await waits for the prompt's verdict and returns the answer in the agent's protocol
// (nil: the empty "no verdict" 200). The caller calls v.Answered once it is out.
func (p Parked) Await(ctx context.Context) (v elicit.Ended, reply any, err error) {
	type result struct {
		v     elicit.Ended
		reply any
		err   error
	}
	got := make(chan result, 1)
	p.Then(ctx, func(v elicit.Ended, reply any, err error) { got <- result{v, reply, err} })
	r := <-got
	return r.v, r.reply, r.err
}

// Then is Await without a goroutine waiting (elicit.Waiter.Then): f gets what Await
// would return, on a goroutine started when the verdict comes. A panic while making
// the reply is f's error.
func (p Parked) Then(ctx context.Context, f func(v elicit.Ended, reply any, err error)) {
	p.w.Then(ctx, func(v elicit.Ended, err error) {
		var reply any
		if err == nil {
			err = safely(func() error { reply = p.replyTo(ctx, v); return nil })
		}
		f(v, reply, err)
	})
}

// replyTo is the answer to v in the agent's protocol.
func (p Parked) replyTo(ctx context.Context, v elicit.Ended) any {
	a := p.a
	if v.Status == models.StatusExpired {
		if a.onTimeout != nil {
			return a.reply(ctx, *a.onTimeout, v.Row)
		}
		if a.timedOut != nil {
			return a.timedOut
		}
	}
	if !v.Decided() {
		return a.noVerdict
	}
	return a.reply(ctx, v.Verdict, v.Row)
}

// resolvedBy is who decided a row ("" when it does not say).
func resolvedBy(row *models.Elicitation) string {
	if row == nil || row.ResolvedBy == nil {
		return ""
	}
	return *row.ResolvedBy
}

// applyRules runs Gatehouse's rules on a request about to park: an allow or deny rule
// answers it at once (recorded as decided by the rule), an ask rule gives it the rule's
// wait and timeout answer. Requests without a subject (questions, forms) are left alone.
//
// answered reports that the request needs no wait: j.Immediate holds the rule's
// verdict, or — when a retry found its prompt ended without one — is nil for the "no
// verdict" answer.
func (s *Service) applyRules(ctx context.Context, j *Job) (answered bool, err error) {
	if s.rules == nil || j.Subject == nil {
		return false, nil
	}
	j.Subject.Session = j.Prompt.Session
	applied, err := s.rules.Apply(ctx, j.Prompt, *j.Subject)
	if err != nil || applied == nil {
		return false, err
	}
	if applied.Ended != nil {
		if applied.Ended.Decided() {
			j.Immediate = (&answering{answer: j.Answer, s: s, refusal: j.Refusal != nil, grant: j.grant}).
				reply(ctx, applied.Ended.Verdict, applied.Ended.Row)
		}
		return true, nil
	}
	j.Prompt, j.OnTimeout, j.OwnWait = applied.Prompt, applied.OnTimeout, true
	return false, nil
}

// Retire cancels sess's pending prompts of origin whose params match says were
// settled elsewhere (Codex's serverRequest/resolved), recorded as cancelled by by. The
// parked request for each then answers "cancel", which the agent no longer reads; the
// prompt leaves every inbox. only, when set, is the hooks-only token asking: it retires
// only what it parked. It returns the ids retired.
func (s *Service) Retire(ctx context.Context, sess *models.Session, origin string, match func(map[string]any) bool, by, only string) ([]string, error) {
	_, rows, err := s.elicit.PendingFor(ctx, sess)
	if err != nil {
		return nil, err
	}
	retired := []string{}
	for _, row := range rows {
		if row.SessionID != sess.ID || row.Origin != origin || (only != "" && !row.ParkedWith(only)) {
			continue // a hooks-only token retires only what it parked
		}
		if !match(row.DecodeParams().All) {
			continue
		}
		out, err := s.elicit.Resolve(ctx, sess.ID, row.ID, models.Verdict{Action: models.ActionCancel}, by, models.ViaEvent)
		if err != nil {
			return nil, err
		}
		if out.Outcome == elicit.OutcomeResolved {
			retired = append(retired, row.ID)
		}
	}
	return retired, nil
}
