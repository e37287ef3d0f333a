package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestApprovePageStates covers who may see the page and what a decided or unknown
// prompt shows: no identity → 401 "sign in" page; no access → 404 page; read access →
// 403 page; unknown id → "Nothing to approve here"; decided elsewhere → who, when, how.
func TestApprovePageStates(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice := srv.Client("alice@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "alice's work")
		parked, eid, _ := alice.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls"})
		path := "/approve/" + sid + "/" + eid

		anon := newBrowser(t, srv, "")
		p := anon.get(t, path)
		mustStatus(t, p, http.StatusUnauthorized)
		if !strings.Contains(p.Doc.Find("h1").Text(), "Sign in through your proxy") {
			t.Fatalf("401 page: %s", p.Body)
		}

		bob := newBrowser(t, srv, "bob@example.com")
		p = bob.get(t, path)
		mustStatus(t, p, http.StatusNotFound)
		if p.testid("error").Length() != 1 || strings.Contains(p.Body, "alice") || strings.Contains(p.Body, "Bash") {
			t.Fatalf("404 page leaks or is not the error page: %s", p.Body)
		}
		// bob cannot decide either, even with a token of his own (from his own prompt).
		bobAPI := srv.Client("bob@example.com")
		bobSID := bobAPI.CreateSession(t, bobAPI.CreateAgent(t), "", "")
		bobEID := openMCPForm(t, bobAPI, bobSID, "bob's own", map[string]any{})
		tok := bob.get(t, "/approve/"+bobSID+"/"+bobEID).csrf(t)
		mustStatus(t, bob.post(t, path, url.Values{"csrf": {tok}, "action": {"accept"}}, false), http.StatusNotFound)

		r := alice.Do(t, http.MethodPut, "/v1/sessions/"+sid+"/permissions", map[string]any{"user": "bob@example.com", "level": "read"})
		if r.Status >= 300 {
			t.Fatalf("grant: %d %s", r.Status, r.Body)
		}
		mustStatus(t, bob.get(t, path), http.StatusForbidden)
		mustStatus(t, bob.post(t, path, url.Values{"csrf": {tok}, "action": {"accept"}}, false), http.StatusForbidden)
		if parked.Done() {
			t.Fatalf("refused user's post woke the hook")
		}

		ab := newBrowser(t, srv, "alice@example.com")
		aliceTok := ab.get(t, path).csrf(t)
		p = ab.get(t, "/approve/"+sid+"/elicit_00000000000000000000000000000000")
		mustStatus(t, p, http.StatusNotFound)
		if p.testid("missing").Length() != 1 || !strings.Contains(p.Body, "Nothing to approve here") {
			t.Fatalf("unknown id page: %s", p.Body)
		}

		r = alice.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "decline"})
		if r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		parked.Wait(t, 10*time.Second)
		p = ab.get(t, path)
		mustStatus(t, p, http.StatusOK)
		detail := p.text("outcome-detail")
		if p.text("outcome-headline") != "Rejected" || !strings.HasPrefix(detail, "Resolved by alice@example.com at ") || !strings.HasSuffix(detail, "via the API.") {
			t.Fatalf("decided page: %q / %q", p.text("outcome-headline"), detail)
		}
		// A late post on a decided prompt changes nothing and says so.
		r2 := ab.post(t, path, url.Values{"csrf": {aliceTok}, "action": {"accept"}}, false)
		mustStatus(t, r2, http.StatusSeeOther)
		p = ab.get(t, path)
		if p.text("outcome-headline") != "Rejected" || !strings.Contains(p.text("flash"), "already decided") {
			t.Fatalf("late post: %q flash %q", p.text("outcome-headline"), p.text("flash"))
		}
	})
}

