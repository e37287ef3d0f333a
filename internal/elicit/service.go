// Package elicit is Gatehouse's domain core: it parks requests, resolves them with the
// human's verdict, mirrors prompts to ancestor sessions, and expires or abandons the ones
// nobody answers.
//
// The database row is the truth. In-memory waiters are only wake-up calls: a waiter
// registers first, then re-reads the row, then blocks, so a verdict that lands in
// between is never lost; and every decision is a conditional update, so exactly one of
// many racing verdicts wins, on one process or on many.
package elicit

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/groupcommit"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Store is the persistence the core needs.
type Store interface {
	GetSession(ctx context.Context, id string) (*models.Session, error)
	InsertElicitation(ctx context.Context, e *models.Elicitation) error
	// InsertOpened stores a new pending prompt and the events announcing it in one
	// commit (with notify's NOTIFY, when set); the row is marked logged as far as the
	// events take it.
	InsertOpened(ctx context.Context, e *models.Elicitation, evs []models.LoggedEvent,
		notify *models.Notice) ([]models.SessionEvent, error)
	GetElicitation(ctx context.Context, id string) (*models.Elicitation, error)
	// DecideElicitation commits d when the row is still pending, with its audit chain
	// row and, for a rule's decision (models.ViaRule), the rule's fire count.
	DecideElicitation(ctx context.Context, id, sessionID string, d models.Decision) (*models.Elicitation, error)
	// InsertDecided stores rows decided as they were opened (a rule's answers) in one
	// commit, each with its audit chain row and its rule's fire count, and the events
	// evs announcing them; it returns the rows as stored and the events' log rows.
	InsertDecided(ctx context.Context, rows []*models.Elicitation, evs []models.LoggedEvent,
		notify *models.Notice) ([]*models.Elicitation, []models.SessionEvent, error)
	// JournalDecided records rows a rule decided in the decision journal, in one
	// write; InsertDecided later stores them (and, where it can, deletes their journal
	// rows in its commit: otherwise ForgetJournaledAt does, after, at the positions
	// it returned).
	JournalDecided(ctx context.Context, rows []*models.Elicitation) ([]int64, error)
	ForgetJournaledAt(ctx context.Context, at []int64) error
	ForgetJournaled(ctx context.Context, ids []string) error
	JournaledDecisions(ctx context.Context, before time.Time, limit int) ([]*models.Elicitation, error)
	StillJournaled(ctx context.Context, ids []string) (map[string]bool, error)
	ExistingElicitations(ctx context.Context, ids []string) (map[string]bool, error)
	PendingInSubtree(ctx context.Context, path string) ([]models.Elicitation, error)
	DuePending(ctx context.Context, now time.Time, limit int) ([]models.Elicitation, error)
	ConsumeApproval(ctx context.Context, id, sessionID string, at time.Time) (bool, error)
	RenewLeases(ctx context.Context, ids []string, until time.Time) error
	LapsedLeases(ctx context.Context, now time.Time, limit int) ([]models.Elicitation, error)
	UnloggedElicitations(ctx context.Context, before time.Time, limit int) ([]models.Elicitation, error)
	LatestMCPApproval(ctx context.Context, sessionID, callKey string, declinedSince time.Time) (*models.Elicitation, error)
}

// Clock tells time; tests may inject their own.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
	// AfterFunc calls f on a goroutine of its own after d, unless stop is called
	// first.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now().UTC() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// Options configure a Service.
type Options struct {
	// Timeout is the longest a parked request waits (--elicitation-timeout).
	Timeout time.Duration
	// Grace is how long a prompt stays pending after its waiter is gone — the client
	// hung up, the server stopped or was killed — so a retry with the same id can
	// re-attach, on any replica. It is also the length of the lease a waiter renews.
	Grace time.Duration
	// AnswerWait bounds how long a person's verdict is held back from the streams for
	// the requests it woke to send their answers (see Waiter.WaitToAnswer); normally
	// they take tens of microseconds. Default 5ms.
	AnswerWait time.Duration
	// MaxParkedPerPerson caps the requests one person keeps parked in this process
	// (--max-parked-per-person; see parkCounts). Default DefaultMaxParkedPerPerson.
	MaxParkedPerPerson int
	// MaxBacklog bounds the rule answers journaled and not yet stored; past it a rule's
	// answer waits for the storing to catch up. Default DefaultMaxBacklog.
	MaxBacklog int
	Clock      Clock
	Log        *slog.Logger
}

