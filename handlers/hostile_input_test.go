package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/app"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/sessions"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// sendHost sends a GET with a chosen Host header and returns status and body.
func sendHost(t *testing.T, srv *testserver.Server, host, path string, header http.Header) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	req.Host = host
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s (Host %s): %v", path, host, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestAuthNoneRefusesForeignHostNames: with --auth none a web page that rebinds its own
// name to 127.0.0.1 must not reach the API or the pages: only the listener's own
// address, its loopback spellings and --public-url's host are answered.
func TestAuthNoneRefusesForeignHostNames(t *testing.T) {
	t.Parallel()
	db := testserver.Databases(t)[0] // the Host check touches no database
	srv := testserver.Start(t, db.NewURL(t), "--public-url", "https://gatehouse.example.com")
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LocalHost.:" + port, "[::1]:" + port,
		"gatehouse.example.com", "gatehouse.example.com:443"} {
		if status, body, _ := sendHost(t, srv, host, "/v1/sessions", nil); status != http.StatusOK {
			t.Errorf("Host %s: %d %s, want 200", host, status, body)
		}
	}
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.nip.io:" + port,
		"localhost:1" + port, "gatehouse.example.com:8443", "gatehouse.example.com.evil.example"} {
		status, body, hdr := sendHost(t, srv, host, "/v1/sessions", nil)
		coreWantEnvelope(t, &testserver.Response{Status: status, Header: hdr, Body: []byte(body)}, http.StatusForbidden, "forbidden")
		status, body, hdr = sendHost(t, srv, host, "/inbox", nil)
		if status != http.StatusForbidden || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") || !strings.Contains(body, "does not answer to the host name") {
			t.Errorf("Host %q page: %d %s %s, want a 403 page", host, status, hdr.Get("Content-Type"), body)
		}
	}
	// Probes may use any name.
	if status, _, _ := sendHost(t, srv, "pod-1.internal:"+port, "/healthz", nil); status != http.StatusOK {
		t.Errorf("healthz under a foreign name: %d", status)
	}

	// Behind a proxy (--auth header) the proxy chooses the names; no Host check.
	hdr := testserver.Start(t, db.NewURL(t), "--auth", "header")
	if status, body, _ := sendHost(t, hdr, "gatehouse.corp.example", "/v1/sessions",
		http.Header{"X-Forwarded-Email": {"alice@example.com"}}); status != http.StatusOK {
		t.Errorf("header mode behind a proxy: %d %s", status, body)
	}
}

// TestDuplicateIdentityHeadersRefused: two identity header lines, or one carrying a
// comma list, are 401 — whichever value was picked, the client could choose who it is.
func TestDuplicateIdentityHeadersRefused(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice := srv.Client("alice@example.com")
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "")
		for name, vals := range map[string][]string{
			"two lines":       {"mallory@example.com", "alice@example.com"},
			"same twice":      {"alice@example.com", "alice@example.com"},
			"comma list":      {"alice@example.com, mallory@example.com"},
			"leading comma":   {",alice@example.com"},
			"one line, blank": {"alice@example.com", ""},
		} {
			for _, path := range []string{"/v1/sessions/" + sid, "/v1/sessions"} {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
				req.Header["X-Forwarded-Email"] = vals
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				coreWantEnvelope(t, &testserver.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, http.StatusUnauthorized, "unauthorized")
				if !strings.Contains(string(b), "once") {
					t.Errorf("%s %s: message does not say why: %s", name, path, b)
				}
			}
		}
	})
}

