package notify_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/ntfytest"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// actionLinks parks a prompt for alice with ntfy on and returns the parked request,
// the prompt id and its Approve and Reject links from the notification.
func actionLinks(t *testing.T, srv *testserver.Server, alice *testserver.Client, sid string) (*testserver.Parked, string, string, string) {
	t.Helper()
	ntfy := ntfytest.New(t, "")
	topic := ntfytest.NewTopic()
	putSettings(t, alice, map[string]any{"ntfy": map[string]any{"url": ntfy.TopicURL(topic)}})
	parked, eid, _ := alice.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "rm -rf build"})
	msg := ntfy.WaitFor(t, func(m ntfytest.Message) bool { return m.Topic == topic }, wait)
	var accept, decline string
	for _, a := range msg.Actions {
		switch a.Label {
		case "Approve":
			accept = a.URL
		case "Reject":
			decline = a.URL
		}
	}
	if !strings.HasPrefix(accept, srv.URL+"/act/") || !strings.HasPrefix(decline, srv.URL+"/act/") {
		t.Fatalf("action links %q %q", accept, decline)
	}
	return parked, eid, accept, decline
}

// hit requests an action link as a person (identity header; "" sends none).
func hit(t *testing.T, method, link, user string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, link, nil)
	if user != "" {
		req.Header.Set("X-Forwarded-Email", user)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func pending(t *testing.T, c *testserver.Client, sid, eid string) bool {
	t.Helper()
	return c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t)["status"] == "pending"
}

func TestActionLinkGETDecidesNothingPOSTDecidesOnce(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := startNotifying(t, db)
		alice := srv.Client("alice@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "links")
		parked, eid, accept, decline := actionLinks(t, srv, alice, sid)

		// Link scanners and previewers fetch links: a GET shows, never decides.
		for range 3 {
			status, body := hit(t, http.MethodGet, accept, "")
			if status != http.StatusOK || !strings.Contains(body, `data-testid="action-confirm"`) || !strings.Contains(body, "rm -rf build") {
				t.Fatalf("GET: %d %s", status, body)
			}
		}
		if !pending(t, alice, sid, eid) {
			t.Fatal("a GET of an action link decided the prompt")
		}
		// A phone far from the identity proxy sends no identity: the link is enough.
		if status, body := hit(t, http.MethodPost, decline, ""); status != http.StatusOK || !strings.Contains(body, `data-decided="true"`) {
			t.Fatalf("POST: %d %s", status, body)
		}
		answer := parked.Wait(t, wait)
		if !strings.Contains(string(answer.Body), `"deny"`) {
			t.Fatalf("the hook was not denied: %s", answer.Body)
		}
		row := alice.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t)
		if row["resolved_by"] != "alice@example.com" || row["resolved_via"] != "ntfy" || row["action"] != "decline" {
			t.Fatalf("decided as %v", row)
		}
		// Replayed: refused. The other link: already decided, the first verdict stands.
		if status, _ := hit(t, http.MethodPost, decline, ""); status != http.StatusConflict {
			t.Fatalf("replay: %d, want 409", status)
		}
		if status, body := hit(t, http.MethodPost, accept, ""); status != http.StatusOK || !strings.Contains(body, "Already decided") {
			t.Fatalf("accept after decline: %d %s", status, body)
		}
		if row := alice.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t); row["action"] != "decline" {
			t.Fatalf("the first verdict did not stand: %v", row)
		}
	})
}

func TestActionLinkRefusals(t *testing.T) {
	db := testserver.Databases(t)[0]
	srv := startNotifying(t, db)
	alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
	sid := alice.CreateSession(t, alice.CreateAgent(t), "", "refusals")
	grant(t, alice, sid, "bob@example.com", "edit")
	_, eid, accept, _ := actionLinks(t, srv, alice, sid)
	token := strings.TrimPrefix(accept, srv.URL+"/act/")
	payload, sig, _ := strings.Cut(token, ".")

	for _, c := range []struct {
		name, link, user string
		want             int
	}{
		{"tampered signature", srv.URL + "/act/" + payload + "." + strings.Repeat("A", len(sig)), "", http.StatusForbidden},
		{"no signature", srv.URL + "/act/" + payload, "", http.StatusForbidden},
		{"garbage", srv.URL + "/act/" + url.PathEscape("not a token"), "", http.StatusForbidden},
		{"presented by someone else", accept, "bob@example.com", http.StatusForbidden},
	} {
		if status, _ := hit(t, http.MethodPost, c.link, c.user); status != c.want {
			t.Errorf("%s: %d, want %d", c.name, status, c.want)
		}
		if status, _ := hit(t, http.MethodGet, c.link, c.user); status != c.want {
			t.Errorf("%s (GET): %d, want %d", c.name, status, c.want)
		}
	}
	// The person must still have edit access when the link is used.
	grant(t, alice, sid, "bob@example.com", "edit")
	_, _, bobAccept, _ := actionLinksFor(t, srv, alice, bob, sid)
	grant(t, alice, sid, "bob@example.com", "read")
	if status, _ := hit(t, http.MethodPost, bobAccept, ""); status != http.StatusForbidden {
		t.Errorf("link of a person who lost edit access: %d, want 403", status)
	}
	if !pending(t, alice, sid, eid) {
		t.Fatal("a refused link decided the prompt")
	}
}

