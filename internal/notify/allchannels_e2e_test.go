package notify_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/notify/push"
	notifyslack "github.com/gatehouse-dev/gatehouse/internal/notify/slack"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/ntfytest"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/pushtest"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/slacktest"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/webhooktest"
)

// One person on every channel: a prompt reaches each once, and a decision made
// elsewhere (the approval page's API here) reaches each as the outcome — the push
// under the question's tag, the Slack message updated in place, the ntfy question
// replaced, the webhook's elicitation.resolved.
func TestDecisionElsewhereUpdatesEveryChannel(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		const botToken, signing = "xoxb-test-token", "slack-signing-secret-for-tests"
		sl := slacktest.Start(t, botToken)
		sl.AddUser(slacktest.User{ID: "U1", Email: "alice@example.com", Name: "alice"})
		srv := startNotifying(t, db, "--slack-bot-token", botToken, "--slack-signing-secret", signing, "--slack-api-url", sl.URL)
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
		putSettings(t, alice, map[string]any{
			"push":    map[string]any{"enabled": true},
			"ntfy":    map[string]any{"url": ntfy.TopicURL(topic)},
			"slack":   map[string]any{},
			"webhook": map[string]any{"url": hook.URL, "secret": hook.Secret},
		})
		sub := ps.NewSubscription()
		if r := alice.Do(t, http.MethodPost, "/v1/me/push-subscriptions", map[string]any{"endpoint": sub.Endpoint,
			"keys": map[string]any{"p256dh": sub.P256dh, "auth": sub.Auth}}); r.Status != http.StatusCreated {
			t.Fatalf("subscribe: %d %s", r.Status, r.Body)
		}
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "every channel")
		parked, eid, _ := alice.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "kubectl delete ns staging"})

		// The question, once per channel.
		var q push.Payload
		if err := ps.Next(t, wait).Decode(&q); err != nil || q.Kind != "created" || q.Tag != eid {
			t.Fatalf("push question %+v (%v)", q, err)
		}
		posted := sl.WaitPosted(t, 1)[0]
		if !strings.Contains(string(posted.Blocks), "kubectl delete ns staging") {
			t.Fatalf("slack question %s", posted.Blocks)
		}
		ntfy.WaitFor(t, func(m ntfytest.Message) bool { return m.Topic == topic && strings.Contains(m.Message, "kubectl") }, wait)
		hook.WaitFor(t, func(d webhooktest.Delivery) bool {
			return d.Type == "elicitation.created" && d.Data.ElicitationID == eid
		}, wait)

		// Decided elsewhere.
		if r := alice.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "decline"}); r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		parked.Wait(t, wait)

		var a push.Payload
		if err := ps.Next(t, wait).Decode(&a); err != nil || a.Kind != "resolved" || a.Tag != eid || len(a.Actions) != 0 ||
			!strings.HasPrefix(a.Outcome, "Rejected by alice@example.com") {
			t.Fatalf("push outcome %+v (%v)", a, err)
		}
		up := sl.WaitUpdated(t, 1)[0]
		if up.Channel != posted.Channel || up.TS != posted.TS || !strings.Contains(string(up.Blocks), "Rejected by alice@example.com") ||
			strings.Contains(string(up.Blocks), notifyslack.ActionApprove) {
			t.Fatalf("slack message not updated in place: %s %s %s", up.Channel, up.TS, up.Blocks)
		}
		ntfy.WaitFor(t, func(m ntfytest.Message) bool {
			return m.Topic == topic && strings.Contains(m.Message, "Rejected by alice@example.com")
		}, wait)
		if shown := ntfy.Shown(topic); len(shown) != 1 || !strings.Contains(shown[0].Message, "Rejected") || len(shown[0].Actions) > 1 {
			t.Fatalf("ntfy still shows the question: %+v", shown)
		}
		d := hook.WaitFor(t, func(d webhooktest.Delivery) bool { return d.Type == "elicitation.resolved" }, wait)
		if d.Data.Action != "decline" || d.Data.ResolvedBy != "alice@example.com" || d.Data.ResolvedVia != "api" {
			t.Fatalf("webhook outcome %+v", d.Data)
		}
		ds := waitDeliveries(t, alice, sid, eid, func(ds []map[string]any) bool {
			for _, d := range ds {
				if d["state"] != "delivered" {
					return false
				}
			}
			return len(ds) == 8
		})
		if len(ds) != 8 {
			t.Fatalf("want a question and an outcome on each of 4 channels: %v", ds)
		}
	})
}
