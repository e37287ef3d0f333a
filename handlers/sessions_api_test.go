package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestSessionsAPIShapes: creating and reading sessions — the session object, child
// kinds and roots, unknown agents (404), duplicate child titles (409), and no caching.
func TestSessionsAPIShapes(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice := srv.Client("alice@example.com")
		bob := srv.Client("bob@example.com")
		agent := alice.CreateAgent(t)

		r := alice.Do(t, http.MethodPost, "/v1/sessions", map[string]any{"agent_id": agent, "title": "root"})
		if r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		root := r.JSON(t)
		sid := root["id"].(string)
		if root["kind"] != "default" || root["root_session_id"] != sid || root["parent_session_id"] != nil ||
			root["created_by"] != "alice@example.com" || root["agent_id"] != agent || root["title"] != "root" {
			t.Fatalf("created session = %s", r.Body)
		}
		if p, ok := root["pending_elicitations"].([]any); !ok || len(p) != 0 {
			t.Fatalf("new session pending_elicitations = %v, want []", root["pending_elicitations"])
		}

		child := alice.Do(t, http.MethodPost, "/v1/sessions", map[string]any{"agent_id": agent, "title": "worker-a:task", "parent_session_id": sid})
		if child.Status != http.StatusCreated {
			t.Fatalf("create child: %d %s", child.Status, child.Body)
		}
		cj := child.JSON(t)
		if cj["kind"] != "sub_agent" || cj["parent_session_id"] != sid || cj["root_session_id"] != sid {
			t.Fatalf("child = %s", child.Body)
		}
		grandchild := alice.CreateSession(t, agent, cj["id"].(string), "worker-a:task")
		g := alice.Do(t, http.MethodGet, "/v1/sessions/"+grandchild, nil).JSON(t)
		if g["root_session_id"] != sid || g["parent_session_id"] != cj["id"] {
			t.Fatalf("grandchild = %v", g)
		}

		t.Run("duplicate child title", func(t *testing.T) {
			r := alice.Do(t, http.MethodPost, "/v1/sessions", map[string]any{"agent_id": agent, "title": "worker-a:task", "parent_session_id": sid})
			coreWantEnvelope(t, r, http.StatusConflict, "conflict")
			// Titles are unique per parent only.
			alice.CreateSession(t, agent, sid, "worker-b:task")
			alice.CreateSession(t, agent, "", "root")
		})

		t.Run("unknown agent", func(t *testing.T) {
			for _, id := range []string{"agent_" + strings.Repeat("f", 32), "agent_nope"} {
				r := alice.Do(t, http.MethodPost, "/v1/sessions", map[string]any{"agent_id": id})
				coreWantEnvelope(t, r, http.StatusNotFound, "not_found")
				coreWantEnvelope(t, alice.Do(t, http.MethodGet, "/v1/agents/"+id, nil), http.StatusNotFound, "not_found")
			}
			// Another user's agent is not bob's to start a session with.
			r := bob.Do(t, http.MethodPost, "/v1/sessions", map[string]any{"agent_id": agent})
			coreWantEnvelope(t, r, http.StatusNotFound, "not_found")
			coreWantEnvelope(t, bob.Do(t, http.MethodGet, "/v1/agents/"+agent, nil), http.StatusNotFound, "not_found")
		})

		t.Run("unknown and malformed session ids", func(t *testing.T) {
			for _, id := range []string{"conv_" + strings.Repeat("0", 32), "conv_nope", "x", sid + "0"} {
				for _, path := range []string{"/v1/sessions/" + id, "/v1/sessions/" + id + "/agent", "/v1/sessions/" + id + "/permissions", coreStreamPath(id)} {
					coreWantEnvelope(t, alice.Do(t, http.MethodGet, path, nil), http.StatusNotFound, "not_found")
				}
			}
			// Bob cannot tell alice's session from a missing one.
			coreWantEnvelope(t, bob.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil), http.StatusNotFound, "not_found")
		})

		t.Run("no-store", func(t *testing.T) {
			r := alice.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil)
			if r.Status != http.StatusOK || r.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("GET session: %d Cache-Control %q", r.Status, r.Header.Get("Cache-Control"))
			}
			for _, path := range []string{"/v1/sessions", "/v1/sessions/" + sid + "/permissions", coreElicitationPath(sid, "elicit_x")} {
				if cc := alice.Do(t, http.MethodGet, path, nil).Header.Get("Cache-Control"); cc != "no-store" {
					t.Fatalf("GET %s Cache-Control %q", path, cc)
				}
			}
		})

		t.Run("session agent", func(t *testing.T) {
			r := alice.Do(t, http.MethodGet, "/v1/sessions/"+grandchild+"/agent", nil)
			if r.Status != http.StatusOK || r.JSON(t)["id"] != agent {
				t.Fatalf("session agent: %d %s", r.Status, r.Body)
			}
		})
	})
}

