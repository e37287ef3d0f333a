package handlers_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/internal/tokens"
)

const alice = "alice@example.com"

// withToken is a client that sends both a bearer token and the identity header user.
func withToken(srv *testserver.Server, token, user string) *testserver.Client {
	c := srv.TokenClient(token)
	c.User = user
	return c
}

// wantBadToken asserts the one answer every bad token gets: 401, the envelope, and the
// same message whatever was wrong.
func wantBadToken(t *testing.T, what string, r *testserver.Response) {
	t.Helper()
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("%s: %d, want 401: %s", what, r.Status, r.Body)
	}
	coreWantEnvelope(t, r, http.StatusUnauthorized, "unauthorized")
	if msg := r.JSON(t)["error"].(map[string]any)["message"]; msg != tokens.BadTokenMessage {
		t.Fatalf("%s: message %q, want %q", what, msg, tokens.BadTokenMessage)
	}
}

// TestTokenActsAsOwnerFromUntrustedPeer: with loopback outside --trusted-proxies (so no
// identity header is honoured), a token acts as its owner: it creates sessions as them
// and manages their tokens through /v1/me/tokens; a token wins over an identity
// header, and a bad token is 401 even with one.
func TestTokenActsAsOwnerFromUntrustedPeer(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--trusted-proxies", "10.0.0.0/8")
		firstID, first := srv.IssueToken(t, alice, "", "", time.Time{})
		c := srv.TokenClient(first)

		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		if r := c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil); r.Status != http.StatusOK || r.JSON(t)["created_by"] != alice {
			t.Fatalf("session made with the token: %d %s", r.Status, r.Body)
		}

		r := c.Do(t, http.MethodPost, "/v1/me/tokens", map[string]any{"name": "laptop hooks", "scope": "hooks"})
		if r.Status != http.StatusCreated {
			t.Fatalf("create token: %d %s", r.Status, r.Body)
		}
		made := r.JSON(t)
		secret, _ := made["token"].(string)
		id, _ := made["id"].(string)
		if !strings.HasPrefix(secret, tokens.Prefix) || len(secret) < 40 || !strings.HasPrefix(id, tokens.IDPrefix) ||
			made["name"] != "laptop hooks" || made["scope"] != "hooks" || !strings.HasPrefix(secret, made["prefix"].(string)) {
			t.Fatalf("created token = %s", r.Body)
		}

		r = c.Do(t, http.MethodGet, "/v1/me/tokens", nil)
		if r.Status != http.StatusOK || bytes.Contains(r.Body, []byte(secret)) || bytes.Contains(r.Body, []byte(first)) ||
			bytes.Contains(r.Body, []byte(`"token"`)) || bytes.Contains(r.Body, []byte(`"hash"`)) {
			t.Fatalf("list leaks a secret or failed: %d %s", r.Status, r.Body)
		}
		var list struct {
			Tokens []tokens.View `json:"tokens"`
		}
		if err := json.Unmarshal(r.Body, &list); err != nil || len(list.Tokens) != 2 {
			t.Fatalf("list = %s", r.Body)
		}
		byID := map[string]tokens.View{}
		for _, v := range list.Tokens {
			byID[v.ID] = v
		}
		if v := byID[firstID]; v.LastUsedAt == nil || v.Scope != "all" || v.CreatedAt.IsZero() {
			t.Fatalf("the token in use: %+v (want a last use and scope all)", v)
		}
		if v := byID[id]; v.LastUsedAt != nil || v.Scope != "hooks" || v.Name != "laptop hooks" {
			t.Fatalf("the new token: %+v", v)
		}

		// The token wins over an identity header (even one from an untrusted peer).
		both := withToken(srv, first, "mallory@example.com")
		sid2 := both.CreateSession(t, both.CreateAgent(t), "", "")
		if r := c.Do(t, http.MethodGet, "/v1/sessions/"+sid2, nil); r.Status != http.StatusOK || r.JSON(t)["created_by"] != alice {
			t.Fatalf("token and header: %d %s", r.Status, r.Body)
		}
		wantBadToken(t, "bad token with a header", withToken(srv, first+"x", "alice@example.com").Do(t, http.MethodGet, "/v1/sessions", nil))

		// Someone else's token is not found, as is one already revoked.
		_, bobs := srv.IssueToken(t, "bob@example.com", "", "", time.Time{})
		if r := srv.TokenClient(bobs).Do(t, http.MethodDelete, "/v1/me/tokens/"+id, nil); r.Status != http.StatusNotFound {
			t.Fatalf("bob revokes alice's token: %d %s", r.Status, r.Body)
		}
		if r := c.Do(t, http.MethodDelete, "/v1/me/tokens/"+id, nil); r.Status != http.StatusNoContent {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		coreWantEnvelope(t, c.Do(t, http.MethodDelete, "/v1/me/tokens/"+id, nil), http.StatusNotFound, "not_found")
		wantBadToken(t, "revoked token", srv.TokenClient(secret).Do(t, http.MethodPost, "/v1/hooks/claude",
			testserver.ClaudeBody("Bash", map[string]any{"command": "date"})))
		if r := c.Do(t, http.MethodGet, "/v1/me/tokens", nil); !bytes.Contains(r.Body, []byte(firstID)) || bytes.Contains(r.Body, []byte(id)) {
			t.Fatalf("list after revoke: %s", r.Body)
		}
		for _, body := range []string{`{}`, `{"name":"  "}`, `{"name":"x","scope":"admin"}`, `{"name":"x","expires_in":"-1h"}`, `[]`} {
			coreWantEnvelope(t, c.Do(t, http.MethodPost, "/v1/me/tokens", body), http.StatusBadRequest, "invalid_input")
		}
	})
}

