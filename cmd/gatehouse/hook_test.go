package main

// Tests of `gatehouse hook claude|codex`, the command-hook forwarder, run as the real
// binary against in-process servers.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// hookRun is one running `gatehouse hook …` process.
type hookRun struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	done           chan struct{}
	err            error
}

// startHook runs `gatehouse hook <args…>` with payload on stdin and env (GATEHOUSE_*
// from the test's own environment removed).
func startHook(t *testing.T, env []string, payload any, args ...string) *hookRun {
	t.Helper()
	raw, ok := payload.([]byte)
	if !ok {
		raw, _ = json.Marshal(payload)
	}
	cmd := exec.Command(binary(t), append([]string{"hook"}, args...)...)
	cmd.Env = childEnv(env...)
	cmd.Stdin = bytes.NewReader(raw)
	r := &hookRun{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &r.stdout, &r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start hook: %v", err)
	}
	go func() { r.err = cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = cmd.Process.Kill()
			<-r.done
		}
		if t.Failed() {
			t.Logf("gatehouse hook stderr:\n%s", r.stderr.String())
		}
	})
	return r
}

// wait returns the exit code, stdout and stderr, failing the test after within.
func (r *hookRun) wait(t *testing.T, within time.Duration) (int, string, string) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(within):
		t.Fatalf("gatehouse hook still running after %s; stderr:\n%s", within, r.stderr.String())
	}
	var ee *exec.ExitError
	switch {
	case r.err == nil:
		return 0, r.stdout.String(), r.stderr.String()
	case errors.As(r.err, &ee):
		return ee.ExitCode(), r.stdout.String(), r.stderr.String()
	}
	t.Fatalf("hook: %v", r.err)
	return 0, "", ""
}

// hookPayload is a Claude Code hook body for event (PermissionRequest or PreToolUse)
// from Claude session claudeSID.
func hookPayload(event, claudeSID, command string) map[string]any {
	b := testserver.ClaudeBody("Bash", map[string]any{"command": command, "description": "run it"})
	b["hook_event_name"], b["session_id"] = event, claudeSID
	if event == "PreToolUse" {
		b["tool_use_id"] = "toolu_01" + strings.Repeat("A", 20)
	}
	return b
}

// waitPendingPrompt waits until the zero-config session of Claude session claudeSID
// (owned by user) holds a pending prompt, and returns the session and the prompt id.
// The forwarder's prompt shows up in the database; the test polls it with a deadline.
func waitPendingPrompt(t *testing.T, st *store.Store, user, claudeSID string) (string, string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if sess, err := st.FindSessionByExternal(ctx, user, claudeSID); err == nil {
			pending, err := st.PendingInSubtree(ctx, sess.Path)
			if err != nil {
				t.Fatal(err)
			}
			if len(pending) > 0 {
				return sess.ID, pending[0].ID
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no pending prompt for Claude session %s within 30s", claudeSID)
	return "", ""
}

// promptsOf returns every prompt of a session, pending or decided.
func promptsOf(t *testing.T, st *store.Store, sid string) []models.Elicitation {
	t.Helper()
	ctx := context.Background()
	sess, err := st.GetSession(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	pending, _ := st.PendingInSubtree(ctx, sess.Path)
	decided, _ := st.RecentDecidedInSubtree(ctx, sess.Path, 100)
	return append(pending, decided...)
}

func resolve(t *testing.T, c *testserver.Client, sid, eid, action, feedback string) {
	t.Helper()
	body := map[string]any{"action": action}
	if feedback != "" {
		body["content"] = map[string]any{"feedback": feedback}
	}
	if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", body); r.Status != http.StatusOK && r.Status != http.StatusAccepted {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
}

func jsonEqual(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("stdout is not JSON: %v: %q", err, got)
	}
	_ = json.Unmarshal([]byte(want), &w)
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("stdout = %s\nwant     %s", gb, wb)
	}
}

// hookOwner is the person whose API tokens the forwarder tests use.
const hookOwner = "alice@example.com"

// TestHookForwardsAndPrintsTheVerdict: a hook parked through the forwarder with a
// hooks-only API token (from a loopback address the server does not trust for identity
// headers) waits in its owner's session; the verdict the owner gives through the API is
// what the forwarder prints, exactly as the server answered, for both events the
// forwarder is used with.
func TestHookForwardsAndPrintsTheVerdict(t *testing.T) {
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--auth", "header", "--trusted-proxies", "10.0.0.0/8")
	_, hookToken := srv.IssueToken(t, hookOwner, "hooks", "", time.Time{})
	_, ownerToken := srv.IssueToken(t, hookOwner, "", "", time.Time{})
	for _, tc := range []struct {
		event, action, feedback, want string
	}{
		{"PermissionRequest", "accept", "", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`},
		{"PreToolUse", "decline", "use the staging box",
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"use the staging box"}}`},
	} {
		t.Run(tc.event, func(t *testing.T) {
			claudeSID := "fwd-" + tc.event
			// URL and token from the environment.
			h := startHook(t, []string{"GATEHOUSE_URL=" + srv.URL, "GATEHOUSE_TOKEN=" + hookToken}, hookPayload(tc.event, claudeSID, "make deploy"), "claude")
			sid, eid := waitPendingPrompt(t, srv.App.Store, hookOwner, claudeSID)
			if !ids.ValidReattach(eid) || !strings.HasPrefix(eid, "elicit_claude_") {
				t.Errorf("the prompt id %q is not the forwarder's re-attach id", eid)
			}
			resolve(t, srv.TokenClient(ownerToken), sid, eid, tc.action, tc.feedback)
			code, stdout, stderr := h.wait(t, 20*time.Second)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			jsonEqual(t, stdout, tc.want)
		})
	}
}

// cutProxy is a TCP proxy that can cut every open connection (as a load balancer or a
// NAT dropping a long request does) and be pointed at another server.
type cutProxy struct {
	ln       net.Listener
	mu       sync.Mutex
	target   string
	conns    map[net.Conn]struct{}
	accepted chan struct{}
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}, accepted: make(chan struct{}, 100)}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.Cut() })
	return p
}

