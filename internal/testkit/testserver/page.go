package testserver

import (
	"bytes"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// DecideOnPage answers a prompt the way a person does in a browser: it opens the
// approval page /approve/{sid}/{eid} (keeping the cookie that carries the CSRF
// secret), then submits the page's own form with action ("accept" or "decline") and
// an optional reason. It fails the test unless the page answers the post with the
// post/redirect/get 303.
func (s *Server) DecideOnPage(t testing.TB, user, sid, eid, action, reason string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	path := "/approve/" + sid + "/" + eid
	do := func(req *http.Request) (int, string) {
		t.Helper()
		if user != "" {
			req.Header.Set("X-Forwarded-Email", user)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", req.Method, path, err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	get, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
	status, body := do(get)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", path, status, body)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	csrf, _ := doc.Find(`input[name="csrf"]`).First().Attr("value")
	if csrf == "" {
		t.Fatalf("the approval page %s has no form to decide with:\n%s", path, body)
	}
	form := url.Values{"csrf": {csrf}, "action": {action}}
	if reason != "" {
		form.Set("feedback", reason)
	}
	post, _ := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(form.Encode()))
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if status, body := do(post); status != http.StatusSeeOther {
		t.Fatalf("POST %s (%s): %d, want 303\n%s", path, action, status, body)
	}
}
