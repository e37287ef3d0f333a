package notify_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/ntfytest"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/webhooktest"
)

// wait is how long a test waits for an event it expects.
const wait = 20 * time.Second

// startNotifying runs a server in header mode that may notify loopback receivers.
func startNotifying(t *testing.T, db testserver.DB, flags ...string) *testserver.Server {
	t.Helper()
	return testserver.Start(t, db.NewURL(t), append([]string{"--auth", "header", "--notify-allow-private",
		"--notify-retry-base", "200ms", "--notify-send-timeout", "2s"}, flags...)...)
}

// putSettings stores a person's notification settings and returns the answer.
func putSettings(t *testing.T, c *testserver.Client, doc map[string]any) map[string]any {
	t.Helper()
	r := c.Do(t, http.MethodPut, "/v1/me/notifications", doc)
	if r.Status != http.StatusOK {
		t.Fatalf("PUT /v1/me/notifications: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)
}

func grant(t *testing.T, owner *testserver.Client, sid, user, level string) {
	t.Helper()
	r := owner.Do(t, http.MethodPut, "/v1/sessions/"+sid+"/permissions", map[string]any{"user": user, "level": level})
	if r.Status >= 300 {
		t.Fatalf("grant %s %s: %d %s", user, level, r.Status, r.Body)
	}
}

// deliveries reads a prompt's notification status through the API.
func deliveries(t *testing.T, c *testserver.Client, sid, eid string) []map[string]any {
	t.Helper()
	r := c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid+"/notifications", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("deliveries: %d %s", r.Status, r.Body)
	}
	var out struct {
		Notifications []map[string]any `json:"notifications"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Notifications
}

// waitDeliveries polls the status API until match holds for the prompt's deliveries.
func waitDeliveries(t *testing.T, c *testserver.Client, sid, eid string, match func([]map[string]any) bool) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		ds := deliveries(t, c, sid, eid)
		if match(ds) {
			return ds
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries never matched; last: %v", ds)
		}
		time.Sleep(50 * time.Millisecond) // polling a status, not synchronizing
	}
}

func TestWebhookOncePerEditorThenOutcome(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := startNotifying(t, db)
		alice, bob, carol := srv.Client("alice@example.com"), srv.Client("bob@example.com"), srv.Client("carol@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "notify me")
		grant(t, alice, sid, "bob@example.com", "edit")
		grant(t, alice, sid, "carol@example.com", "read") // may watch, may not answer: not notified
		recv := map[string]*webhooktest.Receiver{}
		for _, c := range []*testserver.Client{alice, bob, carol} {
			r := webhooktest.New(t, "")
			recv[c.User] = r
			putSettings(t, c, map[string]any{"webhook": map[string]any{"url": r.URL, "secret": r.Secret}})
		}

		parked, eid, _ := alice.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "make deploy"})
		for _, user := range []string{"alice@example.com", "bob@example.com"} {
			d := recv[user].WaitFor(t, func(d webhooktest.Delivery) bool { return d.Type == "elicitation.created" }, wait)
			if d.Data.ElicitationID != eid || d.Data.SessionID != sid || d.Data.Status != "pending" || d.Data.Origin == "" {
				t.Fatalf("%s: created delivery %+v", user, d.Data)
			}
			if want := srv.URL + "/approve/" + sid + "/" + eid; d.Data.ApproveURL != want {
				t.Fatalf("approve_url %q, want %q", d.Data.ApproveURL, want)
			}
			if !strings.Contains(d.Data.Message, "Bash") {
				t.Fatalf("message %q does not say what is asked", d.Data.Message)
			}
		}

		r := bob.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
		if r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		if resp := parked.Wait(t, wait); resp.Status != http.StatusOK {
			t.Fatalf("parked hook: %d", resp.Status)
		}
		for _, user := range []string{"alice@example.com", "bob@example.com"} {
			d := recv[user].WaitFor(t, func(d webhooktest.Delivery) bool { return d.Type == "elicitation.resolved" }, wait)
			if d.Data.Status != "resolved" || d.Data.Action != "accept" || d.Data.ResolvedBy != "bob@example.com" || d.Data.ResolvedVia != "api" {
				t.Fatalf("%s: resolved delivery %+v", user, d.Data)
			}
		}
		// Exactly one of each per person, and each webhook-id delivered once.
		ds := waitDeliveries(t, alice, sid, eid, func(ds []map[string]any) bool {
			n := 0
			for _, d := range ds {
				if d["state"] == "delivered" {
					n++
				}
			}
			return n == 4
		})
		if len(ds) != 4 {
			t.Fatalf("want 4 deliveries (created and resolved for alice and bob), got %v", ds)
		}
		for user, r := range recv {
			for _, d := range r.Deliveries() {
				if r.Count(d.ID) != 1 {
					t.Fatalf("%s: webhook %s accepted %d times", user, d.ID, r.Count(d.ID))
				}
			}
		}
		if n := len(recv["carol@example.com"].Deliveries()); n != 0 {
			t.Fatalf("read-only carol got %d notifications", n)
		}
		if n := len(recv["alice@example.com"].Deliveries()); n != 2 {
			t.Fatalf("alice got %d notifications, want 2", n)
		}
	})
}

func TestWebhookRetriedAfter500AndTimeout(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := startNotifying(t, db, "--notify-send-timeout", "500ms")
		alice := srv.Client("alice@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "flaky receiver")
		recv := webhooktest.New(t, "")
		putSettings(t, alice, map[string]any{"webhook": map[string]any{"url": recv.URL, "secret": recv.Secret}})

		recv.FailNext(1, webhooktest.Status(http.StatusInternalServerError))
		parked, eid, _ := alice.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls"})
		d := recv.WaitFor(t, func(d webhooktest.Delivery) bool { return d.Data.ElicitationID == eid }, wait)
		if n := recv.Attempts(d.ID); n != 2 {
			t.Fatalf("want the delivery accepted on its second attempt, took %d", n)
		}
		ds := waitDeliveries(t, alice, sid, eid, func(ds []map[string]any) bool { return len(ds) == 1 && ds[0]["state"] == "delivered" })
		if ds[0]["attempts"].(float64) != 2 {
			t.Fatalf("status shows %v attempts, want 2", ds[0]["attempts"])
		}

		// A receiver that hangs past the send timeout is retried too.
		recv.FailNext(1, webhooktest.Hang(5*time.Second))
		r := alice.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "decline"})
		if r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		parked.Wait(t, wait)
		res := recv.WaitFor(t, func(d webhooktest.Delivery) bool { return d.Type == "elicitation.resolved" }, wait)
		if n := recv.Attempts(res.ID); n < 2 {
			t.Fatalf("the hung delivery was accepted on attempt %d; want a retry", n)
		}
		if recv.Count(res.ID) != 1 {
			t.Fatalf("resolved accepted %d times", recv.Count(res.ID))
		}
	})
}

func TestDelayedNotificationSkippedWhenAnsweredFirst(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := startNotifying(t, db)
		alice := srv.Client("alice@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "at the terminal")
		recv := webhooktest.New(t, "")
		putSettings(t, alice, map[string]any{"delay_seconds": 3600, "webhook": map[string]any{"url": recv.URL, "secret": recv.Secret}})
		parked, eid, _ := alice.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls"})
		ds := waitDeliveries(t, alice, sid, eid, func(ds []map[string]any) bool { return len(ds) == 1 })
		if ds[0]["state"] != "pending" || ds[0]["next_attempt_at"] == nil {
			t.Fatalf("a delayed notification should wait: %v", ds[0])
		}
		next, _ := time.Parse(time.RFC3339Nano, ds[0]["next_attempt_at"].(string))
		if time.Until(next) < 50*time.Minute {
			t.Fatalf("due at %v: the hour's delay was not applied", next)
		}
		alice.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"})
		parked.Wait(t, wait)
		waitDeliveries(t, alice, sid, eid, func(ds []map[string]any) bool { return len(ds) == 1 && ds[0]["state"] == "skipped" })
		if n := len(recv.Deliveries()); n != 0 {
			t.Fatalf("answered at the terminal, still paged %d times", n)
		}
	})
}

func TestNtfyApproveReachesParkedHook(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := startNotifying(t, db)
		alice := srv.Client("alice@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "on my phone")
		ntfy := ntfytest.New(t, "tk_secret")
		topic := ntfytest.NewTopic()
		putSettings(t, alice, map[string]any{"ntfy": map[string]any{"url": ntfy.TopicURL(topic), "token": "tk_secret"}})
		got := alice.Do(t, http.MethodGet, "/v1/me/notifications", nil).JSON(t)
		if tok := got["ntfy"].(map[string]any)["token"].(string); strings.Contains(tok, "tk_secret") {
			t.Fatalf("the ntfy token is shown back: %q", tok)
		}

		parked, eid, _ := alice.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "terraform apply", "cwd": "/srv/infra"})
		msg := ntfy.WaitFor(t, func(m ntfytest.Message) bool { return m.Topic == topic }, wait)
		if !strings.Contains(msg.Message, "terraform apply") || !strings.Contains(msg.Title+msg.Message, "Bash") {
			t.Fatalf("the message does not say what is asked: %+v", msg)
		}
		resp := ntfytest.PressAction(t, msg, "Approve")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("approve action: %d", resp.StatusCode)
		}
		answer := parked.Wait(t, wait)
		if !strings.Contains(string(answer.Body), `"allow"`) {
			t.Fatalf("the hook was not allowed: %s", answer.Body)
		}
		row := alice.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t)
		if row["resolved_by"] != "alice@example.com" {
			t.Fatalf("resolved_by %v", row["resolved_by"])
		}
		// The follow-up replaces the question on the phone.
		ntfy.WaitFor(t, func(m ntfytest.Message) bool {
			return m.Topic == topic && strings.Contains(m.Message, "Approved by alice@example.com")
		}, wait)
		// The same link again decides nothing: single use.
		if again := ntfytest.PressAction(t, msg, "Reject"); again.StatusCode != http.StatusOK && again.StatusCode != http.StatusConflict {
			t.Fatalf("reject after approve: %d", again.StatusCode)
		}
		if again := ntfytest.PressAction(t, msg, "Approve"); again.StatusCode != http.StatusConflict {
			t.Fatalf("a replayed link: %d, want 409", again.StatusCode)
		}
	})
}

// Two replicas on one Postgres database both plan and send; each notification still
// goes out once (FOR UPDATE SKIP LOCKED gives every prompt and delivery to one of them).
func TestOneSenderAcrossTwoReplicas(t *testing.T) {
	db := testserver.PostgresDB(t)
	url := db.NewURL(t)
	flags := []string{"--auth", "header", "--notify-allow-private", "--notify-retry-base", "200ms"}
	a, b := testserver.Start(t, url, flags...), testserver.Start(t, url, flags...)
	alice := a.Client("alice@example.com")
	recv := webhooktest.New(t, "")
	putSettings(t, alice, map[string]any{"webhook": map[string]any{"url": recv.URL, "secret": recv.Secret}})
	sid := alice.CreateSession(t, alice.CreateAgent(t), "", "two replicas")
	const n = 40
	var parked []*testserver.Parked
	for i := range n {
		c := alice
		if i%2 == 1 {
			c = b.Client("alice@example.com")
		}
		p := c.ParkAsync("/v1/sessions/"+sid+"/hooks/permission-request",
			testserver.ClaudeBody("Bash", map[string]any{"command": "echo " + string(rune('a'+i%26)) + time.Now().String()}))
		parked = append(parked, p)
	}
	defer func() {
		for _, p := range parked {
			p.Cancel()
		}
	}()
	ds := recv.WaitCount(t, n, 30*time.Second)
	seen := map[string]bool{}
	for _, d := range ds {
		if recv.Count(d.ID) != 1 || recv.Attempts(d.ID) != 1 {
			t.Fatalf("delivery %s: accepted %d times in %d attempts", d.ID, recv.Count(d.ID), recv.Attempts(d.ID))
		}
		if seen[d.Data.ElicitationID] {
			t.Fatalf("prompt %s announced twice", d.Data.ElicitationID)
		}
		seen[d.Data.ElicitationID] = true
	}
	if recv.TotalAttempts() != n {
		t.Fatalf("%d sends for %d notifications", recv.TotalAttempts(), n)
	}
}

func TestReminderBeforeExpiry(t *testing.T) {
	db := testserver.Databases(t)[0]
	srv := startNotifying(t, db, "--elicitation-timeout", "60s")
	alice := srv.Client("alice@example.com")
	sid := alice.CreateSession(t, alice.CreateAgent(t), "", "remind me")
	recv := webhooktest.New(t, "")
	// Remind 58 s before a 60 s wait ends: about 2 s after the announcement.
	putSettings(t, alice, map[string]any{"reminder_seconds": 58, "webhook": map[string]any{"url": recv.URL, "secret": recv.Secret}})
	parked, eid, _ := alice.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls"})
	defer parked.Cancel()
	ds := recv.WaitCount(t, 2, wait)
	if ds[0].Data.ElicitationID != eid || ds[1].Data.ElicitationID != eid || ds[0].ID == ds[1].ID {
		t.Fatalf("want the announcement and a reminder of %s: %+v", eid, ds)
	}
	if gap := ds[1].SignedAt.Sub(ds[0].SignedAt); gap < time.Second {
		t.Fatalf("the reminder came %s after the announcement; want about 2 s", gap)
	}
	waitDeliveries(t, alice, sid, eid, func(ds []map[string]any) bool {
		kinds := map[string]string{}
		for _, d := range ds {
			kinds[d["kind"].(string)] = d["state"].(string)
		}
		return len(ds) == 2 && kinds["created"] == "delivered" && kinds["reminder"] == "delivered"
	})
}