func (p *cutProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *cutProxy) SetTarget(serverURL string) {
	p.mu.Lock()
	p.target = strings.TrimPrefix(serverURL, "http://")
	p.mu.Unlock()
}

// Cut closes every connection open through the proxy.
func (p *cutProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

func (p *cutProxy) track(c net.Conn, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

func (p *cutProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted <- struct{}{}
		go func() {
			p.mu.Lock()
			target := p.target
			p.mu.Unlock()
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				return
			}
			p.track(in, true)
			p.track(out, true)
			defer func() { p.track(in, false); p.track(out, false); in.Close(); out.Close() }()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
			go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
			<-done
		}()
	}
}

// waitAccepts waits until the proxy has accepted n more connections.
func (p *cutProxy) waitAccepts(t *testing.T, n int, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for range n {
		select {
		case <-p.accepted:
		case <-deadline:
			t.Fatalf("the forwarder did not reconnect within %s", within)
		}
	}
}

// TestHookReattachesAfterADroppedConnection: the connection carrying a parked hook is
// dropped mid-wait — cut by a proxy, the server process killed (SIGKILL), or stopped
// gracefully (SIGTERM: a rolling restart, which answers "no verdict" and closes the
// connection) and started again on the same database behind the same address — and the
// forwarder re-attaches to the same prompt (no second prompt is created) and prints the
// verdict given after.
func TestHookReattachesAfterADroppedConnection(t *testing.T) {
	for _, mode := range []string{"proxy cuts", "server killed and restarted", "server stopped gracefully and restarted"} {
		t.Run(mode, func(t *testing.T) {
			dbURL := testserver.Databases(t)[0].NewURL(t)
			// The server knows the proxy's address as its public URL (its DNS-rebinding
			// guard accepts only the names it is known by).
			proxy := newCutProxy(t, "")
			server := startServe(t, dbURL, "--public-url", proxy.URL())
			proxy.SetTarget(server.URL)
			st, err := store.Open(dbURL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })

			claudeSID := "reattach-" + strings.ReplaceAll(mode, " ", "-")
			h := startHook(t, nil, hookPayload("PermissionRequest", claudeSID, "make release"), "claude", "--url", proxy.URL(), "--reattach-for", "20s")
			proxy.waitAccepts(t, 1, 20*time.Second)
			sid, eid := waitPendingPrompt(t, st, auth.LocalUser, claudeSID)

			switch mode {
			case "proxy cuts":
				proxy.Cut()
			case "server stopped gracefully and restarted":
				server.Terminate(t)
				if code := server.WaitExit(t, 10*time.Second); code != 0 {
					t.Fatalf("exit code after SIGTERM = %d", code)
				}
				server = startServe(t, dbURL, "--public-url", proxy.URL())
				proxy.SetTarget(server.URL)
			default:
				server.Kill(t) // no answer at all: the connection just ends
				server = startServe(t, dbURL, "--public-url", proxy.URL())
				proxy.SetTarget(server.URL)
			}
			proxy.waitAccepts(t, 1, 20*time.Second) // the forwarder came back
			resolve(t, server.Client(), sid, eid, "decline", "not on a Friday")
			code, stdout, stderr := h.wait(t, 30*time.Second)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			jsonEqual(t, stdout, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not on a Friday"}}}`)
			if !strings.Contains(stderr, eid) {
				t.Errorf("stderr should name the re-attach id %s: %q", eid, stderr)
			}
			if ps := promptsOf(t, st, sid); len(ps) != 1 || ps[0].ID != eid {
				t.Errorf("prompts = %d, want exactly the one re-attached to", len(ps))
			}
		})
	}
}

