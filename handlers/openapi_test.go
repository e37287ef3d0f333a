package handlers_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/gatehouse-dev/gatehouse/api"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

var echoParam = regexp.MustCompile(`:([A-Za-z_]+)`)

// TestOpenAPICoversEveryRoute: the Echo route table and the described API list the same
// /v1 routes — a route the document lacks (or describes but the server lacks) fails.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	t.Parallel()
	doc, err := api.Load()
	if err != nil {
		t.Fatal(err)
	}
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t))
	served := map[string]bool{}
	for _, r := range srv.App.Echo.Routes() {
		if !strings.HasPrefix(r.Path, "/v1/") || strings.HasSuffix(r.Path, "*") || strings.HasSuffix(r.Name, "NotFoundHandler") {
			continue
		}
		path := echoParam.ReplaceAllString(r.Path, "{$1}")
		key := r.Method + " " + path
		served[key] = true
		item := doc.Paths.Value(path)
		if item == nil || item.GetOperation(r.Method) == nil {
			t.Errorf("route %s is served but not in api/openapi.yaml", key)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !served[method+" "+path] {
				t.Errorf("api/openapi.yaml describes %s %s, which the server does not serve", method, path)
			}
		}
	}
}

// TestOpenAPIServed: the document is served as JSON without an identity, and the
// reference page lists every operation with its statuses.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--auth", "header")
	anon := srv.Client("")
	r := anon.Do(t, http.MethodGet, "/v1/openapi.json", nil)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("openapi.json: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Paths["/v1/sessions/{sid}/elicitations/{eid}/resolve"]["post"] == nil {
		t.Fatalf("served document: openapi %q, %d paths", doc.OpenAPI, len(doc.Paths))
	}

	page := anon.Do(t, http.MethodGet, "/api", nil)
	if page.Status != http.StatusOK || page.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("/api: %d, CSP %q", page.Status, page.Header.Get("Content-Security-Policy"))
	}
	dom, err := goquery.NewDocumentFromReader(strings.NewReader(string(page.Body)))
	if err != nil {
		t.Fatal(err)
	}
	if n := dom.Find("script").Length(); n != 0 {
		t.Errorf("/api has %d scripts; it needs none", n)
	}
	ops := 0
	for _, item := range doc.Paths {
		for method := range item {
			if method != "parameters" {
				ops++
			}
		}
	}
	if n := dom.Find(`[data-testid=operation]`).Length(); n != ops {
		t.Errorf("/api shows %d operations, the document has %d", n, ops)
	}
	resolve := dom.Find(`[data-testid=operation][data-method=POST][data-path="/v1/sessions/{sid}/elicitations/{eid}/resolve"]`)
	for _, status := range []string{"202", "404", "422"} {
		if resolve.Find(`[data-testid=response][data-status="`+status+`"]`).Length() != 1 {
			t.Errorf("/api: resolve does not list status %s", status)
		}
	}
	if dom.Find(`#schema-Error`).Length() != 1 {
		t.Errorf("/api: no Error schema section")
	}
}