// TestPagesEscapeUntrustedText: tool names, inputs, titles, agent names and plans are
// text, never markup.
func TestPagesEscapeUntrustedText(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		const xss = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">`
		r := c.Do(t, http.MethodPost, "/v1/agents", map[string]any{"name": "agent " + xss})
		aid := r.JSON(t)["id"].(string)
		sid := c.CreateSession(t, aid, "", "title "+xss)
		_, eid, _ := c.ParkClaude(t, sid, sid, "Tool"+xss, map[string]any{"command": "echo " + xss, "note": xss})
		_, planID, _ := c.ParkClaude(t, sid, sid, "ExitPlanMode", map[string]any{"plan": "# Plan\n\n" + xss + "\n\n[x](javascript:alert(1))"})
		b := newBrowser(t, srv, "")
		for _, path := range []string{"/approve/" + sid + "/" + eid, "/approve/" + sid + "/" + planID, "/inbox", "/sessions/" + sid} {
			p := b.get(t, path)
			mustStatus(t, p, http.StatusOK)
			low := strings.ToLower(p.Body)
			for _, bad := range []string{"<script>window", "<img src=x", `href="javascript`} {
				if strings.Contains(low, bad) {
					t.Errorf("%s renders %q unescaped", path, bad)
				}
			}
			if p.Doc.Find("script:not([src])").Length() != 0 {
				t.Errorf("%s has an inline script", path)
			}
		}
		p := b.get(t, "/approve/"+sid+"/"+eid)
		if !strings.Contains(p.text("message"), "<script>window.__pwned=1</script>") || !strings.Contains(p.text("tool-input"), `onerror=\"window.__pwned=1\"`) {
			t.Fatalf("payload not shown as text: message %q input %q", p.text("message"), p.text("tool-input"))
		}
		if !strings.Contains(p.text("agent"), "<img src=x") {
			t.Fatalf("agent name not shown as text: %q", p.text("agent"))
		}
		plan := b.get(t, "/approve/"+sid+"/"+planID)
		if plan.testid("plan").Find("h1").Text() != "Plan" || plan.testid("form-plan").Length() != 1 {
			t.Fatalf("plan not rendered as markdown: %s", plan.Body)
		}
		if csp := p.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Fatalf("CSP = %q", csp)
		}
	})
}

// TestStaticAssets: the vendored htmx and SSE extension and our CSS/JS are served from
// the binary with long cache headers, under the URLs the pages reference.
func TestStaticAssets(t *testing.T) {
	srv := testserver.Start(t, "sqlite://"+t.TempDir()+"/db.sqlite")
	b := newBrowser(t, srv, "")
	p := b.get(t, "/inbox")
	var refs []string
	p.Doc.Find(`script[src], link[rel="stylesheet"]`).Each(func(_ int, s *goquery.Selection) {
		refs = append(refs, s.AttrOr("src", s.AttrOr("href", "")))
	})
	if len(refs) != 4 {
		t.Fatalf("page references %v", refs)
	}
	for _, ref := range refs {
		r := b.get(t, ref)
		mustStatus(t, r, http.StatusOK)
		if cc := r.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("%s Cache-Control = %q", ref, cc)
		}
		ct := r.Header.Get("Content-Type")
		if !strings.Contains(ct, "javascript") && !strings.Contains(ct, "css") {
			t.Errorf("%s Content-Type = %q", ref, ct)
		}
	}
	for _, want := range []string{"/static/vendor/htmx-2.0.11.min.js", "/static/vendor/htmx-ext-sse-2.2.4.min.js"} {
		found := false
		for _, ref := range refs {
			found = found || strings.HasPrefix(ref, want)
		}
		if !found {
			t.Errorf("pages do not load %s: %v", want, refs)
		}
	}
	r := b.get(t, "/static/vendor/htmx-2.0.11.min.js")
	if !strings.HasPrefix(r.Body, "var htmx=") {
		t.Errorf("htmx body starts %q", r.Body[:20])
	}
	for _, missing := range []string{"/static/nope.js", "/static/", "/static/vendor/", "/static/../go.mod"} {
		if r := b.get(t, missing); r.Status != http.StatusNotFound {
			t.Errorf("%s = %d, want 404", missing, r.Status)
		}
	}
}

// TestErrorPages: unknown browser paths get the HTML error page; a refused htmx post
// gets a flash fragment aimed at the page's flash slot; the API keeps its envelope.
func TestErrorPages(t *testing.T) {
	srv := testserver.Start(t, "sqlite://"+t.TempDir()+"/db.sqlite")
	b := newBrowser(t, srv, "")
	p := b.get(t, "/no/such/page")
	mustStatus(t, p, http.StatusNotFound)
	if p.testid("error").AttrOr("data-status", "") != "404" || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("404 page: %s", p.Body)
	}
	r := b.post(t, "/inbox/conv_00000000000000000000000000000000/elicit_00000000000000000000000000000000", url.Values{"action": {"accept"}}, true)
	mustStatus(t, r, http.StatusForbidden)
	if r.Header.Get("HX-Retarget") != "#flash" || r.testid("flash").Length() != 1 || r.Doc.Find("html body main").Length() != 0 {
		t.Fatalf("htmx error: %v %s", r.Header, r.Body)
	}
	api := srv.Client("").Do(t, http.MethodGet, "/v1/sessions/conv_nope", nil)
	if api.Status != http.StatusNotFound || !strings.Contains(string(api.Body), `"not_found"`) {
		t.Fatalf("API error: %d %s", api.Status, api.Body)
	}
}
