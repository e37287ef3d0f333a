package clienttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// codexBin is the pinned Codex CLI from package.json (@openai/codex 0.171.0).
const codexBin = ".bin/codex"

// codexHookExchange is one hook call Codex made through the hook command: what Codex
// wrote on the hook's stdin and what Gatehouse answered.
type codexHookExchange struct {
	Body   map[string]any
	Raw    string
	Status int
	Answer string
}

// codexHookTap sits between the hook command and Gatehouse and records every hook
// exchange, so a test can show (and assert on) what Codex sent and was told.
type codexHookTap struct {
	*httptest.Server
	mu        sync.Mutex
	exchanges []*codexHookExchange
	changed   chan struct{}
}

func newCodexHookTap(t testing.TB, target string) *codexHookTap {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tap := &codexHookTap{changed: make(chan struct{})}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ModifyResponse = func(resp *http.Response) error {
		ex, _ := resp.Request.Context().Value(codexTapKey{}).(*codexHookExchange)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		if ex != nil {
			tap.mu.Lock()
			ex.Status, ex.Answer = resp.StatusCode, string(raw)
			tap.notifyLocked()
			tap.mu.Unlock()
		}
		return nil
	}
	tap.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(raw))
		req.Host = u.Host // Gatehouse answers only to its own host name
		ex := &codexHookExchange{Raw: string(raw)}
		_ = json.Unmarshal(raw, &ex.Body)
		tap.mu.Lock()
		tap.exchanges = append(tap.exchanges, ex)
		tap.notifyLocked()
		tap.mu.Unlock()
		proxy.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), codexTapKey{}, ex)))
	}))
	t.Cleanup(tap.Close)
	return tap
}

type codexTapKey struct{}

func (tap *codexHookTap) notifyLocked() {
	close(tap.changed)
	tap.changed = make(chan struct{})
}

// Exchanges returns a copy of the hook exchanges so far.
func (tap *codexHookTap) Exchanges() []codexHookExchange {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	out := make([]codexHookExchange, 0, len(tap.exchanges))
	for _, ex := range tap.exchanges {
		out = append(out, *ex)
	}
	return out
}

// Transcript renders every hook exchange.
func (tap *codexHookTap) Transcript() string {
	var b strings.Builder
	for i, ex := range tap.Exchanges() {
		fmt.Fprintf(&b, "--- hook #%d -> %d\n  > %s\n  < %s\n", i+1, ex.Status, ex.Raw, ex.Answer)
	}
	return b.String()
}

// WaitHook waits for the first hook call of event, failing at once if Codex exits.
func (tap *codexHookTap) WaitHook(t *testing.T, run *codexRun, event string, within time.Duration) map[string]any {
	t.Helper()
	deadline := time.After(within)
	for {
		tap.mu.Lock()
		ch := tap.changed
		for _, ex := range tap.exchanges {
			if ex.Body["hook_event_name"] == event {
				tap.mu.Unlock()
				return ex.Body
			}
		}
		tap.mu.Unlock()
		select {
		case <-ch:
		case <-run.done:
			t.Fatalf("codex exited (%v) before its %s hook ran\n%s\nhooks:\n%s", run.err, event, run.Output(), tap.Transcript())
		case <-deadline:
			t.Fatalf("no %s hook within %s\n%s", event, within, tap.Transcript())
		}
	}
}

// codexRun is one running `codex exec`.
type codexRun struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error
	cancel         context.CancelFunc
}

// Output is Codex's stdout and stderr, for failure messages.
func (r *codexRun) Output() string {
	select {
	case <-r.done:
		return "stdout:\n" + r.stdout.String() + "\nstderr:\n" + r.stderr.String()
	default:
		return "(codex still running)"
	}
}

// Wait waits for Codex to exit.
func (r *codexRun) Wait(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(within):
		r.cancel()
		<-r.done
		t.Fatalf("codex did not exit within %s\n%s", within, r.Output())
	}
}

// codexFixture is a Gatehouse server, a fake Responses API that asks for one shell
// command, and a CODEX_HOME whose config.toml points Codex at both: the model
// provider at the fake, PermissionRequest and PreToolUse command hooks at Gatehouse
// (through the tap).
type codexFixture struct {
	srv   *testserver.Server
	tap   *codexHookTap
	model *fakemodel.Responses
	home  string // CODEX_HOME
	work  string // Codex's working directory
	token string // codexDeveloper's hooks-only API token
}

// codexDeveloper owns the hooks-only API token Codex's hook sends; the prompts park
// in their sessions and they decide on the approval page.
const codexDeveloper = "dev@example.com"

// codexBothHooks configures PermissionRequest and PreToolUse, as codex-settings prints.
var codexBothHooks = []string{"PermissionRequest", "PreToolUse"}

