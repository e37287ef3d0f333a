package elicit

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Outcomes of a verdict.
const (
	OutcomeResolved        = "resolved"
	OutcomeAlreadyResolved = "already_resolved"
	OutcomeNotFound        = "not_found"
)

// Outcome is what Resolve reports to the person who gave a verdict.
type Outcome struct {
	Outcome    string              `json:"outcome"`
	ResolvedBy string              `json:"resolved_by,omitempty"`
	ResolvedAt *time.Time          `json:"resolved_at,omitempty"`
	Row        *models.Elicitation `json:"-"`
}

// Resolve applies a human verdict to the prompt eid posted under session sid. It is the
// one resolver every path (API, approval events, approval page, inbox) goes through.
// A prompt owned by another session is reported as not found and left alone.
func (s *Service) Resolve(ctx context.Context, sid, eid string, r models.Verdict, by, via string) (Outcome, error) {
	if err := checkStorable(r.Content); err != nil {
		return Outcome{}, err
	}
	d := models.Decision{Status: models.StatusResolved, Action: r.Action, By: by, Via: via, At: s.clock.Now()}
	if r.Content != nil {
		var err error
		if d.Content, err = json.Marshal(r.Content); err != nil {
			return Outcome{}, err
		}
	}
	// Try to decide first: the conditional update itself checks pending and owner, so
	// the common case is one statement. Only a loser reads the row to say why.
	done, err := s.decide(ctx, eid, sid, d)
	if err != nil {
		return Outcome{}, err
	}
	if done != nil {
		s.log.Info("elicitation resolved", "session_id", sid, "elicitation_id", eid, "origin", done.Origin,
			"action", r.Action, "resolved_by", by, "via", via)
		return Outcome{Outcome: OutcomeResolved, Row: done}, nil
	}
	cur, err := s.GetInSession(ctx, sid, eid)
	if errors.Is(err, errs.ErrNotFound) {
		return Outcome{Outcome: OutcomeNotFound}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Outcome: OutcomeAlreadyResolved, ResolvedAt: cur.ResolvedAt, Row: cur}
	if cur.ResolvedBy != nil {
		out.ResolvedBy = *cur.ResolvedBy
	}
	return out, nil
}

// decide commits d when row is still pending, then — only after the commit — publishes
// the resolved event on the owner and every ancestor and wakes the waiters.
func (s *Service) decide(ctx context.Context, id, sessionID string, d models.Decision) (*models.Elicitation, error) {
	// A decision must not be half-done because the person's HTTP client hung up: once
	// the statement is sent, waking and publishing follow whatever the caller does.
	ctx = context.WithoutCancel(ctx)
	start := time.Now()
	done, heldBack, err := s.decideHere(ctx, id, sessionID, d)
	if done != nil && d.Status == models.StatusResolved {
		s.committed(time.Since(start))
	}
	if err != nil {
		// The commit may have happened even so: let every waiter re-read the row.
		s.waiters.wake(id)
		s.bus.Decided(id)
		return nil, err
	}
	if done == nil {
		if heldBack { // someone else's decision, which won: re-read it
			s.waiters.wake(id)
		}
		return nil, nil
	}
	row := done
	// Callbacks (metrics, forwarding to the runner) run before anyone can observe the
	// decision — the woken request's answer, the resolved event — so an observer never
	// sees a decision the metrics have not counted yet. They must not block (a few
	// counter increments; forwarding is asynchronous).
	s.run(&s.onResolved, done)
	// Then wake the parked request: it is the one a person is waiting on. This
	// process committed the decision, so it hands over the decided row directly;
	// other replicas learn through the bus and re-read.
	answered := s.waiters.wakeWith(done)
	if d.Status == models.StatusResolved {
		// A person's verdict: publish it once the woken requests have answered (see
		// Waiter.WaitToAnswer). Not for a timeout: there the waiter is the decider.
		s.awaitAnswers(answered)
	}
	s.bus.Decided(row.ID)
	if sess, err := s.store.GetSession(ctx, row.SessionID); err == nil {
		s.publishResolved(sess, row.ID)
	} else {
		// The repair sweep (RepublishUnlogged) logs the event later.
		s.log.Error("publish resolved: load session", "session_id", row.SessionID, "err", err)
	}
	if d.Status != models.StatusResolved {
		s.log.Info("elicitation ended without verdict", "session_id", row.SessionID, "elicitation_id", row.ID,
			"origin", row.Origin, "status", d.Status, "via", d.Via)
	}
	s.run(&s.onAnnounced, done)
	return done, nil
}