// actionLinksFor is actionLinks with the notification going to who (an editor of sid).
func actionLinksFor(t *testing.T, srv *testserver.Server, owner, who *testserver.Client, sid string) (*testserver.Parked, string, string, string) {
	t.Helper()
	ntfy := ntfytest.New(t, "")
	topic := ntfytest.NewTopic()
	putSettings(t, who, map[string]any{"ntfy": map[string]any{"url": ntfy.TopicURL(topic)}})
	parked, eid, _ := owner.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "echo " + topic})
	msg := ntfy.WaitFor(t, func(m ntfytest.Message) bool { return m.Topic == topic && len(m.Actions) == 3 }, wait)
	return parked, eid, msg.Actions[1].URL, msg.Actions[2].URL
}

func TestActionLinkExpired(t *testing.T) {
	db := testserver.Databases(t)[0]
	// Links that expire as soon as they are made: any use is after expiry.
	srv := startNotifying(t, db, "--action-link-ttl", "1ns")
	alice := srv.Client("alice@example.com")
	sid := alice.CreateSession(t, alice.CreateAgent(t), "", "expired")
	_, eid, accept, _ := actionLinks(t, srv, alice, sid)
	if status, _ := hit(t, http.MethodPost, accept, ""); status != http.StatusGone {
		t.Fatalf("expired link: %d, want 410", status)
	}
	if status, _ := hit(t, http.MethodGet, accept, ""); status != http.StatusGone {
		t.Fatalf("expired link (GET): %d, want 410", status)
	}
	if !pending(t, alice, sid, eid) {
		t.Fatal("an expired link decided the prompt")
	}
}

func TestNotificationSettingsValidation(t *testing.T) {
	db := testserver.Databases(t)[0]
	// Without --notify-allow-private: only public https URLs.
	srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
	alice := srv.Client("alice@example.com")
	for _, c := range []struct {
		doc   map[string]any
		field string
	}{
		{map[string]any{"webhook": map[string]any{"url": "http://hooks.example.com/x"}}, "webhook.url"},
		{map[string]any{"webhook": map[string]any{"url": "https://127.0.0.1/x"}}, "webhook.url"},
		{map[string]any{"webhook": map[string]any{"url": "https://localhost/x"}}, "webhook.url"},
		{map[string]any{"webhook": map[string]any{"url": "https://10.1.2.3/x"}}, "webhook.url"},
		{map[string]any{"webhook": map[string]any{"url": "https://hooks.example.com/x", "secret": "nope"}}, "webhook.secret"},
		{map[string]any{"ntfy": map[string]any{"url": "https://ntfy.sh/"}}, "ntfy.url"},
		{map[string]any{"ntfy": map[string]any{"url": "https://192.168.1.1/topic"}}, "ntfy.url"},
		{map[string]any{"delay_seconds": -1}, "delay_seconds"},
		{map[string]any{"quiet_hours": map[string]any{"start": "25:00", "end": "07:00"}}, "quiet_hours.start"},
		{map[string]any{"quiet_hours": map[string]any{"start": "22:00", "end": "07:00", "time_zone": "Mars/Olympus"}}, "quiet_hours.time_zone"},
		{map[string]any{"pager": true}, "pager"},
	} {
		r := alice.Do(t, http.MethodPut, "/v1/me/notifications", c.doc)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), c.field) {
			t.Errorf("%v: %d %s; want 400 naming %s", c.doc, r.Status, r.Body, c.field)
		}
	}
	// A webhook without a secret gets one, shown in full once, then masked; sending
	// the mask back keeps it.
	first := putSettings(t, alice, map[string]any{"webhook": map[string]any{"url": "https://hooks.example.com/x"}})
	secret := first["webhook"].(map[string]any)["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") || len(secret) < 40 {
		t.Fatalf("generated secret %q", secret)
	}
	shown := alice.Do(t, http.MethodGet, "/v1/me/notifications", nil).JSON(t)["webhook"].(map[string]any)["secret"].(string)
	if shown == secret || len(shown) > 16 {
		t.Fatalf("masked secret too revealing: %q", shown)
	}
	again := putSettings(t, alice, map[string]any{"delay_seconds": 30, "webhook": map[string]any{"url": "https://hooks.example.com/y", "secret": shown}})
	if again["webhook"].(map[string]any)["secret"] != shown || again["delay_seconds"].(float64) != 30 {
		t.Fatalf("after re-sending the mask: %v", again)
	}
}