// TestSessionsListPendingCount: GET /v1/sessions?parent_session_id= lists the children
// with pending_elicitations_count, which counts what that child's snapshot lists — its
// own prompts and its descendants'.
func TestSessionsListPendingCount(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		agent := c.CreateAgent(t)
		root := c.CreateSession(t, agent, "", "")
		a := c.CreateSession(t, agent, root, "worker-a:task")
		b := c.CreateSession(t, agent, root, "worker-b:task")
		aa := c.CreateSession(t, agent, a, "worker-a:sub")
		st := coreOpenStream(t, c, root)

		hookA, evA := corePark(t, c, st, a, testserver.ClaudeBody("Bash", map[string]any{"command": "ls"}))
		hookAA, evAA := corePark(t, c, st, aa, testserver.ClaudeBody("Bash", map[string]any{"command": "pwd"}))

		counts := func(parent string) map[string]float64 {
			t.Helper()
			r := c.Do(t, http.MethodGet, "/v1/sessions?parent_session_id="+parent, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("list: %d %s", r.Status, r.Body)
			}
			out := map[string]float64{}
			list, _ := r.JSON(t)["sessions"].([]any)
			for _, s := range list {
				m := s.(map[string]any)
				n, ok := m["pending_elicitations_count"].(float64)
				if !ok {
					t.Fatalf("list entry without pending_elicitations_count: %v", m)
				}
				if m["parent_session_id"] != parent {
					t.Fatalf("list of %s includes %v", parent, m)
				}
				out[m["id"].(string)] = n
			}
			return out
		}
		if got := counts(root); len(got) != 2 || got[a] != 2 || got[b] != 0 {
			t.Fatalf("children of root: %v (a=%s b=%s)", got, a, b)
		}
		if got := counts(a); len(got) != 1 || got[aa] != 1 {
			t.Fatalf("children of a: %v", got)
		}
		if n := len(coreSessionPending(t, c, a)); n != 2 {
			t.Fatalf("snapshot of a lists %d, want 2", n)
		}

		coreMustResolve(t, c, aa, evAA["elicitation_id"].(string), map[string]any{"action": "accept"})
		coreWantBehavior(t, hookAA, "allow")
		if got := counts(root); got[a] != 1 {
			t.Fatalf("after resolving aa: %v", got)
		}
		coreMustResolve(t, c, a, evA["elicitation_id"].(string), map[string]any{"action": "accept"})
		coreWantBehavior(t, hookA, "allow")
		if got := counts(root); got[a] != 0 || got[b] != 0 {
			t.Fatalf("after resolving all: %v", got)
		}
		// Unknown parent: 404.
		coreWantEnvelope(t, c.Do(t, http.MethodGet, "/v1/sessions?parent_session_id=conv_"+strings.Repeat("9", 32), nil), http.StatusNotFound, "not_found")
	})
}

