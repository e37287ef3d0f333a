package push_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/notify/push"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/pushtest"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestPushEndToEnd: a person with Web Push on and one subscribed device gets the
// question as an encrypted push with Approve and Reject; the Approve link (as the
// service worker posts it: no cookie, Accept: application/json) decides the prompt and
// wakes the parked hook; the outcome follows under the same tag and topic. A device
// whose push service answers 410 is forgotten.
func TestPushEndToEnd(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--notify-allow-private",
			"--notify-retry-base", "200ms", "--notify-send-timeout", "2s")
		keys, err := push.EnsureKeys(context.Background(), srv.App.Store)
		if err != nil {
			t.Fatal(err)
		}
		svc := pushtest.NewService(t)
		svc.ExpectVAPIDKey(keys.Public)
		alice := srv.Client("alice@example.com")
		if r := alice.Do(t, http.MethodPut, "/v1/me/notifications", map[string]any{"push": map[string]any{"enabled": true}}); r.Status != http.StatusOK {
			t.Fatalf("settings: %d %s", r.Status, r.Body)
		}
		sub := svc.NewSubscription()
		if r := alice.Do(t, http.MethodPost, "/v1/me/push-subscriptions", map[string]any{"endpoint": sub.Endpoint,
			"keys": map[string]any{"p256dh": sub.P256dh, "auth": sub.Auth}}); r.Status != http.StatusCreated {
			t.Fatalf("subscribe: %d %s", r.Status, r.Body)
		}
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "deploy")
		parked, eid, _ := alice.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "make deploy"})

		got := svc.Next(t, wait)
		var p push.Payload
		if err := got.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Kind != "created" || p.Tag != eid || p.URL != srv.URL+"/approve/"+sid+"/"+eid || !strings.Contains(p.Title+p.Body, "Bash") ||
			len(p.Actions) != 2 || p.Actions[0].Action != "accept" || got.Topic != push.Topic(eid) || got.Urgency != "high" {
			t.Fatalf("created push %s (topic %q urgency %q)", got.Raw, got.Topic, got.Urgency)
		}

		req, _ := http.NewRequest(http.MethodPost, p.Actions[0].URL, nil)
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var answer struct{ Outcome, Message string }
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &answer) != nil || answer.Message == "" {
			t.Fatalf("approve link: %d %s", resp.StatusCode, body)
		}
		if r := parked.Wait(t, wait); !strings.Contains(string(r.Body), `"behavior":"allow"`) {
			t.Fatalf("parked hook: %d %s", r.Status, r.Body)
		}

		got = svc.Next(t, wait)
		p = push.Payload{}
		if err := got.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Kind != "resolved" || p.Tag != eid || len(p.Actions) != 0 || !strings.HasPrefix(p.Outcome, "Approved by alice@example.com") ||
			got.Topic != push.Topic(eid) {
			t.Fatalf("resolved push %s (topic %q)", got.Raw, got.Topic)
		}

		// The browser unsubscribed: the next push is answered 410 and the device goes.
		svc.Unsubscribe(sub)
		parked2, _, _ := alice.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "make test"})
		defer parked2.Cancel()
		deadline := time.Now().Add(wait)
		for {
			rows, err := srv.App.Store.ListPushSubscriptions(context.Background(), "alice@example.com")
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("a gone subscription was kept: %+v", rows)
			}
			time.Sleep(20 * time.Millisecond) // polling a status, not synchronizing
		}
	})
}
