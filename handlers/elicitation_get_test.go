package handlers_test

import (
	"net/http"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestSeedElicitationGet ports the seed's elicitation_page_* scenarios: a parked prompt
// reads as pending with its policy context, a decided one as resolved with the verdict
// and no prompt fields, an unknown id as resolved, an unknown session as 404.
func TestSeedElicitationGet(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")

		t.Run("pending", func(t *testing.T) {
			parked, eid, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls -la"})
			got := coreGetElicitation(t, c, sid, eid)
			want := map[string]any{
				"status":          "pending",
				"message":         "Claude wants to call **Bash**",
				"phase":           "pre_tool_use",
				"policy_name":     "claude_native_permission",
				"content_preview": `Bash({"command":"ls -la"})`,
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
			params, _ := got["params"].(map[string]any)
			if params["tool_name"] != "Bash" || params["approve_path"] != "/approve/"+sid+"/"+eid {
				t.Errorf("params = %v", params)
			}

			coreMustResolve(t, c, sid, eid, map[string]any{"action": "decline"})
			coreWantBehavior(t, parked, "deny")

			// Decided: the verdict, no prompt fields.
			got = coreGetElicitation(t, c, sid, eid)
			if got["status"] != "resolved" || got["action"] != "decline" || got["resolved_by"] != "local" || got["resolved_at"] == nil {
				t.Errorf("decided = %v", got)
			}
			for _, k := range []string{"message", "phase", "policy_name", "params", "outcome"} {
				if _, ok := got[k]; ok {
					t.Errorf("decided prompt still shows %q: %v", k, got)
				}
			}
		})

		t.Run("unknown id", func(t *testing.T) {
			for _, eid := range []string{"elicit_unknown_id", "elicit_" + "0123456789abcdef0123456789abcdef"} {
				got := coreGetElicitation(t, c, sid, eid)
				if len(got) != 1 || got["status"] != "resolved" {
					t.Errorf("GET %s = %v, want exactly {status: resolved}", eid, got)
				}
			}
		})

		t.Run("unknown session", func(t *testing.T) {
			r := c.Do(t, http.MethodGet, coreElicitationPath("conv_does_not_exist", "elicit_nope"), nil)
			coreWantEnvelope(t, r, http.StatusNotFound, "not_found")
			r = c.Do(t, http.MethodGet, coreElicitationPath("conv_00000000000000000000000000000000", "elicit_nope"), nil)
			coreWantEnvelope(t, r, http.StatusNotFound, "not_found")
		})
	})
}

// TestSeedElicitationGetCrossUserForbidden: with header auth bob cannot read alice's
// prompt — neither a made-up id nor a real pending one (404, no access at all), and a
// reader's GET is 403 because the route needs edit.
func TestSeedElicitationGetCrossUserForbidden(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice := srv.Client("alice@example.com")
		bob := srv.Client("bob@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "")

		r := bob.Do(t, http.MethodGet, coreElicitationPath(sid, "elicit_whatever"), nil)
		coreWantEnvelope(t, r, http.StatusNotFound, "not_found")

		parked, eid, _ := alice.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "cat ~/.ssh/id_rsa"})
		r = bob.Do(t, http.MethodGet, coreElicitationPath(sid, eid), nil)
		coreWantEnvelope(t, r, http.StatusNotFound, "not_found")

		alice.Do(t, http.MethodPut, "/v1/sessions/"+sid+"/permissions", map[string]any{"user": "bob@example.com", "level": "read"})
		r = bob.Do(t, http.MethodGet, coreElicitationPath(sid, eid), nil)
		coreWantEnvelope(t, r, http.StatusForbidden, "forbidden")

		coreMustResolve(t, alice, sid, eid, map[string]any{"action": "decline"})
		coreWantBehavior(t, parked, "deny")
	})
}
