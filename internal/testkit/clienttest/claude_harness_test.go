package clienttest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/fakemodel"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testnpm"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// claudeVersion is one pinned Claude Code release the tests drive.
type claudeVersion struct {
	name string // as `claude --version` prints it
	bin  string // path inside node_modules
}

// claudeVersions are the current release (negotiates 2026-07-28, declares form + url
// elicitation) and an older one still in use (2025-11-25, form only), both from
// package.json.
var claudeVersions = []claudeVersion{
	{"2.1.332", "@anthropic-ai/claude-code/bin/claude.exe"},
	{"2.1.197", "claude-code-2.1.197/bin/claude.exe"},
}

// claudeNoPolicies lets every tool run.
const claudeNoPolicies = "policies: []\n"

// claudeExchange is one HTTP exchange between Claude Code and Gatehouse's MCP endpoint.
type claudeExchange struct {
	Method, Path string
	ReqHeader    http.Header
	ReqBody      string
	Status       int
	RespHeader   http.Header
	RespBody     *bytes.Buffer // grows while a streamed answer is still open
}

// claudeTap is a logging reverse proxy in front of Gatehouse: Claude Code talks MCP
// through it, so a test can show (and assert on) exactly what went over the wire.
type claudeTap struct {
	*httptest.Server
	mu        sync.Mutex
	target    *url.URL
	exchanges []*claudeExchange
	changed   chan struct{} // closed and replaced on every request and answer chunk
}

// newClaudeTap listens at once; it forwards to the server set with Target, so the tap's
// address can be the server's --public-url.
func newClaudeTap(t testing.TB) *claudeTap {
	tap := &claudeTap{changed: make(chan struct{})}
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		tap.mu.Lock()
		target := tap.target
		tap.mu.Unlock()
		pr.SetURL(target)
		pr.Out.Host = pr.In.Host // the server sees the public host it was told about
	}}
	proxy.FlushInterval = -1 // SSE answers pass through as they are written
	proxy.ModifyResponse = func(resp *http.Response) error {
		ex, _ := resp.Request.Context().Value(claudeTapKey{}).(*claudeExchange)
		if ex == nil {
			return nil
		}
		tap.mu.Lock()
		ex.Status, ex.RespHeader = resp.StatusCode, resp.Header.Clone()
		tap.mu.Unlock()
		resp.Body = claudeTee{resp.Body, ex.RespBody, tap}
		return nil
	}
	tap.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(raw))
		ex := &claudeExchange{Method: req.Method, Path: req.URL.Path, ReqHeader: req.Header.Clone(), ReqBody: string(raw), RespBody: &bytes.Buffer{}}
		tap.mu.Lock()
		tap.exchanges = append(tap.exchanges, ex)
		tap.notifyLocked()
		tap.mu.Unlock()
		proxy.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), claudeTapKey{}, ex)))
	}))
	t.Cleanup(tap.Close)
	return tap
}

type claudeTapKey struct{}

// Target points the tap at the server behind it.
func (tap *claudeTap) Target(t testing.TB, server string) {
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	tap.mu.Lock()
	tap.target = u
	tap.mu.Unlock()
}

type claudeTee struct {
	io.ReadCloser
	buf *bytes.Buffer
	tap *claudeTap
}

func (c claudeTee) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.tap.mu.Lock()
	c.buf.Write(p[:n])
	c.tap.notifyLocked()
	c.tap.mu.Unlock()
	return n, err
}

func (tap *claudeTap) notifyLocked() {
	close(tap.changed)
	tap.changed = make(chan struct{})
}

// claudeWaiting reports whether Claude Code is waiting on Gatehouse for a verdict: it
// retried a call with the requestState of an input_required answer (2026-07-28), or
// Gatehouse holds its call open with progress notifications (older versions).
func claudeWaiting(exchanges []*claudeExchange) bool {
	for _, ex := range exchanges {
		if strings.Contains(ex.ReqBody, `"requestState"`) || strings.Contains(ex.RespBody.String(), `"notifications/progress"`) {
			return true
		}
	}
	return false
}

// WaitClaudeWaiting waits until Claude Code waits on Gatehouse for the verdict (see
// claudeWaiting), failing at once if Claude exits first, or after within.
func (tap *claudeTap) WaitClaudeWaiting(t *testing.T, run *claudeRun, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		tap.mu.Lock()
		ch, ok := tap.changed, claudeWaiting(tap.exchanges)
		tap.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-run.done:
			t.Fatalf("claude exited (%v) instead of waiting for the person's verdict\n%s", run.err, run.Output())
		case <-deadline:
			t.Fatalf("claude was not waiting for a verdict within %s", within)
		}
	}
}