// TestBadTokens: a malformed, unknown, revoked or expired token — or two Authorization
// headers — is 401 with the same envelope and message, in header mode (even alongside a
// trusted identity header) and with auth off.
func TestBadTokens(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		for _, mode := range []string{"header", "none"} {
			srv := testserver.Start(t, db.NewURL(t), "--auth", mode)
			owner := alice
			if mode == "none" {
				owner = "local"
			}
			_, good := srv.IssueToken(t, owner, "", "", time.Time{})
			_, expired := srv.IssueToken(t, owner, "", "1h", time.Now().Add(-2*time.Hour))
			revokedID, revoked := srv.IssueToken(t, owner, "", "", time.Time{})
			if r := srv.TokenClient(revoked).Do(t, http.MethodDelete, "/v1/me/tokens/"+revokedID, nil); r.Status != http.StatusNoContent {
				t.Fatalf("%s: revoke: %d %s", mode, r.Status, r.Body)
			}
			if r := srv.TokenClient(good).Do(t, http.MethodGet, "/v1/me/tokens", nil); r.Status != http.StatusOK {
				t.Fatalf("%s: good token: %d %s", mode, r.Status, r.Body)
			}
			unknown := tokens.Prefix + strings.Repeat("A", len(good)-len(tokens.Prefix))
			for name, tok := range map[string]string{"empty": "", "malformed": "ght_short", "no prefix": good[4:] + "AAAA",
				"unknown": unknown, "expired": expired, "revoked": revoked, "tampered": good[:len(good)-1] + "_"} {
				user := ""
				if mode == "header" {
					user = alice // a trusted header does not rescue a bad token
				}
				wantBadToken(t, mode+" "+name, withToken(srv, tok, user).Do(t, http.MethodGet, "/v1/sessions", nil))
			}
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/sessions", nil)
			req.Header.Add("Authorization", "Bearer "+good)
			req.Header.Add("Authorization", "Bearer "+good)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			wantBadToken(t, mode+" two headers", &testserver.Response{Status: resp.StatusCode, Header: resp.Header, Body: body})
		}
	})
}

