package notify

import (
	"context"
	"time"
)

// Waiting is an agent's notice that it waits for its person, outside Gatehouse — its
// own permission dialog, an idle prompt (Claude Code's Notification hook) — sent as a
// KindWaiting message. It names the session, never a prompt: there is nothing in
// Gatehouse to approve, so it carries no action links.
type Waiting struct {
	SessionID    string
	SessionTitle string
	// Vendor is the agent's name for people ("Claude Code"); Project where it works
	// (its directory's name); Message the agent's own words.
	Vendor, Project, Message string
	Cwd                      string
}

// SendWaiting sends w, now and once, to every place user's notifications go, linking
// the session's page. Like SendTest it bypasses the outbox: a notice of a wait is
// worth one try, not a retry after the wait is over.
func (s *Service) SendWaiting(ctx context.Context, user string, w Waiting) ([]TestResult, error) {
	now := s.o.Now()
	title := w.Vendor + " is waiting for you"
	if w.Project != "" {
		title += " in " + w.Project
	}
	out, err := s.sendNow(ctx, user, "ntf_wait_", func() *Message {
		return &Message{Kind: KindWaiting, ApproveURL: s.o.PublicURL + "/sessions/" + w.SessionID,
			Prompt: Summary{SessionID: w.SessionID, SessionTitle: w.SessionTitle, Vendor: w.Vendor,
				Origin: OriginWaiting, Title: title, Detail: bounded(w.Message, 500), Cwd: w.Cwd,
				CreatedAt: now, ExpiresAt: now.Add(time.Hour)}}
	})
	for _, r := range out {
		s.log.Info("waiting notice", "user", user, "session_id", w.SessionID, "channel", r.Channel, "sent", r.Sent(), "err", r.Err)
	}
	return out, err
}

// OriginWaiting is the origin a KindWaiting message names (a webhook's data.origin).
const OriginWaiting = "agent_waiting"
