// Package waiting forwards an agent's notice that it waits for its person (Claude
// Code's Notification hook: its own permission dialog, an idle prompt) to that person's
// notification channels, so a wait Gatehouse does not hold reaches the phone too.
//
// Two things keep it quiet. A session that has a prompt pending in Gatehouse is
// skipped: the person was told of that prompt, with its buttons, and the agent's
// notice is most likely about the same wait. And notices are coalesced: at most one
// per session per Every. The last-sent times are kept in memory, per replica: a
// duplicate from a second replica costs one more buzz, not a wrong decision, and it
// spares a database write on every notice.
package waiting

import (
	"context"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Sender sends a notice to a person's channels (notify.Service).
type Sender interface {
	SendWaiting(ctx context.Context, user string, w notify.Waiting) ([]notify.TestResult, error)
}

// Pending counts pending prompts in session trees (internal/store).
type Pending interface {
	CountPendingInSubtrees(ctx context.Context, ids []string) (map[string]int, error)
}

// DefaultEvery is the shortest time between two notices of one session.
const DefaultEvery = time.Minute

// Service forwards notices.
type Service struct {
	send    Sender
	pending Pending
	every   time.Duration
	now     func() time.Time
	log     *slog.Logger

	mu   sync.Mutex
	last map[string]time.Time // session id → when its last notice was sent
}

// New returns a Service sending through send at most once per session per every
// (DefaultEvery when zero or less).
func New(send Sender, pending Pending, every time.Duration, now func() time.Time, log *slog.Logger) *Service {
	if every <= 0 {
		every = DefaultEvery
	}
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	return &Service{send: send, pending: pending, every: every, now: now, log: log, last: map[string]time.Time{}}
}

// Outcome says what became of a notice.
type Outcome string

// Outcomes of Forward.
const (
	Sent      Outcome = "sent"
	Coalesced Outcome = "coalesced" // another notice of the session went out within Every
	Held      Outcome = "held"      // the session has a prompt pending in Gatehouse
	NoSender  Outcome = "no_sender" // notifications are not configured
)

// Forward sends user the agent's notice n about sess (vendor: the agent's name for
// people; cwd: where it works), unless it is coalesced or Gatehouse holds a prompt of
// the session. Sending happens in the background: the agent is answered at once and
// a slow receiver never holds its hook.
func (s *Service) Forward(ctx context.Context, user string, sess *models.Session, n models.HookNotice, vendor, cwd string) (Outcome, error) {
	if s == nil || s.send == nil {
		return NoSender, nil
	}
	root := sess.RootID
	if root == "" {
		root = sess.ID
	}
	counts, err := s.pending.CountPendingInSubtrees(ctx, []string{root})
	if err != nil {
		return "", err
	}
	if counts[root] > 0 {
		return Held, nil
	}
	if !s.claim(root) {
		return Coalesced, nil
	}
	w := notify.Waiting{SessionID: root, SessionTitle: sess.Title, Vendor: vendor, Project: project(cwd),
		Message: strings.TrimSpace(n.Message), Cwd: cwd}
	if w.Message == "" {
		w.Message = strings.TrimSpace(n.Title)
	}
	go func() {
		if _, err := s.send.SendWaiting(context.WithoutCancel(ctx), user, w); err != nil {
			s.log.Warn("sending a waiting notice failed", "session_id", root, "err", err)
		}
	}()
	return Sent, nil
}

// claim records a notice of session now, unless one went out within Every; it reports
// whether this one may go. Entries older than Every are dropped on the way, so the
// map holds only sessions heard from lately.
func (s *Service) claim(session string) bool {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.last[session]; ok && now.Sub(t) < s.every {
		return false
	}
	for id, t := range s.last {
		if now.Sub(t) >= s.every {
			delete(s.last, id)
		}
	}
	s.last[session] = now
	return true
}

// project names where an agent works: its directory's last element.
func project(cwd string) string {
	cwd = strings.TrimRight(strings.TrimSpace(cwd), "/")
	if cwd == "" {
		return ""
	}
	return path.Base(cwd)
}
