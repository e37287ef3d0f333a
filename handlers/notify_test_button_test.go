package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehouse-dev/gatehouse/internal/notify/push"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/ntfytest"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/pushtest"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/slacktest"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/webhooktest"
)

// testButtonWait bounds waiting for a receiver: the button answers after sending, so
// the message is normally there at once.
const testButtonWait = 5 * time.Second

// pressTestButton opens the notification settings page and submits its test form.
func pressTestButton(t *testing.T, b *browserClient) *page {
	t.Helper()
	settings := b.get(t, "/settings/notifications")
	mustStatus(t, settings, http.StatusOK)
	form := settings.Doc.Find(`form[action="/settings/notifications/test"]`)
	csrf := form.Find(`input[name="csrf"]`).AttrOr("value", "")
	if form.Find(`[data-testid="send-test"]`).Length() != 1 || csrf == "" {
		t.Fatalf("the page has no test form with a CSRF token")
	}
	res := b.post(t, "/settings/notifications/test", url.Values{"csrf": {csrf}}, false)
	mustStatus(t, res, http.StatusOK)
	return res
}

// testResults maps each result's channel to its text.
func testResults(p *page) map[string]string {
	out := map[string]string{}
	p.testid("test-result").Each(func(_ int, s *goquery.Selection) {
		out[s.AttrOr("data-channel", "")] = strings.Join(strings.Fields(s.Text()), " ")
	})
	return out
}

// TestNotificationTestButton: the button sends one test message to every channel the
// person configured — a Web Push device, ntfy, Slack, a webhook — each real receiver
// gets it, and the page says where each went; it creates no prompt. Without the CSRF
// token nothing is sent.
func TestNotificationTestButton(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		const botToken = "xoxb-test-token"
		sl := slacktest.Start(t, botToken)
		sl.AddUser(slacktest.User{ID: "U1", Email: "alice@example.com", Name: "alice"})
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--notify-allow-private", "--notify-send-timeout", "2s",
			"--slack-bot-token", botToken, "--slack-signing-secret", "slack-signing-secret-for-tests", "--slack-api-url", sl.URL)
		keys, err := push.EnsureKeys(context.Background(), srv.App.Store)
		if err != nil {
			t.Fatal(err)
		}
		ps := pushtest.NewService(t)
		ps.ExpectVAPIDKey(keys.Public)
		hook := webhooktest.New(t, "")
		ntfy := ntfytest.New(t, "")
		topic := ntfytest.NewTopic()

		alice := srv.Client("alice@example.com")
		if r := alice.Do(t, http.MethodPut, "/v1/me/notifications", map[string]any{
			"push":    map[string]any{"enabled": true},
			"ntfy":    map[string]any{"url": ntfy.TopicURL(topic)},
			"slack":   map[string]any{},
			"webhook": map[string]any{"url": hook.URL, "secret": hook.Secret},
		}); r.Status != http.StatusOK {
			t.Fatalf("PUT /v1/me/notifications: %d %s", r.Status, r.Body)
		}
		sub := ps.NewSubscription()
		if r := alice.Do(t, http.MethodPost, "/v1/me/push-subscriptions", map[string]any{"endpoint": sub.Endpoint,
			"keys": map[string]any{"p256dh": sub.P256dh, "auth": sub.Auth}}); r.Status != http.StatusCreated {
			t.Fatalf("subscribe: %d %s", r.Status, r.Body)
		}

		b := newBrowser(t, srv, "alice@example.com")
		if refused := b.post(t, "/settings/notifications/test", url.Values{}, false); refused.Status != http.StatusForbidden {
			t.Fatalf("a post without the CSRF token: %d, want 403", refused.Status)
		}
		res := pressTestButton(t, b)

		var p push.Payload
		if err := ps.Next(t, testButtonWait).Decode(&p); err != nil || p.Kind != "test" || p.Title != "Gatehouse test notification" || len(p.Actions) != 0 {
			t.Fatalf("push %+v (%v)", p, err)
		}
		m := ntfy.WaitFor(t, func(m ntfytest.Message) bool { return m.Topic == topic }, testButtonWait)
		if m.Title != "Gatehouse test notification" || len(m.Actions) > 1 {
			t.Fatalf("ntfy %+v", m)
		}
		if posted := sl.WaitPosted(t, 1)[0]; !strings.Contains(string(posted.Blocks), "Gatehouse test notification") {
			t.Fatalf("slack %s", posted.Blocks)
		}
		d := hook.WaitFor(t, func(webhooktest.Delivery) bool { return true }, testButtonWait)
		if d.Type != "elicitation.created" || d.Data.Origin != "test" || d.Data.ElicitationID != "" {
			t.Fatalf("webhook %+v", d)
		}

		got := testResults(res)
		host := strings.TrimPrefix(hook.URL, "http://")
		if i := strings.IndexByte(host, '/'); i >= 0 {
			host = host[:i]
		}
		want := map[string]string{
			"ntfy":    "Sent to ntfy topic " + topic,
			"slack":   "Sent to Slack user alice@example.com",
			"webhook": "Sent to webhook on " + host,
			"push":    "Sent to ",
		}
		for ch, prefix := range want {
			if !strings.HasPrefix(got[ch], prefix) {
				t.Errorf("%s result %q, want it to start %q (all: %v)", ch, got[ch], prefix, got)
			}
		}
		if len(got) != 4 {
			t.Errorf("results %v, want one per channel", got)
		}
		if r := alice.Do(t, http.MethodGet, "/v1/sessions", nil); len(r.JSON(t)["sessions"].([]any)) != 0 {
			t.Fatalf("the test made a session: %s", r.Body)
		}
		if r := alice.Do(t, http.MethodGet, "/v1/history", nil); len(r.JSON(t)["entries"].([]any)) != 0 {
			t.Fatalf("the test made a prompt: %s", r.Body)
		}
	})
}

