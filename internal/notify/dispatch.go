package notify

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

const (
	// claimBatch bounds the deliveries one claim takes; batchesInFlight how many
	// claimed batches send at once, so one hung receiver does not hold up the rest.
	claimBatch      = 256
	batchesInFlight = 4
	// sendersPerBatch bounds concurrent sends within a batch.
	sendersPerBatch = 64
	// pollEvery is how often the dispatcher looks for work nobody nudged it about:
	// delayed and retried deliveries, reminders, prompts parked on other replicas.
	pollEvery = time.Second
	// requeueAfter is how soon a follow-up waiting for its announcement is tried again.
	requeueAfter = 250 * time.Millisecond
	// kickDelay is how long the dispatcher lets a nudge's own request finish first.
	kickDelay = 5 * time.Millisecond
	// keepDone is how long finished deliveries stay visible.
	keepDone = 7 * 24 * time.Hour
)

// Kick nudges the dispatcher: a prompt was parked or decided. It never blocks, so it
// may be called on the park and resolve paths.
func (s *Service) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run plans and sends notifications until ctx ends. Every replica runs it.
func (s *Service) Run(ctx context.Context) {
	slots := make(chan struct{}, batchesInFlight)
	// Batches in flight finish (each send is bounded by the send timeout) before Run
	// returns: their results are written to the database, and a claim left to lapse
	// would be sent again by another replica.
	var batches sync.WaitGroup
	defer batches.Wait()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	lastPrune := time.Time{}
	for {
		if _, err := s.planAll(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("notifications: plan", "err", err)
		}
		s.claimAndSend(ctx, slots, &batches)
		if now := s.o.Now(); now.Sub(lastPrune) > 10*time.Minute {
			lastPrune = now
			if err := s.store.PruneActionNonces(ctx, now); err != nil && ctx.Err() == nil {
				s.log.Error("notifications: prune spent action links", "err", err)
			}
			if err := s.store.PruneNotifications(ctx, now.Add(-keepDone)); err != nil && ctx.Err() == nil {
				s.log.Error("notifications: prune finished deliveries", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
			// A nudge comes from a park or a verdict whose own request is still being
			// answered: let that finish first (the agent waits on it; a person's
			// phone will not notice the delay), and let a burst coalesce.
			select {
			case <-ctx.Done():
				return
			case <-time.After(kickDelay):
			}
		case <-tick.C:
		}
	}
}

// claimAndSend claims due deliveries while a batch slot is free, each batch sent in
// the background.
func (s *Service) claimAndSend(ctx context.Context, slots chan struct{}, batches *sync.WaitGroup) {
	for {
		select {
		case slots <- struct{}{}:
		default:
			return // every slot busy; a finishing batch kicks
		}
		now := s.o.Now()
		rows, err := s.store.ClaimDeliveries(ctx, now, now.Add(s.claimFor()), claimBatch)
		if err != nil || len(rows) == 0 {
			<-slots
			if err != nil && ctx.Err() == nil {
				s.log.Error("notifications: claim", "err", err)
			}
			return
		}
		batches.Go(func() {
			s.sendBatch(context.WithoutCancel(ctx), rows)
			<-slots
			s.Kick()
		})
		if len(rows) < claimBatch {
			return
		}
	}
}

// claimFor is how long a claim lasts: past any send of its batch, so only a sender
// that died leaves it to lapse.
func (s *Service) claimFor() time.Duration { return 2*s.o.SendTimeout + 5*time.Second }

// sendBatch sends claimed deliveries concurrently and records how each went.
func (s *Service) sendBatch(ctx context.Context, rows []models.Notification) {
	c, err := s.loadContext(ctx, rows)
	if err != nil {
		s.log.Error("notifications: load prompts", "err", err)
		return // the claims lapse and the deliveries are tried again
	}
	results := make([]models.DeliveryResult, len(rows))
	sem := make(chan struct{}, sendersPerBatch)
	var wg sync.WaitGroup
	for i := range rows {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i] = s.deliver(ctx, &rows[i], c)
		}()
	}
	wg.Wait()
	if err := s.store.FinishDeliveries(ctx, s.o.Now(), results); err != nil {
		s.log.Error("notifications: record results", "err", err)
	}
	for _, r := range results {
		if r.Requeue { // a follow-up put off for its announcement: look again soon, not at the next poll
			time.AfterFunc(requeueAfter, s.Kick)
			break
		}
	}
}