// Transcript renders every exchange: method, the MCP headers, request and answer bodies.
func (tap *claudeTap) Transcript() string {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	var b strings.Builder
	for i, ex := range tap.exchanges {
		fmt.Fprintf(&b, "--- #%d %s %s -> %d\n", i+1, ex.Method, ex.Path, ex.Status)
		for _, h := range []string{"Accept", "Content-Type", "Mcp-Session-Id", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Last-Event-Id", "User-Agent"} {
			if v := ex.ReqHeader.Get(h); v != "" {
				fmt.Fprintf(&b, "  > %s: %s\n", h, v)
			}
		}
		if ex.ReqBody != "" {
			fmt.Fprintf(&b, "  > %s\n", ex.ReqBody)
		}
		for _, h := range []string{"Content-Type", "Mcp-Session-Id"} {
			if v := ex.RespHeader.Get(h); v != "" {
				fmt.Fprintf(&b, "  < %s: %s\n", h, v)
			}
		}
		if s := strings.TrimSpace(ex.RespBody.String()); s != "" {
			fmt.Fprintf(&b, "  < %s\n", strings.ReplaceAll(s, "\n", "\n  < "))
		}
	}
	return b.String()
}

// ToolCalls returns the bodies of the tools/call requests Claude Code sent.
func (tap *claudeTap) ToolCalls() []map[string]any {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	var out []map[string]any
	for _, ex := range tap.exchanges {
		var m map[string]any
		if json.Unmarshal([]byte(ex.ReqBody), &m) == nil && m["method"] == "tools/call" {
			out = append(out, m)
		}
	}
	return out
}

// claudeRun is one headless Claude Code process.
type claudeRun struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error
	cancel         context.CancelFunc
}

// claudeResult is the --output-format json summary Claude Code prints at the end.
type claudeResult struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	IsError bool   `json:"is_error"`
	Result  string `json:"result"`
	NumTurn int    `json:"num_turns"`
}

// startClaude runs `claude -p prompt` against the fake model, with Gatehouse's MCP
// endpoint mcpURL as its only MCP server, allowed to call deploy without asking. Its
// home and config live in a temp dir, and every proxy variable points at a closed
// loopback port so nothing leaves the machine. The process is killed when the test
// ends or after limit.
func startClaude(t *testing.T, bin, model, mcpURL, prompt string, limit time.Duration) *claudeRun {
	t.Helper()
	home := t.TempDir()
	cfg := filepath.Join(home, "mcp.json")
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"gatehouse": map[string]any{"type": "http", "url": mcpURL}}})
	if err := os.WriteFile(cfg, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	// Flags with several values (--mcp-config, --allowedTools) take the =form so the
	// prompt is never read as one of their values.
	cmd := exec.CommandContext(ctx, bin, "-p", prompt,
		"--mcp-config="+cfg, "--strict-mcp-config",
		"--allowedTools=mcp__gatehouse__deploy",
		"--output-format=json")
	cmd.Dir = home
	cmd.WaitDelay = 5 * time.Second
	dead := claudeDeadProxy(t)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local/share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local/state"),
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"TMPDIR=" + home,
		"ANTHROPIC_BASE_URL=" + model,
		"ANTHROPIC_API_KEY=test",
		"ENABLE_TOOL_SEARCH=false",
		// Claude Code connects MCP servers in the background and may send its first
		// turn before Gatehouse's tools are listed (on a loaded machine it did: the turn
		// went out without the tool and the run ended). Blocking makes the first turn
		// wait for the connection, as a person's interactive session effectively does.
		"MCP_CONNECTION_NONBLOCKING=0",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"HTTP_PROXY=" + dead, "HTTPS_PROXY=" + dead, "http_proxy=" + dead, "https_proxy=" + dead,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	r := &claudeRun{cmd: cmd, done: make(chan struct{}), cancel: cancel}
	cmd.Stdout, cmd.Stderr = &r.stdout, &r.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() {
		r.err = cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
		if t.Failed() {
			t.Logf("claude (%s) exited: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(filepath.Dir(filepath.Dir(bin))), r.err, r.stdout.String(), r.stderr.String())
		}
	})
	return r
}

// Wait waits for Claude Code to exit and decodes its JSON summary, failing the test
// (with Claude's output) when it does not exit in time or prints no summary.
func (r *claudeRun) Wait(t *testing.T, within time.Duration) claudeResult {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(within):
		r.cancel()
		<-r.done
		t.Fatalf("claude did not exit within %s\nstdout:\n%s\nstderr:\n%s", within, r.stdout.String(), r.stderr.String())
	}
	var res claudeResult
	if err := json.Unmarshal(bytes.TrimSpace(r.stdout.Bytes()), &res); err != nil {
		t.Fatalf("claude exited (%v) without a JSON result: %v\nstdout:\n%s\nstderr:\n%s", r.err, err, r.stdout.String(), r.stderr.String())
	}
	return res
}

// Output is Claude's stdout and stderr, for failure messages.
func (r *claudeRun) Output() string {
	select {
	case <-r.done:
		return "stdout:\n" + r.stdout.String() + "\nstderr:\n" + r.stderr.String()
	default:
		return "(claude still running)"
	}
}