// TestHooksOnlyToken: a hooks-only token parks a Claude hook and reads its own prompt
// and session, and is refused (403) everywhere else: listing sessions, resolving,
// permissions, streams, the tokens API and the pages.
func TestHooksOnlyToken(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--trusted-proxies", "10.0.0.0/8")
		_, full := srv.IssueToken(t, alice, "", "", time.Time{})
		_, hooksOnly := srv.IssueToken(t, alice, "hooks", "", time.Time{})
		person, hooks := srv.TokenClient(full), srv.TokenClient(hooksOnly)
		sid := person.CreateSession(t, person.CreateAgent(t), "", "")

		st := person.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		defer st.Close()
		st.WaitHeartbeat(t)
		parked := hooks.ParkAsync("/v1/sessions/"+sid+"/hooks/permission-request", testserver.ClaudeBody("Bash", map[string]any{"command": "date"}))
		eid := st.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)["elicitation_id"].(string)

		if r := hooks.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil); r.Status != http.StatusOK || r.JSON(t)["status"] != "pending" {
			t.Fatalf("hooks token reads its prompt: %d %s", r.Status, r.Body)
		}
		if r := hooks.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil); r.Status != http.StatusOK {
			t.Fatalf("hooks token reads its session: %d %s", r.Status, r.Body)
		}
		for _, req := range []struct{ method, path string }{
			{http.MethodGet, "/v1/sessions"},
			{http.MethodPost, "/v1/sessions"},
			{http.MethodPost, "/v1/agents"},
			{http.MethodPost, "/v1/sessions/" + sid + "/elicitations/" + eid + "/resolve"},
			{http.MethodGet, "/v1/sessions/" + sid + "/permissions"},
			{http.MethodPut, "/v1/sessions/" + sid + "/permissions"},
			{http.MethodGet, "/v1/sessions/" + sid + "/stream"},
			{http.MethodPost, "/v1/sessions/" + sid + "/events"},
			{http.MethodGet, "/v1/me/tokens"},
			{http.MethodPost, "/v1/me/tokens"},
			{http.MethodDelete, "/v1/me/tokens/tok_x"},
			{http.MethodGet, "/v1/rules"},
			{http.MethodGet, "/v1/audit"},
		} {
			r := hooks.Do(t, req.method, req.path, map[string]any{"action": "accept", "name": "x", "user": "bob@example.com", "level": "edit"})
			coreWantEnvelope(t, r, http.StatusForbidden, "forbidden")
		}
		for _, path := range []string{"/inbox", "/settings/tokens", "/approve/" + sid + "/" + eid, "/sessions/" + sid} {
			if r := hooks.Do(t, http.MethodGet, path, nil); r.Status != http.StatusForbidden {
				t.Fatalf("hooks token on page %s: %d", path, r.Status)
			}
		}
		if parked.Done() {
			t.Fatal("the parked hook answered before anyone decided")
		}
		if r := person.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"}); r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		if ans := parked.Wait(t, 10*time.Second); !strings.Contains(string(ans.Body), `"behavior":"allow"`) {
			t.Fatalf("hook answered %d %s", ans.Status, ans.Body)
		}
	})
}

// TestTokenRevokedOnOneReplicaRefusedOnOther: two replicas on one Postgres; a token
// revoked through A is refused by B on the very next request.
func TestTokenRevokedOnOneReplicaRefusedOnOther(t *testing.T) {
	t.Parallel()
	db := testserver.PostgresDB(t)
	u := db.NewURL(t)
	a := testserver.Start(t, u, "--auth", "header", "--trusted-proxies", "10.0.0.0/8")
	b := testserver.Start(t, u, "--auth", "header", "--trusted-proxies", "10.0.0.0/8")
	id, secret := a.IssueToken(t, alice, "", "", time.Time{})
	if r := b.TokenClient(secret).Do(t, http.MethodGet, "/v1/sessions", nil); r.Status != http.StatusOK {
		t.Fatalf("B before revoke: %d %s", r.Status, r.Body)
	}
	if r := a.TokenClient(secret).Do(t, http.MethodGet, "/v1/me/tokens", nil); !bytes.Contains(r.Body, []byte(`"last_used_at":"`)) {
		t.Fatalf("A does not show B's use: %s", r.Body)
	}
	if r := a.TokenClient(secret).Do(t, http.MethodDelete, "/v1/me/tokens/"+id, nil); r.Status != http.StatusNoContent {
		t.Fatalf("revoke on A: %d %s", r.Status, r.Body)
	}
	wantBadToken(t, "B after revoke on A", b.TokenClient(secret).Do(t, http.MethodGet, "/v1/sessions", nil))
	wantBadToken(t, "A after revoke on A", a.TokenClient(secret).Do(t, http.MethodGet, "/v1/sessions", nil))
}