// batchContext is what a batch's messages are built from, loaded once per batch.
type batchContext struct {
	prompts  map[string]*models.Elicitation
	sessions map[string]*models.Session
	agents   map[string]string
	// created maps a prompt, person, channel and target to its announcement.
	created  map[string]*models.Notification
	settings sync.Map // user → *Settings (loaded on first use)
}

func createdKey(n *models.Notification) string {
	return n.ElicitationID + "\x00" + n.User + "\x00" + n.Channel + "\x00" + n.Target
}

func (s *Service) loadContext(ctx context.Context, rows []models.Notification) (*batchContext, error) {
	c := &batchContext{prompts: map[string]*models.Elicitation{}, sessions: map[string]*models.Session{},
		agents: map[string]string{}, created: map[string]*models.Notification{}}
	var eids, followed []string
	seen := map[string]bool{}
	for _, n := range rows {
		if !seen[n.ElicitationID] {
			seen[n.ElicitationID] = true
			eids = append(eids, n.ElicitationID)
		}
		if n.Kind == KindResolved {
			followed = append(followed, n.ElicitationID)
		}
	}
	prompts, err := s.store.ElicitationsByID(ctx, eids)
	if err != nil {
		return nil, err
	}
	for i := range prompts {
		e := &prompts[i]
		c.prompts[e.ID] = e
		if c.sessions[e.SessionID] == nil {
			sess, err := s.store.GetSession(ctx, e.SessionID)
			if err != nil {
				return nil, err
			}
			c.sessions[e.SessionID] = sess
			if _, ok := c.agents[sess.AgentID]; !ok && s.agentName != nil {
				c.agents[sess.AgentID] = s.agentName(ctx, sess.AgentID)
			}
		}
	}
	if len(followed) > 0 {
		have, err := s.store.NotificationsOfMany(ctx, followed)
		if err != nil {
			return nil, err
		}
		for i := range have {
			if have[i].Kind == KindCreated {
				c.created[createdKey(&have[i])] = &have[i]
			}
		}
	}
	return c, nil
}

// deliver sends one delivery and says how it went.
func (s *Service) deliver(ctx context.Context, n *models.Notification, c *batchContext) models.DeliveryResult {
	r := models.DeliveryResult{ID: n.ID}
	skip := func(why string) models.DeliveryResult {
		r.State, r.Error = models.DeliverySkipped, why
		return r
	}
	e := c.prompts[n.ElicitationID]
	if e == nil {
		return skip("the request no longer exists")
	}
	sess := c.sessions[e.SessionID]
	m := &Message{DeliveryID: "ntf_" + strconv.FormatInt(n.ID, 10) + "_" + e.ID, Kind: n.Kind, Recipient: n.User,
		ApproveURL: s.o.PublicURL + "/approve/" + e.SessionID + "/" + e.ID}
	if n.Kind == KindResolved {
		created := c.created[createdKey(n)]
		switch {
		case created == nil || created.State == models.DeliverySkipped || created.State == models.DeliveryFailed:
			return skip("the request was never announced here")
		case created.State == models.DeliveryPending:
			// The announcement is still being sent or retried: follow it, don't pass it.
			r.State, r.RetryAt, r.Requeue = models.DeliveryPending, s.o.Now().Add(requeueAfter), true
			r.Error = "waiting for the announcement to be sent"
			return r
		}
		m.Ref = created.Ref
		m.Outcome = outcomeOf(e)
	} else if !e.IsPending() {
		return skip("answered before it was sent")
	}
	// Whoever lost access since the prompt was planned is told nothing more about it.
	if lvl, err := s.store.GrantLevel(ctx, sess.RootID, n.User); err != nil {
		return s.failed(n, r, err)
	} else if lvl < editLevel {
		return skip("no longer has edit access")
	}
	st, err := c.settingsOf(ctx, s, n.User)
	if err != nil {
		return s.failed(n, r, err)
	}
	ch := s.channels[n.Channel]
	if ch == nil {
		return skip("channel not configured on this server")
	}
	if m.Target, err = s.targetOf(ctx, n, st); err != nil {
		return skip(err.Error())
	}
	m.Prompt = summarize(e, sess, c.agents[sess.AgentID])
	if n.Kind != KindResolved && m.Prompt.Answerable && e.IsPending() {
		m.AcceptToken, m.DeclineToken = s.links.issue(e, n.User, n.Channel, models.ActionAccept), s.links.issue(e, n.User, n.Channel, models.ActionDecline)
		m.AcceptURL, m.DeclineURL = s.o.PublicURL+"/act/"+m.AcceptToken, s.o.PublicURL+"/act/"+m.DeclineToken
	}
	sendCtx, cancel := context.WithTimeout(ctx, s.o.SendTimeout)
	ref, err := ch.Send(sendCtx, m)
	cancel()
	if err != nil {
		if n.Channel == ChannelPush && IsPermanent(err) {
			s.dropDevice(ctx, n)
		}
		return s.failed(n, r, err)
	}
	r.State, r.Ref = models.DeliveryDelivered, ref
	return r
}

