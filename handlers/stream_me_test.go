package handlers_test

import (
	"net/http"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestMyStreamFollowsEveryTree: GET /v1/me/stream opens with a heartbeat and carries
// the prompts of every tree the caller can read — one created after the stream opened
// included, and a sub-agent's seen from its root — and their decisions.
func TestMyStreamFollowsEveryTree(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		st := c.OpenStream(t, "/v1/me/stream")
		if got := st.Header.Get("Content-Type"); got != "text/event-stream" {
			t.Fatalf("Content-Type %q", got)
		}
		if f := st.Next(t, coreWait); f.Event != "session.heartbeat" {
			t.Fatalf("first frame %s %s, want the heartbeat", f.Event, f.Data)
		}
		// A session created after the stream opened: its first prompt is not missed.
		agent := c.CreateAgent(t)
		root := c.CreateSession(t, agent, "", "later")
		parked, ev := corePark(t, c, st, root, testserver.ClaudeBody("Bash", map[string]any{"command": "make deploy"}))
		eid := ev["elicitation_id"].(string)
		if coreParams(t, ev)["tool_name"] != "Bash" {
			t.Fatalf("request frame %v", ev)
		}
		child := c.CreateSession(t, agent, root, "worker")
		_, evC := corePark(t, c, st, child, testserver.ClaudeBody("Edit", map[string]any{"file_path": "/tmp/x"}))
		if coreParams(t, evC)["target_session_id"] != child {
			t.Fatalf("sub-agent prompt without its owner: %v", evC)
		}
		coreMustResolve(t, c, root, eid, map[string]any{"action": "accept"})
		coreWaitResolved(t, st, eid)
		coreWantBehavior(t, parked, "allow")
	})
}

// TestMyStreamIsOnlyMine: in header mode a person's stream carries nothing of another
// person's trees until one is shared with them — then the prompt already pending there
// comes first — and nothing more once the share is removed.
func TestMyStreamIsOnlyMine(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice, bob := srv.Client("alice@example.com"), srv.Client("bob@example.com")
		agent := alice.CreateAgent(t)
		secret := alice.CreateSession(t, agent, "", "secret")
		shared := alice.CreateSession(t, agent, "", "shared")

		st := bob.OpenStream(t, "/v1/me/stream")
		st.WaitHeartbeat(t)
		_, hidden, _ := alice.ParkClaude(t, secret, secret, "Bash", map[string]any{"command": "cat ~/.ssh/id_ed25519"})
		_, pending, _ := alice.ParkClaude(t, shared, shared, "Bash", map[string]any{"command": "ls"})
		if r := alice.Do(t, http.MethodPut, "/v1/sessions/"+shared+"/permissions", map[string]any{"user": "bob@example.com", "level": "edit"}); r.Status != http.StatusOK {
			t.Fatalf("share: %d %s", r.Status, r.Body)
		}
		f := st.WaitFor(t, "response.elicitation_request", coreWait)
		if got := f.Map(t)["elicitation_id"]; got != pending {
			t.Fatalf("bob's stream sent %v, want the shared pending %s (never %s)", got, pending, hidden)
		}
		coreMustResolve(t, alice, secret, hidden, map[string]any{"action": "decline"})
		if r := alice.Do(t, http.MethodDelete, "/v1/sessions/"+shared+"/permissions?user=bob@example.com", nil); r.Status >= 300 {
			t.Fatalf("unshare: %d %s", r.Status, r.Body)
		}
		// After the unshare, a new prompt there never reaches bob; his own still does.
		alice.ParkClaude(t, shared, shared, "Bash", map[string]any{"command": "whoami"})
		mine := bob.CreateSession(t, bob.CreateAgent(t), "", "bob's")
		_, own, _ := bob.ParkClaude(t, mine, mine, "Bash", map[string]any{"command": "date"})
		for {
			f := st.Next(t, coreWait)
			if f.Event == "session.heartbeat" {
				continue
			}
			id := f.Map(t)["elicitation_id"]
			if id == own && f.Event == "response.elicitation_request" {
				break
			}
			if id != pending {
				t.Fatalf("bob's stream sent %s %s after the unshare", f.Event, f.Data)
			}
		}
	})
}