// closedURL is an http URL on loopback where nothing listens.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

// TestHookWithoutAServer: when Gatehouse cannot be used — unreachable, a bad URL, a
// refused credential, a server error, a body that is no answer — the forwarder prints
// nothing and exits 0 (the agent asks locally), saying why on stderr; with
// --fail-closed it prints a deny in the agent's own format instead.
func TestHookWithoutAServer(t *testing.T) {
	headerAuth := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--auth", "header")
	revokedID, revoked := headerAuth.IssueToken(t, hookOwner, "hooks", "", time.Time{})
	_, owner := headerAuth.IssueToken(t, hookOwner, "", "", time.Time{})
	if r := headerAuth.TokenClient(owner).Do(t, http.MethodDelete, "/v1/me/tokens/"+revokedID, nil); r.Status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	_, expired := headerAuth.IssueToken(t, hookOwner, "hooks", "1h", time.Now().Add(-2*time.Hour))
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "<html>captive portal</html>")
	}))
	t.Cleanup(garbage.Close)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"code":"internal","message":"internal error"}}`, http.StatusInternalServerError)
	}))
	t.Cleanup(broken.Close)
	down := closedURL(t)

	for _, tc := range []struct {
		name   string
		args   []string
		env    []string
		reason string // on stderr
	}{
		{"unreachable", []string{"--url", down, "--connect-timeout", "1s"}, nil, "cannot reach"},
		{"no url", nil, nil, "GATEHOUSE_URL"},
		{"bad url", []string{"--url", "ftp://gatehouse.example"}, nil, "absolute http(s) URL"},
		// A bearer token the server does not accept — unknown, malformed, revoked or
		// expired — is a 401; so is no token at all in header mode from an untrusted peer.
		{"unknown token", []string{"--url", headerAuth.URL, "--token", "ght_not_a_real_token"}, nil, "401"},
		{"malformed token from env", nil, []string{"GATEHOUSE_URL=" + headerAuth.URL, "GATEHOUSE_TOKEN=not a token"}, "401"},
		{"revoked token", []string{"--url", headerAuth.URL, "--token", revoked}, nil, "401"},
		{"expired token", []string{"--url", headerAuth.URL}, []string{"GATEHOUSE_TOKEN=" + expired}, "401"},
		{"server error", []string{"--url", broken.URL}, nil, "500"},
		{"garbage", []string{"--url", garbage.URL}, nil, "not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, event := range []string{"PermissionRequest", "PreToolUse"} {
				payload := hookPayload(event, "offline", "ls")
				code, stdout, stderr := startHook(t, tc.env, payload, append([]string{"claude"}, tc.args...)...).wait(t, 30*time.Second)
				if code != 0 || stdout != "" || !strings.Contains(stderr, tc.reason) {
					t.Fatalf("%s: exit %d, stdout %q, stderr %q; want 0, nothing, a reason naming %q", event, code, stdout, stderr, tc.reason)
				}
				code, stdout, stderr = startHook(t, tc.env, payload, append([]string{"claude", "--fail-closed"}, tc.args...)...).wait(t, 30*time.Second)
				if code != 0 || !strings.Contains(stderr, tc.reason) {
					t.Fatalf("%s --fail-closed: exit %d, stderr %q", event, code, stderr)
				}
				var ans struct {
					Out struct {
						Event    string `json:"hookEventName"`
						Decision *struct {
							Behavior, Message string
						} `json:"decision"`
						Permission string `json:"permissionDecision"`
						Reason     string `json:"permissionDecisionReason"`
					} `json:"hookSpecificOutput"`
				}
				if err := json.Unmarshal([]byte(stdout), &ans); err != nil || ans.Out.Event != event {
					t.Fatalf("%s --fail-closed printed %q", event, stdout)
				}
				denied := ans.Out.Permission == "deny" && strings.Contains(ans.Out.Reason, "fails closed")
				if event == "PermissionRequest" {
					denied = ans.Out.Decision != nil && ans.Out.Decision.Behavior == "deny" && strings.Contains(ans.Out.Decision.Message, "fails closed")
				}
				if !denied {
					t.Fatalf("%s --fail-closed printed %s, want a deny with a message", event, stdout)
				}
			}
		})
	}
}

// TestHookBadInput: an unreadable payload, an unknown agent and bad flags.
func TestHookBadInput(t *testing.T) {
	down := closedURL(t)
	code, stdout, stderr := startHook(t, nil, []byte("not json"), "claude", "--url", down).wait(t, 20*time.Second)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "not a JSON object") {
		t.Errorf("bad payload: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// Failing closed without an event to answer: exit 2, which blocks the tool.
	code, stdout, stderr = startHook(t, nil, []byte("not json"), "claude", "--url", down, "--fail-closed").wait(t, 20*time.Second)
	if code != 2 || stdout != "" || !strings.Contains(stderr, "fails closed") {
		t.Errorf("bad payload, fail closed: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, args := range [][]string{{}, {"nosuchagent"}, {"claude", "--nope"}, {"claude", "extra"}} {
		if code, _, stderr := startHook(t, nil, []byte("{}"), args...).wait(t, 20*time.Second); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message", args, code, stderr)
		}
	}
}

// TestHookCodexPostsToTheCodexRouteAndPrintsItsAnswer: `hook codex` posts to
// /v1/hooks/codex with the bearer token and a codex re-attach id, and prints the body
// byte for byte (it is already Codex's hook output); failing closed it denies in
// Codex's shape (no interrupt, which Codex refuses).
func TestHookCodexPostsToTheCodexRouteAndPrintsItsAnswer(t *testing.T) {
	const answer = `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}` + "\n"
	var mu sync.Mutex
	var got *http.Request
	var gotBody map[string]any
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r
		_ = json.NewDecoder(r.Body).Decode(&gotBody)
		mu.Unlock()
		if r.URL.Path != "/v1/hooks/codex" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(stub.Close)
	payload := map[string]any{"session_id": "019a-codex", "turn_id": "t1", "transcript_path": nil, "cwd": "/w",
		"hook_event_name": "PermissionRequest", "model": "gpt-5", "permission_mode": "default",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "ls", "description": "list"}}
	code, stdout, stderr := startHook(t, []string{"GATEHOUSE_TOKEN=ght_codex"}, payload, "codex", "--url", stub.URL+"/").wait(t, 20*time.Second)
	if code != 0 || stdout != answer {
		t.Fatalf("exit %d, stdout %q (want the body byte for byte), stderr %q", code, stdout, stderr)
	}
	mu.Lock()
	if got.Header.Get("Authorization") != "Bearer ght_codex" {
		t.Errorf("Authorization = %q", got.Header.Get("Authorization"))
	}
	eid, _ := gotBody["_gatehouse_elicitation_id"].(string)
	if !ids.ValidReattach(eid) || !strings.HasPrefix(eid, "elicit_codex_") || gotBody["turn_id"] != "t1" {
		t.Errorf("posted body = %v", gotBody)
	}
	mu.Unlock()

	// --token-env names the variable to read the token from.
	if code, stdout, _ := startHook(t, []string{"MY_TOKEN=ght_named"}, payload, "codex", "--url", stub.URL, "--token-env", "MY_TOKEN").wait(t, 20*time.Second); code != 0 || stdout != answer {
		t.Fatalf("--token-env: exit %d, stdout %q", code, stdout)
	}
	mu.Lock()
	if a := got.Header.Get("Authorization"); a != "Bearer ght_named" {
		t.Errorf("--token-env: Authorization = %q", a)
	}
	mu.Unlock()

	code, stdout, _ = startHook(t, nil, payload, "codex", "--url", closedURL(t), "--connect-timeout", "500ms", "--fail-closed").wait(t, 20*time.Second)
	if code != 0 || !strings.Contains(stdout, `"behavior":"deny"`) || strings.Contains(stdout, "interrupt") {
		t.Fatalf("codex fail-closed: exit %d, stdout %q", code, stdout)
	}
}

// TestHookCodexThroughTheServer: `hook codex` with a hooks-only token parks a Codex CLI
// PermissionRequest on the server's Codex route, cut mid-wait by a proxy; it comes back
// to the same prompt (Codex prompts have deterministic ids) and prints the owner's
// decline exactly as the server answers it, in Codex's hook output format.
func TestHookCodexThroughTheServer(t *testing.T) {
	proxy := newCutProxy(t, "")
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--auth", "header", "--trusted-proxies", "10.0.0.0/8", "--public-url", proxy.URL())
	proxy.SetTarget(srv.URL)
	_, hookToken := srv.IssueToken(t, hookOwner, "hooks", "", time.Time{})
	_, ownerToken := srv.IssueToken(t, hookOwner, "", "", time.Time{})
	payload := map[string]any{"session_id": "019a0c55-codex", "turn_id": "t1", "transcript_path": nil, "cwd": "/w",
		"hook_event_name": "PermissionRequest", "model": "gpt-5", "permission_mode": "default",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "rm -rf build", "description": "clean"}}
	h := startHook(t, []string{"GATEHOUSE_TOKEN=" + hookToken}, payload, "codex", "--url", proxy.URL())
	proxy.waitAccepts(t, 1, 20*time.Second)
	sid, eid := waitPendingPrompt(t, srv.App.Store, hookOwner, "codex:019a0c55-codex")
	proxy.Cut()
	proxy.waitAccepts(t, 1, 20*time.Second)
	resolve(t, srv.TokenClient(ownerToken), sid, eid, "decline", "keep the build dir")
	code, stdout, stderr := h.wait(t, 30*time.Second)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	jsonEqual(t, stdout, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"keep the build dir"}}}`)
	if ps := promptsOf(t, srv.App.Store, sid); len(ps) != 1 {
		t.Errorf("prompts = %d, want 1", len(ps))
	}
}

