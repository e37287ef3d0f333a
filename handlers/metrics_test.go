package handlers_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestMetricsCountPromptsAndDecisions parks a prompt, decides it and reads the
// Prometheus counters back from /metrics.
func TestMetricsCountPromptsAndDecisions(t *testing.T) {
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--metrics-addr", "127.0.0.1:0")
	c := srv.Client("")
	sid := c.CreateSession(t, c.CreateAgent(t), "", "")
	parked, eid, _ := c.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "ls"})

	body := srv.Scrape(t)
	for _, want := range []string{
		`gatehouse_elicitations_created_total{origin="claude_permission"} 1`,
		`gatehouse_elicitations_pending 1`,
		`gatehouse_parked_waiters 1`,
	} {
		if !strings.Contains(body, want) {
			t.Fatalf("metrics lack %q", want)
		}
	}
	c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "decline"})
	parked.Wait(t, 10*time.Second)
	body = srv.Scrape(t)
	for _, want := range []string{
		`gatehouse_elicitations_decided_total{action="decline",origin="claude_permission",status="resolved"} 1`,
		`gatehouse_elicitations_pending 0`,
		`gatehouse_time_to_decision_seconds_count{origin="claude_permission"} 1`,
		`gatehouse_verdict_commit_seconds_count 1`,
	} {
		if !strings.Contains(body, want) {
			t.Fatalf("metrics lack %q:\n%s", want, body)
		}
	}
}

// TestMetricsOnlyOnItsListenerOrWithToken: by default nobody reads /metrics on the
// API's listener; --metrics-addr serves it (and nothing else) on a listener of its own,
// which closes when the server stops; --metrics-token serves it on the API's listener
// to that bearer token only.
func TestMetricsOnlyOnItsListenerOrWithToken(t *testing.T) {
	var last *testserver.Response
	get := func(t *testing.T, url, authz string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		last = &testserver.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
		return resp.StatusCode, string(b)
	}
	const metric = "gatehouse_elicitations_pending"
	token := strings.Repeat("t", 40)
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		plain := testserver.Start(t, db.NewURL(t))
		if status, body := get(t, plain.URL+"/metrics", ""); status != http.StatusNotFound || strings.Contains(body, metric) {
			t.Errorf("default server, /metrics: %d, want 404 and no figures", status)
		}
		// A bearer token nobody issued is refused before the route is looked up.
		if status, body := get(t, plain.URL+"/metrics", "Bearer "+token); status != http.StatusUnauthorized || strings.Contains(body, metric) {
			t.Errorf("default server, /metrics with a bearer token: %d, want 401 and no figures", status)
		}

		own := testserver.Start(t, db.NewURL(t), "--metrics-addr", "127.0.0.1:0")
		if status, _ := get(t, own.URL+"/metrics", ""); status != http.StatusNotFound {
			t.Errorf("--metrics-addr: the API's listener answers /metrics with %d, want 404", status)
		}
		if status, body := get(t, own.MetricsURL+"/metrics", ""); status != http.StatusOK || !strings.Contains(body, metric) {
			t.Errorf("--metrics-addr listener: %d, want 200 with %s", status, metric)
		}
		for _, path := range []string{"/", "/v1/sessions", "/healthz", "/inbox"} {
			if status, _ := get(t, own.MetricsURL+path, ""); status != http.StatusNotFound {
				t.Errorf("--metrics-addr listener answers %s with %d, want 404", path, status)
			}
		}
		own.Stop()
		if conn, err := net.DialTimeout("tcp", strings.TrimPrefix(own.MetricsURL, "http://"), 2*time.Second); err == nil {
			conn.Close()
			t.Errorf("the metrics listener %s still accepts connections after the server stopped", own.MetricsURL)
		}

		tok := testserver.Start(t, db.NewURL(t), "--metrics-token", token)
		for _, authz := range []string{"", "Bearer", "Bearer " + token[1:], "Basic " + token, "Bearer " + token + "x"} {
			_, body := get(t, tok.URL+"/metrics", authz)
			if strings.Contains(body, metric) {
				t.Fatalf("--metrics-token, Authorization %q: the figures were served", authz)
			}
			coreWantEnvelope(t, last, http.StatusUnauthorized, "unauthorized")
		}
		if status, body := get(t, tok.URL+"/metrics", "Bearer "+token); status != http.StatusOK || !strings.Contains(body, metric) {
			t.Errorf("--metrics-token with the token: %d, want 200 with %s", status, metric)
		}
	})
}