// TestNotificationTestButtonFailures: a channel that cannot be reached shows why it
// failed beside one that worked; with nothing configured the page says so and what to
// do.
func TestNotificationTestButtonFailures(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--notify-allow-private", "--notify-send-timeout", "2s")
		b := newBrowser(t, srv, "alice@example.com")
		none := pressTestButton(t, b)
		if none.testid("test-none").Length() != 1 || !strings.Contains(none.text("test-none"), "No channels configured yet") {
			t.Fatalf("no channels: %q", none.text("test-results"))
		}

		gone := webhooktest.New(t, "")
		gone.Close() // nothing listens there any more
		ntfy := ntfytest.New(t, "")
		topic := ntfytest.NewTopic()
		if r := srv.Client("alice@example.com").Do(t, http.MethodPut, "/v1/me/notifications", map[string]any{
			"ntfy":    map[string]any{"url": ntfy.TopicURL(topic)},
			"webhook": map[string]any{"url": gone.URL, "secret": gone.Secret},
		}); r.Status != http.StatusOK {
			t.Fatalf("PUT /v1/me/notifications: %d %s", r.Status, r.Body)
		}
		res := pressTestButton(t, b)
		got := testResults(res)
		if !strings.HasPrefix(got["webhook"], "Failed webhook on ") || !strings.Contains(got["webhook"], "refused") {
			t.Errorf("unreachable webhook: %q", got["webhook"])
		}
		if res.Doc.Find(`[data-channel="webhook"][data-sent]`).Length() != 0 {
			t.Errorf("the failed webhook is marked sent")
		}
		if !strings.HasPrefix(got["ntfy"], "Sent to ntfy topic "+topic) {
			t.Errorf("ntfy: %q", got["ntfy"])
		}
		ntfy.WaitFor(t, func(m ntfytest.Message) bool { return m.Topic == topic }, testButtonWait)
	})
}