// codexSettingsFor runs `gatehouse codex-settings` as a user would — the hook command
// is the built gatehouse binary forwarding with `gatehouse hook codex`, the token read
// from GATEHOUSE_TOKEN — and keeps the hook blocks of events only, as a user deletes
// the PreToolUse block the output's comment names to be asked only when Codex would.
func codexSettingsFor(t *testing.T, gatehouse, url string, events []string) string {
	t.Helper()
	cmd := exec.Command(gatehouse, "codex-settings", "--url", url, "--token-env", "GATEHOUSE_TOKEN", "--command", gatehouse)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gatehouse codex-settings: %v\n%s", err, stderr.String())
	}
	blocks := strings.Split(string(out), "\n[[hooks.")
	kept := blocks[0]
	for _, b := range blocks[1:] {
		for _, ev := range events {
			if strings.HasPrefix(b, ev+"]]") || strings.HasPrefix(b, ev+".hooks]]") {
				kept += "\n[[hooks." + b
				break
			}
		}
	}
	for _, ev := range events {
		if !strings.Contains(kept, "[[hooks."+ev+".hooks]]") {
			t.Fatalf("codex-settings printed no %s hook:\n%s", ev, out)
		}
	}
	if !strings.Contains(kept, "hook codex") {
		t.Fatalf("codex-settings does not run `gatehouse hook codex`:\n%s", kept)
	}
	return kept
}

func newCodexFixture(t *testing.T, db testserver.DB, command string, events []string, flags ...string) *codexFixture {
	t.Helper()
	srv := testserver.Start(t, db.NewURL(t), append([]string{"--auth", "header"}, flags...)...)
	f := &codexFixture{srv: srv, tap: newCodexHookTap(t, srv.URL), home: t.TempDir(), work: t.TempDir()}
	_, f.token = srv.IssueToken(t, codexDeveloper, "hooks", "", time.Time{})
	f.model = fakemodel.StartResponses(t, fakemodel.ResponsesScript{
		Tool: "exec_command",
		Arguments: map[string]any{"cmd": command, "justification": "Create the marker file the task asks for",
			"sandbox_permissions": "require_escalated"},
		FinalText: "Finished.",
	})
	config := fmt.Sprintf(`model = "gpt-5.1-codex"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake Responses API"
base_url = "%s/v1"
env_key = "FAKE_OPENAI_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, f.model.URL)
	config += codexSettingsFor(t, buildGatehouse(t), f.tap.URL, events)
	if err := os.WriteFile(filepath.Join(f.home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// start runs `codex exec` headless with on-request approvals reviewed automatically
// (--approve-for-me: the hooks run before that reviewer) and the hooks trusted.
func (f *codexFixture) start(t *testing.T, prompt string, limit time.Duration) *codexRun {
	t.Helper()
	bin := testnpm.NodeModule(t, codexBin)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	cmd := exec.CommandContext(ctx, bin, "exec", "--approve-for-me", "--dangerously-bypass-hook-trust",
		"--skip-git-repo-check", "--ephemeral", "-C", f.work, prompt)
	cmd.Dir = f.work
	cmd.WaitDelay = 5 * time.Second
	dead := claudeDeadProxy(t)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + f.home,
		"CODEX_HOME=" + f.home,
		"TMPDIR=" + f.home,
		"FAKE_OPENAI_KEY=test",
		"GATEHOUSE_TOKEN=" + f.token,
		"HTTP_PROXY=" + dead, "HTTPS_PROXY=" + dead, "http_proxy=" + dead, "https_proxy=" + dead,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	r := &codexRun{cmd: cmd, done: make(chan struct{}), cancel: cancel}
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
		if t.Failed() || testing.Verbose() {
			t.Logf("codex exited: %v\n%s\nhooks:\n%s\nmodel requests:\n%s", r.err, r.Output(), f.tap.Transcript(), f.model.Summary())
		}
	})
	return r
}

// waitPrompt waits for the pending prompt Codex's hook parked in the Gatehouse session
// for the Codex session, and returns the session id and the prompt. The hook's arrival
// is the event waited on; the prompt is attached right after it, so the short poll
// that follows ends at once.
func (f *codexFixture) waitPrompt(t *testing.T, run *codexRun, event string, within time.Duration) (string, models.Elicitation) {
	t.Helper()
	body := f.tap.WaitHook(t, run, event, within)
	ctx := context.Background()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		list := f.srv.Client(codexDeveloper).Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)
		sessions, _ := list["sessions"].([]any)
		for _, s := range sessions {
			m, _ := s.(map[string]any)
			sid, _ := m["id"].(string)
			sess, err := f.srv.App.Store.GetSession(ctx, sid)
			if err != nil {
				t.Fatalf("session %s: %v", sid, err)
			}
			pending, err := f.srv.App.Store.PendingInSubtree(ctx, sess.Path)
			if err != nil {
				t.Fatalf("pending prompts: %v", err)
			}
			if len(pending) > 0 {
				return sid, pending[0]
			}
		}
		select {
		case <-run.done:
			t.Fatalf("codex exited (%v) before Gatehouse asked a person (hook %v)\n%s\nhooks:\n%s", run.err, body, run.Output(), f.tap.Transcript())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no pending prompt within %s after Codex's %s hook\nhooks:\n%s", within, event, f.tap.Transcript())
	return "", models.Elicitation{}
}
