package notify

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// planBatch bounds the prompts one planning transaction takes.
const planBatch = 100

// planAll plans every prompt behind its stage; it returns how many it planned.
func (s *Service) planAll(ctx context.Context) (int, error) {
	total := 0
	for {
		rows, err := s.store.Unplanned(ctx, planBatch)
		if err != nil || len(rows) == 0 {
			return total, err
		}
		known := newPlanReads()
		announce := map[string]models.OutboxPlan{}
		var decided []models.Elicitation
		for i := range rows {
			if rows[i].Status != models.StatusPending {
				decided = append(decided, rows[i])
				continue
			}
			p, err := s.announce(ctx, &rows[i], known)
			if err != nil {
				return total, err
			}
			announce[rows[i].ID] = p
		}
		n, err := s.store.ApplyOutboxPlans(ctx, announce, decided, s.followUp)
		total += n
		if err != nil || len(rows) < planBatch || n == 0 {
			return total, err
		}
	}
}

// followUp plans a decided prompt: a "resolved" follow-up wherever its announcement
// was (or may still be) delivered, so every channel that showed the question shows
// the answer; announcements and reminders nobody has tried yet are skipped. A prompt
// decided before anyone was told gets nothing.
func (s *Service) followUp(e *models.Elicitation, have []models.Notification) models.OutboxPlan {
	now := s.o.Now()
	p := models.OutboxPlan{Stage: models.NotifiedAll, SkipWhy: "answered before it was sent"}
	for _, n := range have {
		switch {
		case n.Kind == KindCreated && (n.State == models.DeliveryDelivered || n.State == models.DeliveryPending && n.Attempts > 0):
			p.Add = append(p.Add, models.Notification{ElicitationID: e.ID, User: n.User, Channel: n.Channel,
				Target: n.Target, Kind: KindResolved, State: models.DeliveryPending, DueAt: now, CreatedAt: now})
		case n.State == models.DeliveryPending && n.Attempts == 0:
			p.Skip = append(p.Skip, n.ID) // never tried: nobody has seen it
		}
	}
	return p
}

// planReads holds what one batch's planning has read: the prompts of a batch are
// mostly one tree's (an agent asking again and again), and each would otherwise read
// the same editors, settings and devices anew — several queries a prompt, a third of
// what parking a burst of prompts allocated. A batch plans from one reading of them; a
// change made meanwhile applies from the next batch, as it would had the batch been
// planned a moment earlier. (Sessions need no such memo: the store caches them.)
type planReads struct {
	editors map[string][]string // root → who may decide there
	people  map[string]person   // user → their settings and targets
}

func newPlanReads() *planReads {
	return &planReads{editors: map[string][]string{}, people: map[string]person{}}
}

// person is what planning needs of one person.
type person struct {
	settings *Settings
	targets  []target
}

// editorsOf lists who may decide in the tree rooted at root.
func (s *Service) editorsOf(ctx context.Context, known *planReads, root string) ([]string, error) {
	if people, ok := known.editors[root]; ok {
		return people, nil
	}
	people, err := s.store.EditorsOf(ctx, root)
	if err != nil {
		return nil, err
	}
	known.editors[root] = people
	return people, nil
}

// personOf reads user's settings and where their notifications go.
func (s *Service) personOf(ctx context.Context, known *planReads, user string) (person, error) {
	if p, ok := known.people[user]; ok {
		return p, nil
	}
	st, err := s.stored(ctx, user)
	if err != nil {
		return person{}, err
	}
	targets, err := s.targetsOf(ctx, user, st)
	if err != nil {
		return person{}, err
	}
	p := person{settings: st, targets: targets}
	known.people[user] = p
	return p, nil
}

// announce plans a pending prompt's "created" deliveries: one per person with edit
// access, channel and device, timed by the person's delay and quiet hours, and a
// reminder before it expires if they asked for one.
func (s *Service) announce(ctx context.Context, e *models.Elicitation, known *planReads) (models.OutboxPlan, error) {
	now := s.o.Now()
	p := models.OutboxPlan{Stage: models.NotifiedCreated}
	sess, err := s.store.GetSession(ctx, e.SessionID)
	if err != nil {
		return p, err
	}
	people, err := s.editorsOf(ctx, known, sess.RootID)
	if err != nil {
		return p, err
	}
	for _, user := range people {
		who, err := s.personOf(ctx, known, user)
		if err != nil {
			return p, err
		}
		st, targets := who.settings, who.targets
		if len(targets) == 0 {
			continue
		}
		due := st.QuietHours.after(e.CreatedAt.Add(time.Duration(st.DelaySeconds) * time.Second))
		var remind time.Time
		if st.ReminderSeconds > 0 {
			r := e.ExpiresAt.Add(-time.Duration(st.ReminderSeconds) * time.Second)
			if r = st.QuietHours.after(r); r.After(due) && r.Before(e.ExpiresAt) {
				remind = r
			}
		}
		for _, t := range targets {
			n := models.Notification{ElicitationID: e.ID, User: user, Channel: t.channel, Target: t.target,
				Kind: KindCreated, State: models.DeliveryPending, DueAt: due, CreatedAt: now}
			p.Add = append(p.Add, n)
			if !remind.IsZero() {
				n.Kind, n.DueAt = KindReminder, remind
				p.Add = append(p.Add, n)
			}
		}
	}
	if len(p.Add) == 0 {
		// Nobody to tell: nothing to follow up either, so the prompt is done with in
		// one write rather than two.
		p.Stage = models.NotifiedAll
	}
	return p, nil
}

type target struct{ channel, target string }

// targetsOf lists where a person's notifications go: each channel that is on in
// their settings and configured here, and for Web Push each subscribed device.
func (s *Service) targetsOf(ctx context.Context, user string, st *Settings) ([]target, error) {
	var out []target
	if st.PushOn() && s.channels[ChannelPush] != nil {
		subs, err := s.store.ListPushSubscriptions(ctx, user)
		if err != nil {
			return nil, err
		}
		for _, sub := range subs {
			out = append(out, target{ChannelPush, sub.ID})
		}
	}
	for _, c := range []struct {
		on   bool
		name string
	}{{st.NtfyOn(), ChannelNtfy}, {st.SlackOn(), ChannelSlack}, {st.WebhookOn(), ChannelWebhook}} {
		if c.on && s.channels[c.name] != nil {
			out = append(out, target{c.name, ""})
		}
	}
	return out, nil
}

// after returns t, or the end of the quiet hours t falls in (nil q: t).
func (q *QuietHours) after(t time.Time) time.Time {
	if q == nil {
		return t
	}
	loc, err := time.LoadLocation(q.TimeZone)
	if err != nil {
		return t
	}
	start, err1 := clockOf(q.Start)
	end, err2 := clockOf(q.End)
	if err1 != nil || err2 != nil {
		return t
	}
	lt := t.In(loc)
	m := lt.Hour()*60 + lt.Minute()
	inside := start < end && m >= start && m < end || start > end && (m >= start || m < end)
	if !inside {
		return t
	}
	day := time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, loc)
	if start > end && m >= start { // before midnight: the window ends tomorrow
		day = day.AddDate(0, 0, 1)
	}
	return day.Add(time.Duration(end) * time.Minute).UTC()
}
