package app_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestGeneratedSessionSecretSurvivesRestart: without --session-secret, a browser's CSRF
// cookie and token minted before a restart still decide a prompt after it, because the
// secret generated on the first start is kept in the database. A server configured with
// another --session-secret on the same database refuses them (the configured secret
// wins), which shows the check would fail if the secret changed at restart.
func TestGeneratedSessionSecretSurvivesRestart(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		dbURL := db.NewURL(t)

		first := testserver.StartWithoutSessionSecret(t, dbURL)
		c := first.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "restart")
		p, eid, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "date"})
		cookie, csrf := openApprovePage(t, first.URL, sid, eid)
		first.Stop()
		p.Wait(t, 15*time.Second) // the restart ends the parked hook with no verdict

		other := testserver.Start(t, dbURL, "--session-secret", strings.Repeat("o", 32))
		c = other.Client("")
		p, eid, _ = c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "date"})
		if status, body := postDecision(t, other.URL, sid, eid, cookie, csrf); status != http.StatusForbidden {
			t.Fatalf("a server with another --session-secret accepted the old cookie: %d\n%s", status, body)
		}
		other.Stop()
		p.Wait(t, 15*time.Second)

		second := testserver.StartWithoutSessionSecret(t, dbURL)
		c = second.Client("")
		p, eid, _ = c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "date"})
		if status, body := postDecision(t, second.URL, sid, eid, cookie, csrf); status != http.StatusSeeOther {
			t.Fatalf("after a restart the CSRF cookie minted before it was refused: %d, want 303\n%s", status, body)
		}
		r := p.Wait(t, 10*time.Second)
		if !bytes.Contains(r.Body, []byte(`"allow"`)) {
			t.Fatalf("the decision posted with the old cookie did not reach the hook: %d %s", r.Status, r.Body)
		}
	})
}

// openApprovePage GETs the approval page like a browser and returns its cookie header
// and the form's CSRF token.
func openApprovePage(t *testing.T, base, sid, eid string) (cookie, csrf string) {
	t.Helper()
	resp, err := http.Get(base + "/approve/" + sid + "/" + eid)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("approve page: %d\n%s", resp.StatusCode, body)
	}
	var parts []string
	for _, ck := range resp.Cookies() {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	csrf, _ = doc.Find(`input[name="csrf"]`).First().Attr("value")
	if len(parts) == 0 || csrf == "" {
		t.Fatalf("approve page set no cookie (%v) or has no CSRF token (%q)", parts, csrf)
	}
	return strings.Join(parts, "; "), csrf
}

// postDecision approves the prompt through its page's form with a given cookie and token.
func postDecision(t *testing.T, base, sid, eid, cookie, csrf string) (int, string) {
	t.Helper()
	form := url.Values{"csrf": {csrf}, "action": {"accept"}}
	req, _ := http.NewRequest(http.MethodPost, base+"/approve/"+sid+"/"+eid, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", cookie)
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