// Service is the elicitation core.
type Service struct {
	store   Store
	bus     stream.Bus
	clock   Clock
	timeout time.Duration
	grace   time.Duration
	log     *slog.Logger
	waiters *waiters
	// parks counts each person's parked requests against Options.MaxParkedPerPerson.
	parks *parkCounts
	// answerWait: see Options.AnswerWait.
	answerWait time.Duration

	mu          sync.Mutex
	onResolved  []func(e *models.Elicitation)
	onOpened    []func(e *models.Elicitation)
	onAnnounced []func(e *models.Elicitation)
	// journal writes the rows rules decide to the decision journal, grouping
	// concurrent ones (DecideByRule); behind stores them after (journal.go).
	journal  *groupcommit.Group[*queuedRow]
	behind   backlog
	onCommit []func(took time.Duration)

	// shutdown is closed when the server stops: every parked request answers at once.
	shutdown     chan struct{}
	shutdownOnce sync.Once
	parked       sync.WaitGroup
	// closing (guarded by mu) is set when Shutdown starts waiting on parked: a
	// WaitGroup may not gain its first Add while Wait runs, so later waiters are not
	// counted (they see shutdown closed and answer at once anyway).
	closing bool
}

// New builds the core over a store and a bus.
func New(st Store, bus stream.Bus, o Options) *Service {
	if o.Timeout <= 0 {
		o.Timeout = 24 * time.Hour
	}
	if o.Grace <= 0 {
		o.Grace = 10 * time.Second
	}
	if o.AnswerWait <= 0 {
		o.AnswerWait = 5 * time.Millisecond
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	s := &Service{
		store: st, bus: bus, clock: o.Clock, timeout: o.Timeout, grace: o.Grace, log: o.Log,
		waiters: newWaiters(), parks: newParkCounts(o.MaxParkedPerPerson), answerWait: o.AnswerWait, shutdown: make(chan struct{}),
	}
	s.behind.hurry = make(chan struct{}, 1)
	s.behind.max = o.MaxBacklog
	if s.behind.max <= 0 {
		s.behind.max = DefaultMaxBacklog
	}
	s.journal = s.newJournalGroup()
	bus.OnDecided(s.waiters.wake)
	return s
}

// OnResolved registers a callback run after a verdict is committed, before it is
// published or handed to the waiting request (metrics, forwarding to the MCP runner).
// Callbacks must not block.
func (s *Service) OnResolved(f func(e *models.Elicitation)) {
	s.mu.Lock()
	s.onResolved = append(s.onResolved, f)
	s.mu.Unlock()
}

// OnOpened registers a callback run after a new prompt is inserted, just before it is
// published. Callbacks must not block.
func (s *Service) OnOpened(f func(e *models.Elicitation)) {
	s.mu.Lock()
	s.onOpened = append(s.onOpened, f)
	s.mu.Unlock()
}

// OnAnnounced registers a callback run once a prompt has been told to those waiting on
// it: a new prompt once its request is published, a decided one once the requests it
// woke have answered and its end is published. Work that must not compete with telling
// the agent and the streams goes here — planning notifications reads and writes the
// database and sends requests, and on two cores that work, started at the commit, ran
// beside the answer and slowed it. Callbacks must not block.
func (s *Service) OnAnnounced(f func(e *models.Elicitation)) {
	s.mu.Lock()
	s.onAnnounced = append(s.onAnnounced, f)
	s.mu.Unlock()
}

// OnVerdictCommitted registers a callback told how long each verdict's commit took (the
// conditional update with its audit chain append): the durable part of resolve →
// answer, which the metrics export so the benchmark can say what a slow verdict spent.
func (s *Service) OnVerdictCommitted(f func(took time.Duration)) {
	s.mu.Lock()
	s.onCommit = append(s.onCommit, f)
	s.mu.Unlock()
}

// run calls the callbacks registered in *hooks (OnOpened, OnResolved, OnAnnounced)
// with row.
func (s *Service) run(hooks *[]func(*models.Elicitation), row *models.Elicitation) {
	s.mu.Lock()
	fs := append([]func(*models.Elicitation){}, *hooks...)
	s.mu.Unlock()
	for _, f := range fs {
		f(row)
	}
}

// committed tells the OnVerdictCommitted callbacks how long a verdict's commit took.
func (s *Service) committed(took time.Duration) {
	s.mu.Lock()
	fs := append([]func(time.Duration){}, s.onCommit...)
	s.mu.Unlock()
	for _, f := range fs {
		f(took)
	}
}

// Now is the core's clock (injected in tests): the time pages show against deadlines.
func (s *Service) Now() time.Time { return s.clock.Now() }

// Timeout returns the configured longest wait.
func (s *Service) Timeout() time.Duration { return s.timeout }

// Ended is how a prompt ended, as a parked request learns it when it wakes.
type Ended struct {
	// Status is resolved, expired or abandoned.
	Status string
	// Verdict is the verdict given (resolved only).
	Verdict models.Verdict
	// Row is the decided row.
	Row *models.Elicitation
	// answered tells the decider the answer is out (see Waiter.WaitToAnswer).
	answered func()
}

// Answered tells the process that decided the prompt that this request's answer is
// out, so it may go on publishing the decision. Safe to call on any verdict, again.
func (v Ended) Answered() {
	if v.answered != nil {
		v.answered()
	}
}

// Decided reports whether a human gave a verdict (as opposed to a timeout, abandonment
// or shutdown, which are "no verdict").
func (v Ended) Decided() bool { return v.Status == models.StatusResolved }

// Prompt describes a request to park.
type Prompt struct {
	Session *models.Session
	// ID re-attaches to an existing prompt when set; otherwise a random id is minted.
	ID     string
	Origin string
	// Params are published as the event's params; approve_path is added.
	Params map[string]any
	// URLMode publishes the prompt in MCP URL mode (§6.6): params gain "mode":"url" and
	// "url" = the approve path, which names the id Open mints, so the link is part of
	// the very first event. Without it the caller's params decide the mode.
	URLMode bool
	// Timeout overrides the service's default when positive.
	Timeout time.Duration
	// CallKey names the MCP tool call an approval is for (see LatestMCPApproval).
	CallKey string
	// RuleID names the Gatehouse rule that set this prompt's wait (an ask rule).
	RuleID string
	// TokenID names the API token the request came with, kept on the row so a
	// hooks-only token reads only the prompts it parked (PendingParkedWith,
	// GetParkedWith). Empty: no token.
	TokenID string
	// Person is who parks the request: the authenticated user, or a token's owner. A
	// request that waits (Attach) counts against Options.MaxParkedPerPerson while it
	// waits; Open, which does not wait, ignores it.
	Person string
}

// Open inserts the prompt and publishes it on its session and every ancestor, or
// re-attaches to the prompt with the same id. It does not wait: a request that waits
// uses Attach (the waiter registers first).
func (s *Service) Open(ctx context.Context, p Prompt) (*models.Elicitation, error) {
	minted := p.ID == ""
	if minted {
		p.ID = ids.NewOrdered(ids.ElicitationPrefix)
	}
	return s.open(ctx, p, minted, false)
}

// open is Open with the id already chosen; minted says the id is fresh (so there is
// nothing to re-attach to and no need to look), waited that a waiter is attaching (so
// the prompt gets, or renews, a lease).
func (s *Service) open(ctx context.Context, p Prompt, minted, waited bool) (*models.Elicitation, error) {
	if !minted {
		row, err := s.store.GetElicitation(ctx, p.ID)
		switch {
		case err == nil:
			if row.SessionID != p.Session.ID {
				return nil, errs.Invalid("elicitation_id", "this id belongs to another session")
			}
			if !sameRequest(row, p) {
				// Re-attaching would hand this request the verdict given for another one.
				return nil, errs.Conflict("elicitation id %s was opened for a different request; use a fresh id for a new request", p.ID)
			}
			if row.IsPending() && waited {
				// A client is back: renew the lease at once, so the grace that began
				// when it left (on whichever replica) does not abandon the prompt.
				lease := s.leaseFromNow()
				if err := s.store.RenewLeases(ctx, []string{row.ID}, lease); err != nil {
					return nil, err
				}
				row.LeaseUntil = &lease
			}
			return row, nil // re-attach: the row is already published
		case !errors.Is(err, errs.ErrNotFound):
			return nil, err
		}
	}
	row, params, err := s.newRow(p, waited)
	if err != nil {
		return nil, err
	}
	if err := s.insert(ctx, p.Session, row, params); err != nil {
		if errors.Is(err, errs.ErrConflict) {
			// A concurrent retry with the same id inserted first: attach to it.
			return s.open(ctx, p, false, waited)
		}
		return nil, err
	}
	return row, nil
}

// insert stores the new prompt row and announces it on its session's stream and its
// ancestors': the row and its events share one commit (store.InsertOpened). Only a
// prompt whose events could not be encoded is stored alone.
func (s *Service) insert(ctx context.Context, sess *models.Session, row *models.Elicitation, params map[string]any) error {
	// Once sent, the insert finishes whatever the caller's context does: it may be
	// committed, and its events on their way to every stream, when the context ends —
	// the client hanging up, or the server ending requests as it stops — and failing
	// then answered 500 for a prompt every stream showed. A waiter that attaches after
	// sees its context ended and leaves the prompt to its grace. (The store bounds each
	// statement with a deadline of its own.)
	ctx = context.WithoutCancel(ctx)
	evs, chain := s.requestEvents(sess, row.ID, params, row.Params)
	if evs == nil {
		if err := s.store.InsertElicitation(ctx, row); err != nil {
			return err
		}
		s.opened(row)
		s.run(&s.onAnnounced, row)
		return nil
	}
	err := s.bus.PublishIn(chain, evs, func(logged []models.LoggedEvent, notify *models.Notice) ([]models.SessionEvent, error) {
		if len(logged) > 0 { // a bus without a log has none to give
			row.Logged = models.LoggedRequest
		}
		rows, err := s.store.InsertOpened(ctx, row, logged, notify)
		if err != nil {
			row.Logged = models.LoggedNone
			return nil, err
		}
		s.opened(row)
		return rows, nil
	})
	if err == nil {
		s.run(&s.onAnnounced, row)
	}
	return err
}

// opened logs a stored prompt and runs the callbacks (metrics) on it — before it is
// published, so whoever sees it on a stream also sees it counted.
func (s *Service) opened(row *models.Elicitation) {
	s.log.Info("elicitation parked", "session_id", row.SessionID, "elicitation_id", row.ID, "origin", row.Origin)
	s.run(&s.onOpened, row)
}

// newRow is the pending row Open stores for p (its id chosen), and the params the
// request event carries: the prompt's own and the approval page's path.
func (s *Service) newRow(p Prompt, waited bool) (*models.Elicitation, map[string]any, error) {
	timeout := p.Timeout
	if timeout <= 0 || timeout > s.timeout {
		timeout = s.timeout
	}
	params := make(map[string]any, len(p.Params)+1)
	for k, v := range p.Params {
		params[k] = v
	}
	params["approve_path"] = "/approve/" + p.Session.ID + "/" + p.ID
	if p.URLMode {
		params["mode"] = "url"
		params["url"] = params["approve_path"]
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, nil, errs.Invalid("params", "cannot encode: %v", err)
	}
	now := s.clock.Now()
	row := &models.Elicitation{
		ID: p.ID, SessionID: p.Session.ID, Origin: p.Origin, Params: raw,
		Status: models.StatusPending, CreatedAt: now, ExpiresAt: now.Add(timeout),
	}
	if waited {
		lease := s.leaseFromNow()
		row.LeaseUntil = &lease
	}
	if p.CallKey != "" {
		row.CallKey = &p.CallKey
	}
	if p.RuleID != "" {
		row.RuleID = &p.RuleID
	}
	if p.TokenID != "" {
		row.TokenID = &p.TokenID
	}
	return row, params, nil
}

// ErrClientGone is returned by a wait when the caller's context ended (the HTTP client
// hung up). The prompt stays pending for the grace period, then is abandoned.
var ErrClientGone = errors.New("client went away")

// finish ends a wait without a human verdict; if a human won the race, theirs stands.
func (s *Service) finish(ctx context.Context, row *models.Elicitation, status, via string) (Ended, error) {
	if _, err := s.decide(ctx, row.ID, row.SessionID, models.Decision{Status: status, By: "gatehouse", Via: via, At: s.clock.Now()}); err != nil {
		return Ended{}, err
	}
	cur, err := s.store.GetElicitation(ctx, row.ID)
	if err != nil {
		return Ended{}, err
	}
	return endedOf(cur), nil
}

// Shutdown answers every parked request with "no verdict" and waits (bounded by ctx)
// until they have returned. Their prompts stay pending, as after a client hang-up: a
// client that re-parks with the same id — on another replica, or here after a restart
// — picks its prompt up with any verdict given meanwhile; otherwise any live replica
// abandons it when the grace runs out (RunLeases).
func (s *Service) Shutdown(ctx context.Context) {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.shutdownOnce.Do(func() { close(s.shutdown) })
	s.waiters.notifyAll() // parked requests without a goroutine check for shutdown now
	done := make(chan struct{})
	go func() { s.parked.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// enterPark counts a parked request for Shutdown to wait on, unless shutdown has begun.
func (s *Service) enterPark() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.parked.Add(1)
	return true
}

// ExpireDue expires pending rows whose deadline passed while nobody waited (for
// example across a restart). It returns how many it expired.
func (s *Service) ExpireDue(ctx context.Context) (int, error) {
	rows, err := s.store.DuePending(ctx, s.clock.Now(), 500)
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range rows {
		done, err := s.decide(ctx, rows[i].ID, rows[i].SessionID, models.Decision{Status: models.StatusExpired, By: "gatehouse", Via: models.ViaTimeout, At: s.clock.Now()})
		if err != nil {
			return n, err
		}
		if done != nil {
			n++
		}
	}
	return n, nil
}

// endedOf is how a decided row ended, with its verdict.
func endedOf(row *models.Elicitation) Ended {
	v := Ended{Status: row.Status, Row: row}
	if row.Action != nil {
		v.Verdict.Action = *row.Action
	}
	if len(row.Content) > 0 && string(row.Content) != "null" {
		if r, err := ParseVerdict([]byte(`{"action":"accept","content":` + string(row.Content) + `}`)); err == nil {
			v.Verdict.Content = r.Content
		}
	}
	return v
}

// Consume spends an accepted approval of session sid on the one action it authorized.
// It reports false when the approval was already spent (a replay) or is not accepted.
func (s *Service) Consume(ctx context.Context, sid, eid string) (bool, error) {
	return s.store.ConsumeApproval(ctx, eid, sid, s.clock.Now())
}

// sameRequest reports whether a re-attaching prompt asks what the stored row asked: the
// same origin and, where the params name them, the same tool and tool input — or, for
// an MCP server's question relayed by Claude's Elicitation hook, the same server,
// message and form. A verdict is an answer to one request; a client-chosen id must not
// carry it over to another (content typed for one form must not fill another).
func sameRequest(row *models.Elicitation, p Prompt) bool {
	if row.Origin != p.Origin {
		return false
	}
	stored := row.DecodeParams().All
	keys := []string{"tool_name", "tool_input"}
	if p.Origin == models.OriginClaudePermission {
		// A remembered choice names one of these by index: a retry offering other
		// suggestions is another request, or the index would pick what nobody was shown.
		keys = append(keys, "permission_suggestions")
	}
	if p.Origin == models.OriginClaudeElicit {
		keys = append(keys, "server_name", "message", "requestedSchema")
	}
	for _, key := range keys {
		a, inStored := stored[key]
		b, inNew := p.Params[key]
		if inStored != inNew {
			return false
		}
		if inStored && !sameJSON(a, b) {
			return false
		}
	}
	return true
}

// sameJSON compares two values by their canonical JSON: maps encode with sorted keys,
// and a round trip through float64 spells numbers one way (1.50 and 1.5 are equal).
func sameJSON(a, b any) bool {
	ja, errA := canonicalJSON(a)
	jb, errB := canonicalJSON(b)
	return errA == nil && errB == nil && ja == jb
}

func canonicalJSON(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return "", err
	}
	out, err := json.Marshal(generic)
	return string(out), err
}