// decideHere is the store's DecideElicitation with id marked as being decided here
// (waiters.startDeciding): heldBack reports a wake for id that came meanwhile and was
// held back.
func (s *Service) decideHere(ctx context.Context, id, sessionID string, d models.Decision) (done *models.Elicitation, heldBack bool, err error) {
	s.waiters.startDeciding(id)
	defer func() { heldBack = s.waiters.doneDeciding(id) }()
	done, err = s.store.DecideElicitation(ctx, id, sessionID, d)
	return done, false, err
}

// awaitAnswers waits until answered closes, at most s.answerWait.
func (s *Service) awaitAnswers(answered <-chan struct{}) {
	select {
	case <-answered:
		return
	default:
	}
	// Real time, not the service clock: this bounds work in flight, it is no deadline
	// anyone sees.
	t := time.NewTimer(s.answerWait)
	defer t.Stop()
	select {
	case <-answered:
	case <-t.C:
	}
}

// Event types on session streams.
const (
	EventRequest     = "response.elicitation_request"
	EventResolved    = "response.elicitation_resolved"
	EventHeartbeat   = "session.heartbeat"
	EventInterrupted = "session.interrupted"
)

// RequestEvent builds the response.elicitation_request payload for a prompt as seen on
// session viewer: when the prompt belongs to a descendant, its params gain
// target_session_id.
func RequestEvent(eid, owner, viewer string, params map[string]any) map[string]any {
	p := params
	if owner != viewer {
		p = make(map[string]any, len(params)+1)
		for k, v := range params {
			p[k] = v
		}
		p["target_session_id"] = owner
	}
	ev := map[string]any{
		"type":           EventRequest,
		"elicitation_id": eid,
		"method":         "elicitation/create",
		"params":         p,
	}
	// The request's risk (internal/risk, stored with its params) is shown beside them.
	if r, ok := params["risk"]; ok {
		ev["risk"] = r
	}
	return ev
}

// RowRequestEvent is RequestEvent for a stored row.
func RowRequestEvent(row *models.Elicitation, viewer string) map[string]any {
	return RequestEvent(row.ID, row.SessionID, viewer, row.DecodeParams().All)
}

func (s *Service) publishRequest(sess *models.Session, eid string, params map[string]any, raw json.RawMessage) {
	if evs, chain := s.requestEvents(sess, eid, params, raw); evs != nil {
		s.bus.Publish(chain, evs)
	}
}

// requestEvents are the request events of prompt eid of sess for sess and every
// ancestor, and those sessions (nil when the params cannot be encoded: logged). raw,
// when set, is params as json.Marshal encoded them (newRow): the prompt's own
// session's event carries it as it is rather than encoding the map again.
func (s *Service) requestEvents(sess *models.Session, eid string, params map[string]any, raw json.RawMessage) ([]stream.Event, []string) {
	chain := append(sess.AncestorIDs(), sess.ID)
	evs := make([]stream.Event, len(chain))
	for i, viewer := range chain {
		var data []byte
		var err error
		if viewer == sess.ID && raw != nil {
			data, err = ownRequestEventData(eid, params, raw)
		} else {
			data, err = json.Marshal(RequestEvent(eid, sess.ID, viewer, params))
		}
		if err != nil {
			s.log.Error("encode request event", "elicitation_id", eid, "err", err)
			return nil, nil
		}
		evs[i] = stream.Event{Type: EventRequest, Data: data, ElicitationID: eid, Stage: models.LoggedRequest}
	}
	return evs, chain
}