// claudeDeadProxy returns the URL of a loopback port that accepts nothing (a listener
// closed at once): any request Claude Code tries to send beyond loopback fails fast.
func claudeDeadProxy(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// claudeFixture is one real Gatehouse (with policies, a counting runner) with one
// session, its stream open, a logging tap in front of its MCP endpoint, and a fake
// model that asks for mcp__gatehouse__deploy {"target":"prod"}.
type claudeFixture struct {
	srv    *testserver.Server
	runner *deployRunner
	tap    *claudeTap
	model  *fakemodel.Server
	sid    string
	frames chan testserver.Frame // the session's event stream
}

func newClaudeFixture(t *testing.T, db testserver.DB, policies string, flags ...string) *claudeFixture {
	t.Helper()
	runner := newDeployRunner(t)
	policy := filepath.Join(t.TempDir(), "policies.yaml")
	if err := os.WriteFile(policy, []byte(policies), 0o600); err != nil {
		t.Fatal(err)
	}
	// The public URL is the tap's address, so the absolute approval link Claude Code
	// sees is one a person could open.
	tap := newClaudeTap(t)
	srv := testserver.Start(t, db.NewURL(t), append([]string{"--runner-url", runner.URL, "--policy-file", policy, "--public-url", tap.URL}, flags...)...)
	tap.Target(t, srv.URL)
	f := &claudeFixture{srv: srv, runner: runner, tap: tap}
	c := srv.Client("")
	f.sid = c.CreateSession(t, c.CreateAgent(t), "", "claude code")
	f.watchSession(t)
	f.model = fakemodel.Start(t, fakemodel.Script{Tool: "mcp__gatehouse__deploy", Input: map[string]any{"target": "prod"}, FinalText: "The deploy is handled."})
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("GATEHOUSE_TEST_LOG") != "" {
			t.Logf("MCP traffic between Claude Code and Gatehouse:\n%s", f.tap.Transcript())
			t.Logf("requests to the fake model:\n%s", f.model.Summary())
		}
	})
	return f
}

// MCPURL is the session's MCP endpoint as Claude Code reaches it (through the tap).
func (f *claudeFixture) MCPURL() string { return f.tap.URL + "/v1/sessions/" + f.sid + "/mcp" }

// claudeBinary locates a pinned Claude Code, skipping (or failing in CI) without it.
func claudeBinary(t *testing.T, v claudeVersion) string {
	t.Helper()
	bin := testnpm.NodeModule(t, v.bin)
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), v.name) {
		t.Fatalf("%s --version = %q (%v), want %s", bin, out, err, v.name)
	}
	return bin
}

// claudePrompts returns every prompt (pending or decided) ever created in the
// fixture's session, read from the database.
func (f *claudeFixture) claudePrompts(t *testing.T) []models.Elicitation {
	t.Helper()
	ctx := context.Background()
	f.srv.App.Elicit.Settle(ctx) // the rule answers given so far are stored
	sess, err := f.srv.App.Store.GetSession(ctx, f.sid)
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	pending, err := f.srv.App.Store.PendingInSubtree(ctx, sess.Path)
	if err != nil {
		t.Fatalf("pending prompts: %v", err)
	}
	decided, err := f.srv.App.Store.RecentDecidedInSubtree(ctx, sess.Path, 1000)
	if err != nil {
		t.Fatalf("decided prompts: %v", err)
	}
	return append(pending, decided...)
}

// waitPrompt waits for the session's next response.elicitation_request, failing the
// test at once (with Claude's output) if Claude Code exits first, or after within.
func (f *claudeFixture) waitPrompt(t *testing.T, run *claudeRun, within time.Duration) map[string]any {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case fr, ok := <-f.frames:
			if !ok {
				t.Fatalf("the session stream closed while waiting for a prompt")
			}
			if fr.Event != "response.elicitation_request" {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(fr.Data), &m); err != nil {
				t.Fatalf("prompt frame: %v: %s", err, fr.Data)
			}
			return m
		case <-run.done:
			t.Fatalf("claude exited (%v) before Gatehouse asked a person\n%s", run.err, run.Output())
		case <-deadline:
			t.Fatalf("no prompt within %s", within)
		}
	}
}

// watchSession subscribes to the session's event stream; frames arrive on f.frames,
// from the first heartbeat on.
func (f *claudeFixture) watchSession(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+"/v1/sessions/"+f.sid+"/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("open stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("open stream: %d", resp.StatusCode)
	}
	frames := make(chan testserver.Frame, 256)
	go func() {
		defer resp.Body.Close()
		defer close(frames)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
		var fr testserver.Frame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if fr.Event != "" || fr.Data != "" {
					select {
					case frames <- fr:
					case <-ctx.Done():
						return
					}
				}
				fr = testserver.Frame{}
			case strings.HasPrefix(line, "event: "):
				fr.Event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if fr.Data != "" {
					fr.Data += "\n"
				}
				fr.Data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case fr, ok := <-frames:
			if !ok {
				t.Fatalf("the session stream closed before its heartbeat")
			}
			if fr.Event == "session.heartbeat" {
				f.frames = frames
				return
			}
		case <-deadline:
			t.Fatalf("no heartbeat on the session stream within 10s")
		}
	}
}