// tokenBrowser is a person's browser on the tokens page: a cookie jar, the identity
// header a trusted proxy would add, and no redirects followed.
type tokenBrowser struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func (b *tokenBrowser) do(method, path string, form url.Values) (int, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, b.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("X-Forwarded-Email", alice)
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

func docOf(t *testing.T, html string) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestTokensPage: /settings/tokens creates a token (CSRF checked) and shows its secret
// once; the secret works as the person; the list shows name, prefix, scope and last
// use; revoking from the page ends the token.
func TestTokensPage(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		jar, _ := cookiejar.New(nil)
		b := &tokenBrowser{t: t, base: srv.URL, hc: &http.Client{Jar: jar,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}

		status, html := b.do(http.MethodGet, "/settings/tokens", nil)
		doc := docOf(t, html)
		csrf, _ := doc.Find(`[data-testid="token-form"] input[name="csrf"]`).Attr("value")
		if status != http.StatusOK || csrf == "" || doc.Find(`[data-testid="no-tokens"]`).Length() != 1 {
			t.Fatalf("GET /settings/tokens: %d\n%s", status, html)
		}
		if status, _ := b.do(http.MethodPost, "/settings/tokens", url.Values{"name": {"laptop"}}); status != http.StatusForbidden {
			t.Fatalf("create without CSRF: %d", status)
		}
		status, html = b.do(http.MethodPost, "/settings/tokens", url.Values{"csrf": {csrf}, "name": {"laptop"}, "scope": {"all"}, "expires_in": {"30d"}})
		doc = docOf(t, html)
		secret := doc.Find(`[data-testid="token-secret"]`).Text()
		if status != http.StatusOK || !strings.HasPrefix(secret, tokens.Prefix) {
			t.Fatalf("create on page: %d\n%s", status, html)
		}

		if r := srv.TokenClient(secret).Do(t, http.MethodGet, "/v1/me/tokens", nil); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"name":"laptop"`) {
			t.Fatalf("the page's token on the API: %d %s", r.Status, r.Body)
		}
		status, html = b.do(http.MethodGet, "/settings/tokens", nil)
		doc = docOf(t, html)
		row := doc.Find(`[data-testid="token-row"]`)
		if status != http.StatusOK || strings.Contains(html, secret) || row.Length() != 1 ||
			row.Find(`[data-testid="token-name"]`).Text() != "laptop" ||
			!strings.HasPrefix(secret, strings.TrimSuffix(row.Find(`[data-testid="token-prefix"]`).Text(), "…")) ||
			strings.TrimSpace(row.Find(`[data-testid="token-scope"]`).Text()) != "all" ||
			row.Find(`[data-testid="token-last-used"] time`).Length() != 1 {
			t.Fatalf("list after create (the secret must not show again): %d\n%s", status, html)
		}
		action, _ := row.Find("form").Attr("action")
		if status, _ := b.do(http.MethodPost, action, url.Values{"csrf": {"nope"}}); status != http.StatusForbidden {
			t.Fatalf("revoke with a wrong CSRF token: %d", status)
		}
		if status, _ := b.do(http.MethodPost, action, url.Values{"csrf": {csrf}}); status != http.StatusSeeOther {
			t.Fatalf("revoke on page: %d", status)
		}
		wantBadToken(t, "token revoked on the page", srv.TokenClient(secret).Do(t, http.MethodGet, "/v1/me/tokens", nil))
		if _, html := b.do(http.MethodGet, "/settings/tokens", nil); docOf(t, html).Find(`[data-testid="no-tokens"]`).Length() != 1 {
			t.Fatalf("list after revoke:\n%s", html)
		}
	})
}