// TestCSRFTokenOnlyFromTheFormBody: the same valid token in the query string (or in a
// header) does not pass the CSRF check; in the form body it does.
func TestCSRFTokenOnlyFromTheFormBody(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		api := srv.Client("")
		sid := api.CreateSession(t, api.CreateAgent(t), "", "")
		eid := openMCPForm(t, api, sid, "Deploy?", map[string]any{})
		path := "/approve/" + sid + "/" + eid
		b := newBrowser(t, srv, "")
		tok := b.get(t, path).csrf(t)

		mustStatus(t, b.post(t, path+"?csrf="+url.QueryEscape(tok), url.Values{"action": {"accept"}}, false), http.StatusForbidden)
		mustStatus(t, b.post(t, path+"?csrf="+url.QueryEscape(tok), url.Values{"action": {"accept"}}, true), http.StatusForbidden)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(url.Values{"action": {"accept"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-CSRF-Token", tok)
		req.Header.Set("HX-Request", "true")
		mustStatus(t, b.do(t, req), http.StatusForbidden)
		if st := elicitationStatus(t, api, sid, eid)["status"]; st != "pending" {
			t.Fatalf("a refused post decided the prompt: %v", st)
		}

		mustStatus(t, b.post(t, path, url.Values{"csrf": {tok}, "action": {"accept"}}, false), http.StatusSeeOther)
		if st := elicitationStatus(t, api, sid, eid)["status"]; st != "resolved" {
			t.Fatalf("the token in the body did not decide: %v", st)
		}
	})
}

// TestReadOnlyGranteeCannotAddSubSessions: a sub-agent session parks prompts on its
// whole tree, so creating one needs edit on the parent: read is 403, no grant is 404
// (existence does not leak), edit is 201.
func TestReadOnlyGranteeCannotAddSubSessions(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
		alice := srv.Client("alice@example.com")
		agent := alice.CreateAgent(t)
		root := alice.CreateSession(t, agent, "", "")
		child := alice.CreateSession(t, agent, root, "child")
		grant := func(level string) {
			t.Helper()
			if r := alice.Do(t, http.MethodPut, "/v1/sessions/"+root+"/permissions",
				map[string]any{"user": "bob@example.com", "level": level}); r.Status != http.StatusOK {
				t.Fatalf("grant %s: %d %s", level, r.Status, r.Body)
			}
		}
		bob := srv.Client("bob@example.com")
		create := func(parent, title string) *testserver.Response {
			return bob.Do(t, http.MethodPost, "/v1/sessions", map[string]any{"agent_id": agent, "parent_session_id": parent, "title": title})
		}
		coreWantEnvelope(t, create(root, "no grant"), http.StatusNotFound, "not_found")
		grant("read")
		for _, parent := range []string{root, child} {
			coreWantEnvelope(t, create(parent, "read only"), http.StatusForbidden, "forbidden")
		}
		if r := alice.Do(t, http.MethodGet, "/v1/sessions?parent_session_id="+root, nil); strings.Contains(string(r.Body), "read only") {
			t.Fatalf("a refused create left a session behind: %s", r.Body)
		}
		grant("edit")
		if r := create(child, "edit"); r.Status != http.StatusCreated {
			t.Fatalf("edit grantee: %d %s", r.Status, r.Body)
		}
	})
}