// TestHookReportsTooManyParked: when the token's owner already has as many requests
// waiting for a person as --max-parked-per-person allows, the server refuses the next
// (429); the forwarder says so on stderr — "Gatehouse refused: too many parked requests
// …" — and falls back as configured, without retrying: nothing printed (the agent asks
// locally), or with --fail-closed a deny whose message carries the refusal.
func TestHookReportsTooManyParked(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--trusted-proxies", "10.0.0.0/8", "--max-parked-per-person", "1")
		_, hookToken := srv.IssueToken(t, hookOwner, "hooks", "", time.Time{})
		env := []string{"GATEHOUSE_URL=" + srv.URL, "GATEHOUSE_TOKEN=" + hookToken}
		first := startHook(t, env, hookPayload("PermissionRequest", "cap-first", "make deploy"), "claude")
		waitPendingPrompt(t, srv.App.Store, hookOwner, "cap-first")

		const refusal = "Gatehouse refused: too many parked requests: 1 of yours are waiting for a person here (at most 1 per person)"
		for _, event := range []string{"PermissionRequest", "PreToolUse"} {
			payload := hookPayload(event, "cap-second", "make test")
			code, stdout, stderr := startHook(t, env, payload, "claude").wait(t, 20*time.Second)
			if code != 0 || stdout != "" || !strings.Contains(stderr, refusal) || strings.Contains(stderr, "retrying") {
				t.Fatalf("%s: exit %d, stdout %q, stderr %q; want 0, nothing, and %q without a retry", event, code, stdout, stderr, refusal)
			}
			code, stdout, stderr = startHook(t, env, payload, "claude", "--fail-closed").wait(t, 20*time.Second)
			if code != 0 || !strings.Contains(stderr, refusal) {
				t.Fatalf("%s --fail-closed: exit %d, stderr %q", event, code, stderr)
			}
			var ans struct {
				Out struct {
					Decision   *struct{ Behavior, Message string } `json:"decision"`
					Permission string                              `json:"permissionDecision"`
					Reason     string                              `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal([]byte(stdout), &ans); err != nil {
				t.Fatalf("%s --fail-closed printed %q", event, stdout)
			}
			behavior, message := ans.Out.Permission, ans.Out.Reason
			if d := ans.Out.Decision; d != nil {
				behavior, message = d.Behavior, d.Message
			}
			if behavior != "deny" || !strings.Contains(message, refusal) || !strings.Contains(message, "fails closed") {
				t.Fatalf("%s --fail-closed printed %s, want a deny carrying the refusal", event, stdout)
			}
		}
		select {
		case <-first.done:
			t.Fatalf("the parked hook ended while the others were refused: %s", first.stderr.String())
		default: // still waiting for a person; the refusals did not disturb it
		}
	})
}

// TestHookAnswerWithinDeniesBeforeTheAgentsTimeout: an agent that runs the tool when
// its hook times out (Gemini CLI, Copilot CLI) is installed with --answer-within below
// that timeout. A prompt nobody answers in time ends in a deny in the agent's format
// that says why — even without --fail-closed, since silence would mean "run it" — and
// a verdict given in time is printed as usual.
func TestHookAnswerWithinDeniesBeforeTheAgentsTimeout(t *testing.T) {
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--auth", "header", "--disconnect-grace", "1s")
	_, hookToken := srv.IssueToken(t, hookOwner, "hooks", "", time.Time{})
	_, ownerToken := srv.IssueToken(t, hookOwner, "", "", time.Time{})
	env := []string{"GATEHOUSE_URL=" + srv.URL, "GATEHOUSE_TOKEN=" + hookToken}

	h := startHook(t, env, hookPayload("PreToolUse", "within-late", "make deploy"), "claude", "--answer-within", "1s")
	sid, eid := waitPendingPrompt(t, srv.App.Store, hookOwner, "within-late")
	code, stdout, stderr := h.wait(t, 20*time.Second)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var ans struct {
		Out struct {
			Permission string `json:"permissionDecision"`
			Reason     string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(stdout), &ans); err != nil || ans.Out.Permission != "deny" || !strings.Contains(ans.Out.Reason, "Nobody answered in Gatehouse within 1s") {
		t.Fatalf("stdout %q: want a deny saying nobody answered in time", stdout)
	}
	// The agent has its answer: the prompt ends once the server's grace for the hung-up
	// request passes, so nobody approves what has already been denied.
	deadline := time.Now().Add(30 * time.Second)
	for {
		e, err := srv.App.Store.GetElicitation(context.Background(), eid)
		if err != nil {
			t.Fatal(err)
		}
		if e.Status != models.StatusPending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("prompt %s of session %s still pending 30s after the forwarder denied it", eid, sid)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A wait that ends on the server without a verdict is no "allow" either.
	short := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--auth", "header", "--elicitation-timeout", "1s")
	_, shortToken := short.IssueToken(t, hookOwner, "hooks", "", time.Time{})
	h = startHook(t, []string{"GATEHOUSE_URL=" + short.URL, "GATEHOUSE_TOKEN=" + shortToken}, hookPayload("PreToolUse", "within-expired", "make deploy"), "claude", "--answer-within", "1m")
	code, stdout, stderr = h.wait(t, 20*time.Second)
	if err := json.Unmarshal([]byte(stdout), &ans); code != 0 || err != nil || ans.Out.Permission != "deny" || !strings.Contains(ans.Out.Reason, "before the request's wait ended") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want a deny saying the wait ended without a verdict", code, stdout, stderr)
	}

	h = startHook(t, env, hookPayload("PreToolUse", "within-early", "make deploy"), "claude", "--answer-within", "1m")
	sid, eid = waitPendingPrompt(t, srv.App.Store, hookOwner, "within-early")
	resolve(t, srv.TokenClient(ownerToken), sid, eid, "accept", "")
	code, stdout, stderr = h.wait(t, 20*time.Second)
	if code != 0 || !strings.Contains(stdout, `"permissionDecision":"allow"`) {
		t.Fatalf("exit %d, stdout %q, stderr %q: want the allow given in time", code, stdout, stderr)
	}
}
