package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// parkedHooks is how many Claude hooks the restart test parks at once.
const parkedHooks = 200

// restartGrace is the restart test's --disconnect-grace: how long a prompt whose hook
// went away stays pending. The test decides and re-parks 200 prompts after the restart,
// which on a loaded machine under -race outlasted the 10 s default, so prompts were
// abandoned as the product says they must be; the test is about the restart, not the
// grace, so the grace is longer than any run of it.
var restartGrace = []string{"--disconnect-grace", "10m"}

// claudeHookWithID is a PermissionRequest body carrying a re-attach id, as a hook
// forwarder that retries after a restart sends it.
func claudeHookWithID(i int, eid string) map[string]any {
	body := testserver.ClaudeBody("Bash", map[string]any{"command": fmt.Sprintf("echo restart-%d", i)})
	body["_gatehouse_elicitation_id"] = eid
	return body
}

// restartAction is the verdict given to prompt i: both halves (resolved while nobody
// waited, resolved after re-park) get accepts and declines.
func restartAction(i int) string {
	if (i/2)%2 == 0 {
		return "accept"
	}
	return "decline"
}

// behaviorFor is the Claude decision a verdict must produce.
func behaviorFor(action string) string {
	if action == "accept" {
		return "allow"
	}
	return "deny"
}

// hookBehavior extracts hookSpecificOutput.decision.behavior from a hook answer.
func hookBehavior(t *testing.T, r *testserver.Response) string {
	t.Helper()
	var ans struct {
		HookSpecificOutput struct {
			HookEventName string `json:"hookEventName"`
			Decision      struct {
				Behavior string `json:"behavior"`
			} `json:"decision"`
		} `json:"hookSpecificOutput"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &ans) != nil || ans.HookSpecificOutput.HookEventName != "PermissionRequest" {
		return fmt.Sprintf("<bad answer %d %q>", r.Status, r.Body)
	}
	return ans.HookSpecificOutput.Decision.Behavior
}

// TestSIGKILLRestartLosesNoDecision parks 200 Claude hooks with re-attach ids, kills the
// process with SIGKILL, restarts it on the same database, resolves half of the prompts
// while no hook waits, then re-parks all 200: the resolved half answers at once with the
// stored verdict, the other half re-attaches and answers when resolved. No decision is
// lost and every row records its action.
func TestSIGKILLRestartLosesNoDecision(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		dbURL := db.NewURL(t)
		first := startServe(t, dbURL, restartGrace...)
		c := first.Client()
		sid := c.CreateSession(t, c.CreateAgent(t), "", "restart")
		hookPath := "/v1/sessions/" + sid + "/hooks/permission-request"

		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		st.WaitHeartbeat(t)
		eids := make([]string, parkedHooks)
		before := make([]*testserver.Parked, parkedHooks)
		for i := range eids {
			eids[i] = ids.New("elicit_claude_")
			before[i] = c.ParkAsync(hookPath, claudeHookWithID(i, eids[i]))
		}
		published := map[string]bool{}
		for len(published) < parkedHooks {
			f := st.WaitFor(t, "response.elicitation_request", 30*time.Second)
			published[f.Map(t)["elicitation_id"].(string)] = true
		}
		for _, eid := range eids {
			if !published[eid] {
				t.Fatalf("prompt %s was not published under its re-attach id (got %v)", eid, published)
			}
		}
		st.Close()

		first.Kill(t)
		for i, p := range before {
			select {
			case <-p.DoneChan():
			case <-time.After(10 * time.Second):
				t.Fatalf("hook %d still waiting on a killed process", i)
			}
		}

		second := startServe(t, dbURL, restartGrace...)
		c = second.Client()
		elicitPath := func(eid string) string { return "/v1/sessions/" + sid + "/elicitations/" + eid }
		for _, eid := range eids {
			r := c.Do(t, http.MethodGet, elicitPath(eid), nil)
			if r.Status != http.StatusOK || r.JSON(t)["status"] != "pending" {
				t.Fatalf("after SIGKILL restart %s is not pending: %d %s", eid, r.Status, r.Body)
			}
		}
		if got := len(c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil).JSON(t)["pending_elicitations"].([]any)); got != parkedHooks {
			t.Fatalf("session lists %d pending prompts after restart, want %d", got, parkedHooks)
		}

		resolve := func(i int) {
			t.Helper()
			r := c.Do(t, http.MethodPost, elicitPath(eids[i])+"/resolve", map[string]any{"action": restartAction(i)})
			if r.Status != http.StatusAccepted || r.JSON(t)["outcome"] != "resolved" {
				t.Fatalf("resolve %d: %d %s", i, r.Status, r.Body)
			}
		}
		// Even prompts are decided while no hook waits: the verdict lives on the row only.
		for i := 0; i < parkedHooks; i += 2 {
			resolve(i)
		}

		after := make([]*testserver.Parked, parkedHooks)
		for i := range eids {
			after[i] = c.ParkAsync(hookPath, claudeHookWithID(i, eids[i]))
		}
		lost := 0
		for i := 0; i < parkedHooks; i += 2 {
			if got, want := hookBehavior(t, after[i].Wait(t, 10*time.Second)), behaviorFor(restartAction(i)); got != want {
				t.Errorf("re-parked hook %d (decided during the restart) answered %s, want %s", i, got, want)
				lost++
			}
		}
		for i := 1; i < parkedHooks; i += 2 {
			if after[i].Done() {
				t.Fatalf("re-parked hook %d answered before anyone decided: %+v", i, after[i].Wait(t, time.Second))
			}
		}
		if got := len(c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil).JSON(t)["pending_elicitations"].([]any)); got != parkedHooks/2 {
			t.Fatalf("re-parking changed the pending list: %d prompts, want %d", got, parkedHooks/2)
		}
		for i := 1; i < parkedHooks; i += 2 {
			resolve(i)
		}
		for i := 1; i < parkedHooks; i += 2 {
			if got, want := hookBehavior(t, after[i].Wait(t, 10*time.Second)), behaviorFor(restartAction(i)); got != want {
				t.Errorf("re-attached hook %d answered %s, want %s", i, got, want)
				lost++
			}
		}
		if lost != 0 {
			t.Fatalf("%d of %d decisions lost across the restart", lost, parkedHooks)
		}
		for i, eid := range eids {
			m := c.Do(t, http.MethodGet, elicitPath(eid), nil).JSON(t)
			if m["status"] != "resolved" || m["action"] != restartAction(i) {
				t.Errorf("GET elicitation %d = %v, want resolved with action %s", i, m, restartAction(i))
			}
		}
	})
}