// TestDeepSessionChainNeverA500: nesting stops at sessions.MaxDepth with a 422; every
// route on the deepest session still works. (Unbounded, Postgres refused the
// materialized path's index entry near depth 70: a 500.)
func TestDeepSessionChainNeverA500(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		agent := c.CreateAgent(t)
		root := c.CreateSession(t, agent, "", "")
		chain := []string{root}
		var refused *testserver.Response
		for depth := 1; depth <= 200 && refused == nil; depth++ {
			r := c.Do(t, http.MethodPost, "/v1/sessions", map[string]any{"agent_id": agent, "parent_session_id": chain[len(chain)-1],
				"title": fmt.Sprint("level ", depth)})
			switch {
			case r.Status == http.StatusCreated:
				chain = append(chain, r.JSON(t)["id"].(string))
			case r.Status >= 500:
				t.Fatalf("depth %d: %d %s", depth, r.Status, r.Body)
			default:
				refused = r
			}
		}
		if refused == nil || len(chain)-1 != sessions.MaxDepth {
			t.Fatalf("nesting was not bounded at %d (reached %d)", sessions.MaxDepth, len(chain)-1)
		}
		coreWantEnvelope(t, refused, http.StatusUnprocessableEntity, "validation_failed")
		if !strings.Contains(string(refused.Body), fmt.Sprint(sessions.MaxDepth)) {
			t.Fatalf("refusal does not name the bound: %s", refused.Body)
		}

		deepest := chain[len(chain)-1]
		parked, eid, _ := c.ParkClaude(t, deepest, root, "Bash", map[string]any{"command": "ls"})
		for _, path := range []string{"/v1/sessions/" + deepest, "/v1/sessions/" + root, "/v1/sessions?parent_session_id=" + chain[len(chain)-2]} {
			if r := c.Do(t, http.MethodGet, path, nil); r.Status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
			}
		}
		if r := c.Do(t, http.MethodGet, "/sessions/"+deepest, nil); r.Status != http.StatusOK {
			t.Fatalf("session page of the deepest: %d", r.Status)
		}
		coreMustResolve(t, c, deepest, eid, map[string]any{"action": "accept"})
		coreWantBehavior(t, parked, "allow")
	})
}

// TestElicitationReattachIDBoundToItsQuestion: an Elicitation hook that reuses a
// decided prompt's re-attach id for another message, form or server is refused (409),
// so content typed for one question never answers another; the same question with the
// same id gets its stored answer.
func TestElicitationReattachIDBoundToItsQuestion(t *testing.T) {
	t.Parallel()
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		c := srv.Client("")
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		path := "/v1/sessions/" + sid + "/hooks/elicitation"
		eid := "elicit_claude_" + strings.Repeat("ef", 16)
		schema := map[string]any{"type": "object", "properties": map[string]any{"env": map[string]any{"type": "string"}}}
		body := func(server, message string, schema map[string]any) map[string]any {
			return map[string]any{"session_id": "s1", "hook_event_name": "Elicitation", "mcp_server_name": server,
				"message": message, "mode": "form", "requested_schema": schema, "_gatehouse_elicitation_id": eid}
		}
		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		st.WaitHeartbeat(t)
		first := c.ParkAsync(path, body("deploy", "Which environment?", schema))
		st.WaitFor(t, "response.elicitation_request", 10*time.Second)
		coreMustResolve(t, c, sid, eid, map[string]any{"action": "accept", "content": map[string]any{"env": "staging"}})
		if r := first.Wait(t, 10*time.Second); r.Status != http.StatusOK || !strings.Contains(string(r.Body), "staging") {
			t.Fatalf("first answer: %d %s", r.Status, r.Body)
		}

		other := map[string]any{"type": "object", "properties": map[string]any{"token": map[string]any{"type": "string"}}}
		for name, b := range map[string]map[string]any{
			"another message": body("deploy", "Delete which database?", schema),
			"another form":    body("deploy", "Which environment?", other),
			"another server":  body("billing", "Which environment?", schema),
		} {
			r := c.Do(t, http.MethodPost, path, b)
			if r.Status != http.StatusConflict {
				t.Fatalf("%s under a decided id: %d %s, want 409", name, r.Status, r.Body)
			}
			coreWantEnvelope(t, r, http.StatusConflict, "conflict")
		}
		r := c.Do(t, http.MethodPost, path, body("deploy", "Which environment?", schema))
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "staging") {
			t.Fatalf("the same question re-parked: %d %s, want its stored answer", r.Status, r.Body)
		}
	})
}