// TestSessionPermissionsAPI: grants decide who may do what — edit can resolve, read can
// look but not decide (403), removing a grant removes access (404), the owner's grant is
// permanent (409), changing grants needs manage, and a __public__ grant admits everyone
// signed in. Sub-agent sessions follow their root.
func TestSessionPermissionsAPI(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice := srv.Client("alice@example.com")
		bob := srv.Client("bob@example.com")
		carol := srv.Client("carol@example.com")
		agent := alice.CreateAgent(t)
		sid := alice.CreateSession(t, agent, "", "")
		child := alice.CreateSession(t, agent, sid, "worker:perm")
		perms := "/v1/sessions/" + sid + "/permissions"
		st := coreOpenStream(t, alice, sid)

		grant := func(c *testserver.Client, user, level string) *testserver.Response {
			return c.Do(t, http.MethodPut, perms, map[string]any{"user": user, "level": level})
		}
		grants := func() map[string]string {
			r := alice.Do(t, http.MethodGet, perms, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("list grants: %d %s", r.Status, r.Body)
			}
			out := map[string]string{}
			for _, g := range r.JSON(t)["permissions"].([]any) {
				m := g.(map[string]any)
				out[m["user"].(string)] = m["level"].(string)
			}
			return out
		}
		if got := grants(); len(got) != 1 || got["alice@example.com"] != "owner" {
			t.Fatalf("initial grants = %v", got)
		}

		// Bob with edit resolves a prompt on the child (access follows the root).
		if r := grant(alice, "Bob@Example.com", "edit"); r.Status != http.StatusOK {
			t.Fatalf("grant edit: %d %s", r.Status, r.Body)
		}
		if got := grants(); got["bob@example.com"] != "edit" {
			t.Fatalf("grants = %v", got)
		}
		parked, ev := corePark(t, alice, st, child, testserver.ClaudeBody("Bash", map[string]any{"command": "ls"}))
		eid := ev["elicitation_id"].(string)
		coreMustResolve(t, bob, child, eid, map[string]any{"action": "accept"})
		coreWantBehavior(t, parked, "allow")
		if got := coreGetElicitation(t, alice, child, eid); got["resolved_by"] != "bob@example.com" {
			t.Fatalf("resolved_by = %v", got["resolved_by"])
		}
		// Edit is not manage: bob cannot hand out access.
		coreWantEnvelope(t, grant(bob, "carol@example.com", "read"), http.StatusForbidden, "forbidden")

		// Bob with read: may look, may not decide.
		if r := grant(alice, "bob@example.com", "read"); r.Status != http.StatusOK {
			t.Fatalf("grant read: %d %s", r.Status, r.Body)
		}
		parked, ev = corePark(t, alice, st, sid, testserver.ClaudeBody("Bash", map[string]any{"command": "whoami"}))
		eid = ev["elicitation_id"].(string)
		for _, path := range []string{"/v1/sessions/" + sid, "/v1/sessions/" + child, perms} {
			if r := bob.Do(t, http.MethodGet, path, nil); r.Status != http.StatusOK {
				t.Fatalf("reader GET %s: %d %s", path, r.Status, r.Body)
			}
		}
		coreWantEnvelope(t, bob.Do(t, http.MethodPost, coreResolvePath(sid, eid), map[string]any{"action": "accept"}), http.StatusForbidden, "forbidden")
		coreWantEnvelope(t, bob.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/events",
			map[string]any{"type": "approval", "data": map[string]any{"elicitation_id": eid, "action": "accept"}}), http.StatusForbidden, "forbidden")
		coreWantEnvelope(t, bob.Do(t, http.MethodGet, coreElicitationPath(sid, eid), nil), http.StatusForbidden, "forbidden")
		// A reader's own hook is not parked for someone else to decide: no verdict at once.
		if r := bob.Do(t, http.MethodPost, coreHookPath(sid), testserver.ClaudeBody("Bash", map[string]any{"command": "id"})); r.Status != http.StatusOK || len(r.Body) != 0 {
			t.Fatalf("reader hook: %d %q, want an empty 200", r.Status, r.Body)
		}
		if n := len(coreSessionPending(t, alice, sid)); n != 1 {
			t.Fatalf("pending = %d, want only alice's prompt", n)
		}
		coreWantPending(t, alice, sid, eid)

		// Grant removed: bob cannot even see the session.
		if r := alice.Do(t, http.MethodDelete, perms+"?user=bob@example.com", nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete grant: %d %s", r.Status, r.Body)
		}
		coreWantEnvelope(t, bob.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil), http.StatusNotFound, "not_found")
		coreWantEnvelope(t, bob.Do(t, http.MethodPost, coreResolvePath(sid, eid), map[string]any{"action": "accept"}), http.StatusNotFound, "not_found")

		// The owner grant stays.
		coreWantEnvelope(t, alice.Do(t, http.MethodDelete, perms+"?user=alice@example.com", nil), http.StatusConflict, "conflict")
		coreWantEnvelope(t, grant(alice, "alice@example.com", "read"), http.StatusConflict, "conflict")
		if got := grants(); got["alice@example.com"] != "owner" {
			t.Fatalf("grants after owner removal attempt = %v", got)
		}
		// Manage may grant, but still not remove the owner.
		grant(alice, "bob@example.com", "manage")
		if r := grant(bob, "carol@example.com", "edit"); r.Status != http.StatusOK {
			t.Fatalf("manager grants: %d %s", r.Status, r.Body)
		}
		coreWantEnvelope(t, bob.Do(t, http.MethodDelete, perms+"?user=alice@example.com", nil), http.StatusConflict, "conflict")
		if r := bob.Do(t, http.MethodDelete, perms, map[string]any{"user": "carol@example.com"}); r.Status != http.StatusNoContent {
			t.Fatalf("delete with a JSON body: %d %s", r.Status, r.Body)
		}
		alice.Do(t, http.MethodDelete, perms+"?user=bob@example.com", nil)

		// __public__ read: everyone signed in can read, nobody new can decide.
		coreWantEnvelope(t, carol.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil), http.StatusNotFound, "not_found")
		if r := grant(alice, "__public__", "read"); r.Status != http.StatusOK {
			t.Fatalf("public grant: %d %s", r.Status, r.Body)
		}
		if r := carol.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil); r.Status != http.StatusOK {
			t.Fatalf("public read: %d %s", r.Status, r.Body)
		}
		listed := false
		for _, s := range carol.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)["sessions"].([]any) {
			listed = listed || s.(map[string]any)["id"] == sid
		}
		if !listed {
			t.Fatal("a public session is missing from carol's list")
		}
		coreWantEnvelope(t, carol.Do(t, http.MethodPost, coreResolvePath(sid, eid), map[string]any{"action": "accept"}), http.StatusForbidden, "forbidden")
		coreWantPending(t, alice, sid, eid)

		coreMustResolve(t, alice, sid, eid, map[string]any{"action": "decline"})
		coreWantBehavior(t, parked, "deny")
	})
}
