package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// pendingIDs lists the ids of a session snapshot's pending prompts.
func pendingIDs(t *testing.T, c *testserver.Client, sid string) []string {
	t.Helper()
	r := c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET session: %d %s", r.Status, r.Body)
	}
	var out []string
	for _, p := range r.JSON(t)["pending_elicitations"].([]any) {
		out = append(out, p.(map[string]any)["elicitation_id"].(string))
	}
	return out
}

// TestHooksOnlyTokenReadsOnlyWhatItParked: two hooks-only tokens of one person and the
// person themself park prompts in one session; each hooks-only token reads only its
// own prompt — its session snapshot lists only that one, and another's prompt reads
// like an unknown one — while the person sees all three. A hooks-only token's own hook
// still waits for and gets its answer, and it retires (Codex serverRequest/resolved)
// only what it parked.
func TestHooksOnlyTokenReadsOnlyWhatItParked(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--trusted-proxies", "10.0.0.0/8")
		_, full := srv.IssueToken(t, alice, "", "", time.Time{})
		_, secretA := srv.IssueToken(t, alice, "hooks", "", time.Time{})
		_, secretB := srv.IssueToken(t, alice, "hooks", "", time.Time{})
		person, hooksA, hooksB := srv.TokenClient(full), srv.TokenClient(secretA), srv.TokenClient(secretB)
		sid := person.CreateSession(t, person.CreateAgent(t), "", "")
		st := coreOpenStream(t, person, sid)

		hookA, evA := corePark(t, hooksA, st, sid, testserver.ClaudeBody("Bash", map[string]any{"command": "echo from-A"}))
		hookB, evB := corePark(t, hooksB, st, sid, testserver.ClaudeBody("Bash", map[string]any{"command": "echo from-B"}))
		hookP, evP := corePark(t, person, st, sid, testserver.ClaudeBody("Bash", map[string]any{"command": "echo from-person"}))
		eidA, eidB, eidP := evA["elicitation_id"].(string), evB["elicitation_id"].(string), evP["elicitation_id"].(string)

		if got := pendingIDs(t, person, sid); len(got) != 3 {
			t.Fatalf("the person's snapshot lists %v, want all three", got)
		}
		for _, x := range []struct {
			name        string
			c           *testserver.Client
			own         string
			others      []string
			ownCommand  string
			otherPhrase []string
		}{
			{"A", hooksA, eidA, []string{eidB, eidP}, "from-A", []string{"from-B", "from-person"}},
			{"B", hooksB, eidB, []string{eidA, eidP}, "from-B", []string{"from-A", "from-person"}},
		} {
			if got := pendingIDs(t, x.c, sid); len(got) != 1 || got[0] != x.own {
				t.Fatalf("hooks token %s's snapshot lists %v, want only %s", x.name, got, x.own)
			}
			r := x.c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil)
			for _, phrase := range x.otherPhrase {
				if strings.Contains(string(r.Body), phrase) {
					t.Fatalf("hooks token %s's snapshot shows another's prompt (%s): %s", x.name, phrase, r.Body)
				}
			}
			if r := x.c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+x.own, nil); r.Status != http.StatusOK ||
				r.JSON(t)["status"] != "pending" || !strings.Contains(string(r.Body), x.ownCommand) {
				t.Fatalf("hooks token %s reads its own prompt: %d %s", x.name, r.Status, r.Body)
			}
			unknown := x.c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/elicit_00000000000000000000000000000000", nil)
			for _, other := range x.others {
				r := x.c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+other, nil)
				if r.Status != unknown.Status || string(r.Body) != string(unknown.Body) {
					t.Fatalf("hooks token %s reads %s: %d %s, want the answer for an unknown prompt (%d %s)",
						x.name, other, r.Status, r.Body, unknown.Status, unknown.Body)
				}
			}
		}
		if r := person.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eidB, nil); r.JSON(t)["status"] != "pending" {
			t.Fatalf("the person reads B's prompt: %d %s", r.Status, r.Body)
		}

		// Its own hook waits for the person's verdict and gets it.
		coreMustResolve(t, person, sid, eidA, map[string]any{"action": "accept"})
		coreWantBehavior(t, hookA, "allow")
		if r := hooksA.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eidA, nil); r.JSON(t)["status"] != "resolved" || r.JSON(t)["action"] != "accept" {
			t.Fatalf("hooks token A reads its decided prompt: %d %s", r.Status, r.Body)
		}

		// Codex: a resolved note from B does not retire A's request; A's own does.
		path := "/v1/sessions/" + sid + "/hooks/codex-elicitation-request"
		codexA := hooksA.ParkAsync(path, testserver.CodexCommandBody(7, []string{"date"}))
		codexEid := st.WaitFor(t, "response.elicitation_request", coreWait).Map(t)["elicitation_id"].(string)
		retire := func(c *testserver.Client) []any {
			t.Helper()
			r := c.Do(t, http.MethodPost, path, map[string]any{"method": "serverRequest/resolved",
				"params": map[string]any{"threadId": "thread_child", "requestId": 7}})
			if r.Status != http.StatusOK {
				t.Fatalf("serverRequest/resolved: %d %s", r.Status, r.Body)
			}
			return r.JSON(t)["retired"].([]any)
		}
		if got := retire(hooksB); len(got) != 0 {
			t.Fatalf("hooks token B retired %v, parked by A", got)
		}
		if got := retire(hooksA); len(got) != 1 || got[0] != codexEid {
			t.Fatalf("hooks token A retired %v, want [%s]", got, codexEid)
		}
		if ans := codexA.Wait(t, coreWait); strings.TrimSpace(string(ans.Body)) != `{"decision":"cancel"}` {
			t.Fatalf("A's retired Codex request answered %d %s", ans.Status, ans.Body)
		}

		hookB.Cancel()
		hookP.Cancel()
	})
}
