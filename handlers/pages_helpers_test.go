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

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// browserClient is a cookie-keeping HTTP client that does not follow redirects, so a
// test sees the 303 of post/redirect/get.
type browserClient struct {
	base string
	user string
	hc   *http.Client
}

func newBrowser(t *testing.T, srv *testserver.Server, user string) *browserClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &browserClient{base: srv.URL, user: user, hc: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

type page struct {
	Status int
	Header http.Header
	Body   string
	Doc    *goquery.Document
}

func (b *browserClient) do(t *testing.T, req *http.Request) *page {
	t.Helper()
	if b.user != "" {
		req.Header.Set("X-Forwarded-Email", b.user)
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("parse %s: %v", req.URL.Path, err)
	}
	return &page{Status: resp.StatusCode, Header: resp.Header, Body: string(raw), Doc: doc}
}

func (b *browserClient) get(t *testing.T, path string) *page {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.base+path, nil)
	return b.do(t, req)
}

// post submits a form; htmx adds the header htmx sends.
func (b *browserClient) post(t *testing.T, path string, form url.Values, htmx bool) *page {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if htmx {
		req.Header.Set("HX-Request", "true")
	}
	return b.do(t, req)
}

// testid returns the selection of elements with a data-testid.
func (p *page) testid(id string) *goquery.Selection {
	return p.Doc.Find(`[data-testid="` + id + `"]`)
}

func (p *page) text(id string) string {
	return strings.TrimSpace(strings.Join(strings.Fields(p.testid(id).First().Text()), " "))
}

func (p *page) csrf(t *testing.T) string {
	t.Helper()
	v, ok := p.Doc.Find(`input[name="csrf"]`).First().Attr("value")
	if !ok || v == "" {
		t.Fatalf("page has no CSRF token (status %d):\n%s", p.Status, p.Body)
	}
	return v
}

func mustStatus(t *testing.T, p *page, want int) {
	t.Helper()
	if p.Status != want {
		t.Fatalf("status %d, want %d\n%s", p.Status, want, p.Body)
	}
}

// decision reads the PermissionRequest decision of a parked hook's answer.
func decision(t *testing.T, r *testserver.Response) map[string]any {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("hook answered %d %s", r.Status, r.Body)
	}
	var out struct {
		HookSpecificOutput struct {
			Decision map[string]any `json:"decision"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil || out.HookSpecificOutput.Decision == nil {
		t.Fatalf("hook answer has no decision: %s", r.Body)
	}
	return out.HookSpecificOutput.Decision
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// elicitationStatus reads a prompt's state through the API.
func elicitationStatus(t *testing.T, c *testserver.Client, sid, eid string) map[string]any {
	t.Helper()
	r := c.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("get elicitation: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)
}

// openMCPForm opens an MCP form prompt through an mcp_elicitation event.
func openMCPForm(t *testing.T, c *testserver.Client, sid, message string, schema map[string]any) string {
	t.Helper()
	r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/events", map[string]any{
		"type": "mcp_elicitation", "data": map[string]any{"message": message, "requestedSchema": schema}})
	if r.Status != http.StatusAccepted {
		t.Fatalf("mcp_elicitation: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)["elicitation_id"].(string)
}
