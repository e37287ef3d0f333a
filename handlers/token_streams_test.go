package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// promptly bounds how long a stream may stay open once its token has ended: well
// under the heartbeat (15 s), so a stream that ends only when its heartbeat re-checks
// does not pass.
const promptly = 8 * time.Second

// tokenStreams opens, with client c, the live streams a token can hold on session sid:
// the API stream (its heartbeat seen) and the session and inbox pages' streams.
func tokenStreams(t *testing.T, c *testserver.Client, sid string) map[string]*testserver.Stream {
	t.Helper()
	api := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
	api.WaitHeartbeat(t)
	out := map[string]*testserver.Stream{"api": api}
	for name, path := range map[string]string{"session page": "/sessions/" + sid + "/events", "inbox": "/inbox/events"} {
		st := c.OpenStream(t, path)
		st.Next(t, coreWait) // the page's first fragment: the stream is registered
		out[name] = st
	}
	return out
}

// wantEndedWithout asserts that each stream ends promptly and that none of them sent
// anything naming secret (the tool input of a prompt parked after the token ended).
func wantEndedWithout(t *testing.T, streams map[string]*testserver.Stream, secret string) {
	t.Helper()
	deadline := time.Now().Add(promptly)
	for name, st := range streams {
		for _, f := range st.FramesUntilClosed(t, max(time.Until(deadline), 100*time.Millisecond)) {
			if strings.Contains(f.Data, secret) {
				t.Fatalf("%s stream sent a prompt parked after its token ended: %s %s", name, f.Event, f.Data)
			}
		}
	}
}

// TestRevokedTokenEndsItsStreams: revoking a token ends, at once, every stream opened
// with it — the API stream and the pages' streams — and a prompt parked right after
// the revocation reaches none of them; a stream of the same person opened with
// another token goes on and sees that prompt.
func TestRevokedTokenEndsItsStreams(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--trusted-proxies", "10.0.0.0/8")
		_, keep := srv.IssueToken(t, alice, "", "", time.Time{})
		revokedID, revoked := srv.IssueToken(t, alice, "", "", time.Time{})
		person := srv.TokenClient(keep)
		sid := person.CreateSession(t, person.CreateAgent(t), "", "")

		streams := tokenStreams(t, srv.TokenClient(revoked), sid)
		other := person.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		other.WaitHeartbeat(t)

		if r := person.Do(t, http.MethodDelete, "/v1/me/tokens/"+revokedID, nil); r.Status != http.StatusNoContent {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		secret := "echo parked-after-revoke"
		parked := person.ParkAsync("/v1/sessions/"+sid+"/hooks/permission-request",
			testserver.ClaudeBody("Bash", map[string]any{"command": secret}))
		ev := other.WaitFor(t, "response.elicitation_request", coreWait)
		if !strings.Contains(ev.Data, secret) {
			t.Fatalf("the other token's stream saw %s", ev.Data)
		}
		wantEndedWithout(t, streams, secret)

		coreMustResolve(t, person, sid, ev.Map(t)["elicitation_id"].(string), map[string]any{"action": "accept"})
		coreWantBehavior(t, parked, "allow")
		wantBadToken(t, "a new stream with the revoked token", srv.TokenClient(revoked).Do(t, http.MethodGet, "/v1/sessions/"+sid+"/stream", nil))
	})
}

// TestTokenExpiringWhileStreaming: a stream opened with a token that expires ends when
// the token does (not at some later heartbeat), and not before.
func TestTokenExpiringWhileStreaming(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--trusted-proxies", "10.0.0.0/8")
		_, keep := srv.IssueToken(t, alice, "", "", time.Time{})
		person := srv.TokenClient(keep)
		sid := person.CreateSession(t, person.CreateAgent(t), "", "")

		const lifetime = 3 * time.Second
		_, expiring := srv.IssueToken(t, alice, "", lifetime.String(), time.Time{})
		expiresAt := time.Now().Add(lifetime)
		streams := tokenStreams(t, srv.TokenClient(expiring), sid)
		if time.Now().After(expiresAt) {
			t.Fatalf("the streams took longer than the token's %s lifetime to open; nothing was tested", lifetime)
		}
		for name, st := range streams {
			st.FramesUntilClosed(t, lifetime+promptly)
			if early := time.Until(expiresAt); early > time.Second {
				// The store's clock and this one agree to well within a second.
				t.Fatalf("%s stream ended %s before its token expired", name, early)
			}
		}
		wantBadToken(t, "a new stream with the expired token", srv.TokenClient(expiring).Do(t, http.MethodGet, "/v1/sessions/"+sid+"/stream", nil))
	})
}

// TestRevokedTokenEndsStreamsOnEveryReplica: two replicas on one Postgres; a token
// revoked through A ends its streams on B at once (not at B's next heartbeat), and a
// prompt parked on A right after the revocation reaches none of them.
func TestRevokedTokenEndsStreamsOnEveryReplica(t *testing.T) {
	t.Parallel()
	db := testserver.PostgresDB(t)
	u := db.NewURL(t)
	a := testserver.Start(t, u, "--auth", "header", "--trusted-proxies", "10.0.0.0/8")
	b := testserver.Start(t, u, "--auth", "header", "--trusted-proxies", "10.0.0.0/8")
	_, keep := a.IssueToken(t, alice, "", "", time.Time{})
	revokedID, revoked := a.IssueToken(t, alice, "", "", time.Time{})
	onA := a.TokenClient(keep)
	sid := onA.CreateSession(t, onA.CreateAgent(t), "", "")

	streams := tokenStreams(t, b.TokenClient(revoked), sid)
	for name, st := range tokenStreams(t, a.TokenClient(revoked), sid) {
		streams["A "+name] = st
	}
	watch := b.TokenClient(keep).OpenStream(t, "/v1/sessions/"+sid+"/stream")
	watch.WaitHeartbeat(t)

	if r := onA.Do(t, http.MethodDelete, "/v1/me/tokens/"+revokedID, nil); r.Status != http.StatusNoContent {
		t.Fatalf("revoke on A: %d %s", r.Status, r.Body)
	}
	secret := "echo parked-on-A-after-revoke"
	parked := onA.ParkAsync("/v1/sessions/"+sid+"/hooks/permission-request",
		testserver.ClaudeBody("Bash", map[string]any{"command": secret}))
	ev := watch.WaitFor(t, "response.elicitation_request", coreWait)
	if !strings.Contains(ev.Data, secret) {
		t.Fatalf("B's stream with the other token saw %s", ev.Data)
	}
	wantEndedWithout(t, streams, secret)

	coreMustResolve(t, onA, sid, ev.Map(t)["elicitation_id"].(string), map[string]any{"action": "accept"})
	coreWantBehavior(t, parked, "allow")
}