// TestSlowBodyIsCutOff: a client that sends its headers and then trickles the body is
// answered 408 and disconnected after --body-read-timeout, long before it would have
// finished; streams and parked requests, which outlive that timeout, are unaffected.
func TestSlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	db := testserver.Databases(t)[0] // a transport matter: no database involved
	const timeout = 500 * time.Millisecond
	srv := testserver.Start(t, db.NewURL(t), "--body-read-timeout", timeout.String())
	c := srv.Client("")
	sid := c.CreateSession(t, c.CreateAgent(t), "", "")

	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"name":"` + strings.Repeat("x", 200) + `"}`
	fmt.Fprintf(conn, "POST /v1/agents HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		strings.TrimPrefix(srv.URL, "http://"), len(body))
	start := time.Now()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { // one byte every 50 ms: 10 s for the whole body
		for i := 0; i < len(body) && ctx.Err() == nil; i++ {
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a trickled body within 5s: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	coreWantEnvelope(t, &testserver.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, http.StatusRequestTimeout, "request_timeout")
	if d := time.Since(start); d > timeout+2*time.Second {
		t.Fatalf("cut off only after %s", d)
	}
	if !resp.Close {
		t.Errorf("the connection stays open after a 408")
	}

	// A stream and a parked hook live well past the body timeout.
	st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
	st.WaitHeartbeat(t)
	parked := c.ParkAsync(coreHookPath(sid), testserver.ClaudeBody("Bash", map[string]any{"command": "ls"}))
	ev := st.WaitFor(t, "response.elicitation_request", 10*time.Second).Map(t)
	time.Sleep(3 * timeout) // a duration under test, not synchronization
	if parked.Done() {
		t.Fatalf("the parked hook ended before its verdict: %+v", parked.Wait(t, time.Second))
	}
	coreMustResolve(t, c, sid, ev["elicitation_id"].(string), map[string]any{"action": "accept"})
	coreWantBehavior(t, parked, "allow")
	st.WaitFor(t, "response.elicitation_resolved", 10*time.Second)
}

// TestPathologicalPolicyStopsTheServer: a condition with a loop nested in a loop over
// the agent's input would pin a CPU on a large tool input; the server refuses to start
// and says why, rather than evaluating it on every call. (Single loops load, and run
// under a deadline — internal/policy's tests.)
func TestPathologicalPolicyStopsTheServer(t *testing.T) {
	t.Parallel()
	path := policyFile(t, "policies:\n  - name: pairs\n    on: [tool_call]\n"+
		"    when: data.arguments.files.exists(a, data.arguments.files.exists(b, a != b && b.startsWith(a)))\n    action: DENY\n")
	cfg, err := config.Load("test", []string{"--database-url", "sqlite://" + t.TempDir() + "/g.db", "--policy-file", path},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil {
		a.Close()
		t.Fatal("the server started with a quadratic policy")
	}
	for _, want := range []string{path, "line 4", "policy 'pairs'", "too expensive"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestAuthNoneWarnsBeyondLoopback: --auth none on a listener other machines can reach
// logs a warning at start; on loopback it does not.
func TestAuthNoneWarnsBeyondLoopback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		listen string
		warn   bool
	}{{"127.0.0.1:0", false}, {"0.0.0.0:0", true}} {
		cfg, err := config.Load("test", []string{"--database-url", "sqlite://" + t.TempDir() + "/g.db", "--addr", tc.listen},
			func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var logs syncBuffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		ctx, stop := context.WithCancel(context.Background())
		a, err := app.New(ctx, cfg, log)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", tc.listen)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- a.Serve(ctx, ln) }()
		coreUntil(t, "the server answers", func() bool {
			resp, err := http.Get("http://127.0.0.1:" + fmt.Sprint(ln.Addr().(*net.TCPAddr).Port) + "/healthz")
			if err == nil {
				resp.Body.Close()
			}
			return err == nil
		})
		stop()
		<-done
		a.Close()
		if got := strings.Contains(logs.String(), "--auth none on a non-loopback address"); got != tc.warn {
			t.Errorf("listening on %s: warned %v, want %v\n%s", tc.listen, got, tc.warn, logs.String())
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines to log into.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
