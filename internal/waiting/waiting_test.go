package waiting_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/webhooktest"
	"github.com/gatehouse-dev/gatehouse/internal/waiting"
	"github.com/gatehouse-dev/gatehouse/models"
)

// sender records the notices sent, one on sent per notice.
type sender struct {
	mu   sync.Mutex
	got  []notify.Waiting
	sent chan struct{}
}

func (s *sender) SendWaiting(_ context.Context, _ string, w notify.Waiting) ([]notify.TestResult, error) {
	s.mu.Lock()
	s.got = append(s.got, w)
	s.mu.Unlock()
	s.sent <- struct{}{}
	return nil, nil
}

// pending reports n pending prompts for every session.
type pending struct{ n int }

func (p *pending) CountPendingInSubtrees(_ context.Context, ids []string) (map[string]int, error) {
	out := map[string]int{}
	for _, id := range ids {
		out[id] = p.n
	}
	return out, nil
}

// TestNoticesAreCoalescedAndHeld: one notice per session per minute (another session
// is not held back by it), none while Gatehouse holds a prompt of the session, and
// the next once the minute has passed.
func TestNoticesAreCoalescedAndHeld(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	snd := &sender{sent: make(chan struct{}, 8)}
	pend := &pending{}
	svc := waiting.New(snd, pend, time.Minute, clock, nil)
	ctx := context.Background()
	a := &models.Session{ID: "conv_a", RootID: "conv_a", Title: "Claude Code 7d1f0a52 in /work/shop"}
	b := &models.Session{ID: "conv_b", RootID: "conv_b"}
	n := models.HookNotice{Message: "Claude needs your permission to use Bash", Type: "permission_prompt"}
	forward := func(s *models.Session, want waiting.Outcome) {
		t.Helper()
		if got, err := svc.Forward(ctx, "alice", s, n, "Claude Code", "/work/shop"); err != nil || got != want {
			t.Fatalf("Forward(%s) = %s, %v; want %s", s.ID, got, err, want)
		}
		if want == waiting.Sent {
			<-snd.sent
		}
	}
	forward(a, waiting.Sent)
	forward(a, waiting.Coalesced)
	forward(b, waiting.Sent)
	now = now.Add(time.Minute)
	pend.n = 1
	forward(a, waiting.Held)
	pend.n = 0
	forward(a, waiting.Sent)
	if len(snd.got) != 3 || snd.got[0].Project != "shop" || snd.got[0].Message != n.Message || snd.got[0].Vendor != "Claude Code" {
		t.Fatalf("sent %+v", snd.got)
	}
}

// TestNotificationReachesTheWebhook: Claude Code's Notification hook, posted as the
// binary sends it, reaches the person's webhook (a real receiver verifying the
// signature) as "Claude Code is waiting for you in <project>" with the session's
// link; the hook is answered at once.
func TestNotificationReachesTheWebhook(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--notify-allow-private", "--public-url", "https://gatehouse.example")
		alice := srv.Client("alice@example.com")
		hook := webhooktest.New(t, "")
		if r := alice.Do(t, http.MethodPut, "/v1/me/notifications", map[string]any{"webhook": map[string]any{"url": hook.URL, "secret": hook.Secret}}); r.Status != http.StatusOK {
			t.Fatalf("settings: %d %s", r.Status, r.Body)
		}
		body := map[string]any{
			"session_id": "7d1f0a52-5b6e-4f8e-9a51-2f0f6c2b1c11", "transcript_path": "/home/dev/.claude/projects/shop/7d1f0a52.jsonl",
			"cwd": "/home/dev/shop", "permission_mode": "default", "hook_event_name": "Notification",
			"message": "Claude needs your permission to use Bash", "notification_type": "permission_prompt",
		}
		r := alice.Do(t, http.MethodPost, "/v1/hooks/claude", body)
		if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != `{"hookSpecificOutput":{"hookEventName":"Notification"}}` {
			t.Fatalf("Notification hook: %d %s", r.Status, r.Body)
		}
		d := hook.WaitFor(t, func(d webhooktest.Delivery) bool { return d.Data.Origin == notify.OriginWaiting }, 20*time.Second)
		if d.Data.Message != "Claude Code is waiting for you in shop" || d.Data.SessionID == "" ||
			d.Data.ApproveURL != "https://gatehouse.example/sessions/"+d.Data.SessionID || d.Data.ElicitationID != "" {
			t.Fatalf("webhook delivery %+v", d.Data)
		}
		if !strings.HasPrefix(d.ID, "ntf_wait_") {
			t.Fatalf("delivery id %q", d.ID)
		}
	})
}