// editLevel is auth.Edit (notify does not import the HTTP-facing auth package).
const editLevel = 2

// failed records a failed attempt: retried with backoff, unless it was the last
// attempt or the error is permanent.
func (s *Service) failed(n *models.Notification, r models.DeliveryResult, err error) models.DeliveryResult {
	r.Error = bounded(err.Error(), 300)
	if IsPermanent(err) || n.Attempts >= s.o.Attempts {
		r.State = models.DeliveryFailed
		s.log.Warn("notification failed", "id", n.ID, "channel", n.Channel, "user", n.User, "attempts", n.Attempts, "err", r.Error)
		return r
	}
	r.State, r.RetryAt = models.DeliveryPending, s.o.Now().Add(s.backoff(n.Attempts))
	return r
}

// backoff is the wait after the attempt-th failure: RetryBase doubling per attempt, up
// to RetryMax, less up to a tenth at random so a receiver coming back is not hit by
// every retry at once.
func (s *Service) backoff(attempt int) time.Duration {
	d := s.o.RetryBase
	for i := 1; i < attempt && d < s.o.RetryMax; i++ {
		d *= 2
	}
	d = min(d, s.o.RetryMax)
	return d - time.Duration(rand.Int64N(int64(d)/10+1))
}

func bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func outcomeOf(e *models.Elicitation) *Outcome {
	o := &Outcome{Status: e.Status}
	if e.Action != nil {
		o.Action = *e.Action
	}
	if e.ResolvedBy != nil {
		o.ResolvedBy = *e.ResolvedBy
	}
	if e.ResolvedVia != nil {
		o.ResolvedVia = *e.ResolvedVia
	}
	if e.ResolvedAt != nil {
		o.ResolvedAt = *e.ResolvedAt
	}
	return o
}

func (c *batchContext) settingsOf(ctx context.Context, s *Service, user string) (*Settings, error) {
	if v, ok := c.settings.Load(user); ok {
		return v.(*Settings), nil
	}
	st, err := s.stored(ctx, user)
	if err != nil {
		return nil, err
	}
	c.settings.Store(user, st)
	return st, nil
}

// errChannelOff is why a delivery to a channel the person turned off is skipped.
var errChannelOff = errors.New("channel turned off in the person's settings")

// targetOf reads where a delivery goes from the person's current settings: a URL
// changed since planning applies, a channel turned off is skipped.
func (s *Service) targetOf(ctx context.Context, n *models.Notification, st *Settings) (Target, error) {
	t := Target{Email: n.User}
	switch n.Channel {
	case ChannelWebhook:
		if !st.WebhookOn() {
			return t, errChannelOff
		}
		t.URL, t.Secret = st.Webhook.URL, st.Webhook.Secret
	case ChannelNtfy:
		if !st.NtfyOn() {
			return t, errChannelOff
		}
		t.URL, t.Token = st.Ntfy.URL, st.Ntfy.Token
	case ChannelSlack:
		if !st.SlackOn() {
			return t, errChannelOff
		}
	case ChannelPush:
		if !st.PushOn() && n.Kind != KindResolved {
			return t, errChannelOff
		}
		subs, err := s.store.ListPushSubscriptions(ctx, n.User)
		if err != nil {
			return t, err
		}
		for _, sub := range subs {
			if sub.ID == n.Target {
				t.Push = &PushSubscription{ID: sub.ID, Endpoint: sub.Endpoint, P256dh: sub.P256dh, Auth: sub.Auth}
				return t, nil
			}
		}
		return t, errors.New("device no longer subscribed")
	default:
		return t, fmt.Errorf("unknown channel %q", n.Channel)
	}
	return t, nil
}

// dropDevice forgets a push subscription its push service says is gone (404/410).
func (s *Service) dropDevice(ctx context.Context, n *models.Notification) {
	if _, err := s.store.DeletePushSubscription(ctx, n.User, n.Target); err != nil {
		s.log.Error("notifications: drop gone push subscription", "id", n.Target, "err", err)
	}
}
