package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestConcurrentVerdictsExactlyOneWins races 30 verdicts (accept and decline mixed,
// through the resolve URL and approval events) on one parked prompt: exactly one is
// "resolved", every other is "already_resolved" naming the winner, and the hook's answer
// matches the action stored on the row.
func TestConcurrentVerdictsExactlyOneWins(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice := srv.Client("alice@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "")
		const n = 30
		deciders := make([]*testserver.Client, n)
		for i := range deciders {
			user := "decider" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "@example.com"
			r := alice.Do(t, http.MethodPut, "/v1/sessions/"+sid+"/permissions", map[string]any{"user": user, "level": "edit"})
			if r.Status != http.StatusOK {
				t.Fatalf("grant %s: %d %s", user, r.Status, r.Body)
			}
			deciders[i] = srv.Client(user)
		}
		st := coreOpenStream(t, alice, sid)
		parked, ev := corePark(t, alice, st, sid, testserver.ClaudeBody("Bash", map[string]any{"command": "terraform apply"}))
		eid := ev["elicitation_id"].(string)

		type result struct {
			user    string
			action  string
			status  int
			outcome map[string]any
			err     error
		}
		results := make([]result, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			action := "accept"
			if i%2 == 1 {
				action = "decline"
			}
			path, body := coreResolvePath(sid, eid), any(map[string]any{"action": action})
			if i%3 == 0 {
				path = "/v1/sessions/" + sid + "/events"
				body = map[string]any{"type": "approval", "data": map[string]any{"elicitation_id": eid, "action": action}}
			}
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				res := result{user: deciders[i].User, action: action}
				r, err := deciders[i].Send(context.Background(), http.MethodPost, path, body)
				if err == nil {
					res.status = r.Status
					err = json.Unmarshal(r.Body, &res.outcome)
				}
				res.err = err
				results[i] = res
			}(i)
		}
		close(start)
		wg.Wait()

		var winner *result
		for i := range results {
			r := &results[i]
			if r.err != nil || r.status != http.StatusAccepted {
				t.Fatalf("verdict %d: %d %v %v", i, r.status, r.err, r.outcome)
			}
			switch r.outcome["outcome"] {
			case "resolved":
				if winner != nil {
					t.Fatalf("two winners: %s (%s) and %s (%s)", winner.user, winner.action, r.user, r.action)
				}
				winner = r
			case "already_resolved":
			default:
				t.Fatalf("verdict %d outcome = %v", i, r.outcome)
			}
		}
		if winner == nil {
			t.Fatal("no verdict won")
		}
		for _, r := range results {
			if r.outcome["outcome"] == "already_resolved" && r.outcome["resolved_by"] != winner.user {
				t.Fatalf("loser told resolved_by %v, winner was %s", r.outcome["resolved_by"], winner.user)
			}
		}

		stored := coreGetElicitation(t, alice, sid, eid)
		if stored["action"] != winner.action || stored["resolved_by"] != winner.user {
			t.Fatalf("stored %v, winner %s %s", stored, winner.user, winner.action)
		}
		want := map[string]string{"accept": "allow", "decline": "deny"}[winner.action]
		coreWantBehavior(t, parked, want)

		// One decision, one announcement.
		count := 0
		for _, f := range coreUntilSentinel(t, alice, st, sid) {
			if f.Event == "response.elicitation_resolved" {
				count++
			}
		}
		if count != 1 {
			t.Fatalf("%d resolved events, want 1", count)
		}
	})
}

// TestManyParkedHooksEachGetTheirOwnVerdict parks 20 hooks on one session at once and
// decides them in a shuffled order with alternating verdicts: every hook wakes with its
// own prompt's verdict, never a neighbour's.
func TestManyParkedHooksEachGetTheirOwnVerdict(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		st := coreOpenStream(t, c, sid)
		const n = 20
		hooks := map[string]*testserver.Parked{} // by the command, which the preview names
		for i := 0; i < n; i++ {
			cmd := "echo " + string(rune('a'+i))
			hooks[cmd] = c.ParkAsync(coreHookPath(sid), testserver.ClaudeBody("Bash", map[string]any{"command": cmd}))
		}
		ids := map[string]string{} // command → elicitation id
		for len(ids) < n {
			ev := st.WaitFor(t, "response.elicitation_request", coreWait).Map(t)
			cmd := coreParams(t, ev)["tool_input"].(map[string]any)["command"].(string)
			ids[cmd] = ev["elicitation_id"].(string)
		}
		want := map[string]string{}
		i := 0
		for cmd, eid := range ids { // map order: shuffled
			action, behavior := "accept", "allow"
			if i%2 == 1 {
				action, behavior = "decline", "deny"
			}
			i++
			want[cmd] = behavior
			coreMustResolve(t, c, sid, eid, map[string]any{"action": action})
		}
		for cmd, p := range hooks {
			coreWantBehavior(t, p, want[cmd])
		}
	})
}