// ownRequestEventData is RequestEvent(eid, owner, owner, params) as json.Marshal
// encodes it, for params already encoded as raw (by json.Marshal): raw is spliced in as
// it is, where encoding/json would validate and compact it once more — on a rule's
// answer, a tenth of the encoding it costs. The keys are RequestEvent's, in
// encoding/json's (sorted) order; TestRequestEventsCarryTheParamsAsEncoded holds the
// two to the same bytes.
func ownRequestEventData(eid string, params map[string]any, raw json.RawMessage) ([]byte, error) {
	id, err := json.Marshal(eid)
	if err != nil {
		return nil, err
	}
	typ, err := json.Marshal(EventRequest)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(raw)+len(id)+96)
	b = append(append(b, `{"elicitation_id":`...), id...)
	b = append(append(b, `,"method":"elicitation/create","params":`...), raw...)
	if r, ok := params["risk"]; ok {
		rb, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"risk":`...), rb...)
	}
	b = append(append(b, `,"type":`...), typ...)
	return append(b, '}'), nil
}

// publishResolved announces that prompt eid of sess ended, on sess and every ancestor.
func (s *Service) publishResolved(sess *models.Session, eid string) {
	evs, chain := resolvedEvents(sess, eid)
	s.bus.Publish(chain, evs)
}

// resolvedEvents are the events saying prompt eid of sess ended, for sess and every
// ancestor, and those sessions.
func resolvedEvents(sess *models.Session, eid string) ([]stream.Event, []string) {
	data, _ := json.Marshal(map[string]string{"type": EventResolved, "elicitation_id": eid})
	ev := stream.Event{Type: EventResolved, Data: data, ElicitationID: eid, Stage: models.LoggedResolved}
	chain := append(sess.AncestorIDs(), sess.ID)
	evs := make([]stream.Event, len(chain))
	for i := range evs {
		evs[i] = ev
	}
	return evs, chain
}

// PendingFor lists the pending prompts of sess and all its descendants, oldest first,
// each as the request event seen from sess.
func (s *Service) PendingFor(ctx context.Context, sess *models.Session) ([]map[string]any, []models.Elicitation, error) {
	rows, err := s.store.PendingInSubtree(ctx, sess.Path)
	if err != nil {
		return nil, nil, err
	}
	out := make([]map[string]any, 0, len(rows))
	for i := range rows {
		out = append(out, RowRequestEvent(&rows[i], sess.ID))
	}
	return out, rows, nil
}

// PendingParkedWith is PendingFor narrowed to the prompts parked with API token
// tokenID — what a hooks-only token may read; "" narrows nothing.
func (s *Service) PendingParkedWith(ctx context.Context, sess *models.Session, tokenID string) ([]map[string]any, []models.Elicitation, error) {
	events, rows, err := s.PendingFor(ctx, sess)
	if err != nil || tokenID == "" {
		return events, rows, err
	}
	var keptEvents []map[string]any
	var kept []models.Elicitation
	for i := range rows {
		if rows[i].ParkedWith(tokenID) {
			keptEvents, kept = append(keptEvents, events[i]), append(kept, rows[i])
		}
	}
	return keptEvents, kept, nil
}

// GetParkedWith is GetInSession for a caller who may read only the prompts parked with
// API token tokenID (a hooks-only token): another prompt is not found, exactly like an
// unknown one. "" narrows nothing.
func (s *Service) GetParkedWith(ctx context.Context, sid, eid, tokenID string) (*models.Elicitation, error) {
	row, err := s.GetInSession(ctx, sid, eid)
	if err != nil || tokenID == "" {
		return row, err
	}
	if !row.ParkedWith(tokenID) {
		return nil, errs.ErrNotFound
	}
	return row, nil
}

// Get loads a prompt by id.
func (s *Service) Get(ctx context.Context, eid string) (*models.Elicitation, error) {
	return s.store.GetElicitation(ctx, eid)
}

// GetInSession loads prompt eid as seen from session sid: a prompt of another session
// is not found there, like one that does not exist (errs.ErrNotFound), so no route can
// be used to read or act on another session's prompt.
func (s *Service) GetInSession(ctx context.Context, sid, eid string) (*models.Elicitation, error) {
	row, err := s.store.GetElicitation(ctx, eid)
	if err == nil && row.SessionID != sid {
		return nil, errs.ErrNotFound
	}
	return row, err
}

// Publish sends an arbitrary event on a session and its ancestors (interrupts and the like).
func (s *Service) Publish(sess *models.Session, typ string, data []byte) {
	chain := append(sess.AncestorIDs(), sess.ID)
	evs := make([]stream.Event, len(chain))
	for i := range evs {
		evs[i] = stream.Event{Type: typ, Data: data}
	}
	s.bus.Publish(chain, evs)
}

// Parked reports how many requests wait right now.
func (s *Service) Parked() int { return s.waiters.total() }
