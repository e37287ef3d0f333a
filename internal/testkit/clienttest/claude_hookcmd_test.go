package clienttest

// Real Claude Code with `gatehouse hook claude` as its PreToolUse command hook (the
// settings printed by `gatehouse claude-settings --command`), asking for a Bash tool
// through the fake model: an approval runs the command, a rejection does not and the
// model reads the person's message.

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/fakemodel"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// buildGatehouse builds cmd/gatehouse into a directory removed when the test ends.
func buildGatehouse(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gatehouse")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/gatehouse-dev/gatehouse/cmd/gatehouse").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startClaudeWithSettings runs `claude -p prompt --settings settings [args…]` against
// the fake model with the same isolation as startClaude (temp home, dead proxies), no
// MCP.
func startClaudeWithSettings(t *testing.T, bin, model, settings, prompt string, env []string, limit time.Duration, args ...string) *claudeRun {
	t.Helper()
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	cmd := exec.CommandContext(ctx, bin, append([]string{"-p", prompt, "--settings=" + settings, "--output-format=json"}, args...)...)
	cmd.Dir = home
	cmd.WaitDelay = 5 * time.Second
	dead := claudeDeadProxy(t)
	cmd.Env = append([]string{
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
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"HTTP_PROXY=" + dead, "HTTPS_PROXY=" + dead, "http_proxy=" + dead, "https_proxy=" + dead,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}, env...)
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
			t.Logf("claude exited: %v\nstdout:\n%s\nstderr:\n%s", r.err, r.stdout.String(), r.stderr.String())
		}
	})
	return r
}

// commandHookSettings writes the settings `gatehouse claude-settings --command` prints
// for srv (header auth, the token from GATEHOUSE_TOKEN; PreToolUse on Bash) and returns
// the file's path.
func commandHookSettings(t *testing.T, gatehouse, serverURL string) string {
	t.Helper()
	out, err := exec.Command(gatehouse, "claude-settings", "--command", "--gatehouse-bin", gatehouse, "--auth", "header",
		"--token-env", "GATEHOUSE_TOKEN", "--public-url", serverURL, "--events", "PreToolUse", "--matcher", "Bash", "--elicitation-timeout", "2m").Output()
	if err != nil {
		t.Fatalf("claude-settings: %v", err)
	}
	var s map[string]any
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("claude-settings printed %q: %v", out, err)
	}
	if !strings.Contains(string(out), `"type": "command"`) || !strings.Contains(string(out), "hook claude --url "+serverURL) {
		t.Fatalf("claude-settings --command printed %s", out)
	}
	path := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitHookPrompt waits for the first pending prompt of any of c's sessions on srv (the
// zero-config session the hook created), failing at once if Claude Code exits first.
func waitHookPrompt(t *testing.T, srv *testserver.Server, c *testserver.Client, run *claudeRun, within time.Duration) (string, string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case <-run.done:
			t.Fatalf("claude exited (%v) before Gatehouse asked a person\n%s", run.err, run.Output())
		default:
		}
		list := c.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)
		sessions, _ := list["sessions"].([]any)
		for _, s := range sessions {
			sid, _ := s.(map[string]any)["id"].(string)
			sess, err := srv.App.Store.GetSession(ctx, sid)
			if err != nil {
				t.Fatal(err)
			}
			if pending, _ := srv.App.Store.PendingInSubtree(ctx, sess.Path); len(pending) > 0 {
				return sid, pending[0].ID
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no prompt within %s", within)
	return "", ""
}

// TestClaudeCodeCommandHookThroughTheForwarder: Claude Code's PreToolUse command hook
// is `gatehouse hook claude`, with a hooks-only API token in GATEHOUSE_TOKEN (the server
// runs header auth and trusts no proxy on loopback, so the token is the only identity);
// the Bash call waits until its owner decides through the API. Approved, the command
// runs; declined, it does not and the model reads the person's message.
func TestClaudeCodeCommandHookThroughTheForwarder(t *testing.T) {
	gatehouse := buildGatehouse(t)
	const reason = "use the staging box"
	for _, v := range claudeVersions {
		for _, action := range []string{"accept", "decline"} {
			t.Run(v.name+"/"+action, func(t *testing.T) {
				bin := claudeBinary(t, v)
				srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--auth", "header", "--trusted-proxies", "10.0.0.0/8")
				const owner = "erin@example.com"
				_, hookToken := srv.IssueToken(t, owner, "hooks", "", time.Time{})
				_, ownerToken := srv.IssueToken(t, owner, "", "", time.Time{})
				c := srv.TokenClient(ownerToken)
				marker := filepath.Join(t.TempDir(), "ran")
				model := fakemodel.Start(t, fakemodel.Script{Tool: "Bash",
					Input: map[string]any{"command": "touch " + marker, "description": "Mark the run"}, FinalText: "Done."})
				settings := commandHookSettings(t, gatehouse, srv.URL)
				run := startClaudeWithSettings(t, bin, model.URL, settings, "mark the run",
					[]string{"GATEHOUSE_TOKEN=" + hookToken}, claudeRunLimit)
				sid, eid := waitHookPrompt(t, srv, c, run, claudeWait)
				if _, err := os.Stat(marker); err == nil {
					t.Fatal("the command ran before anyone decided")
				}
				body := map[string]any{"action": action}
				if action == "decline" {
					body["content"] = map[string]any{"feedback": reason}
				}
				if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", body); r.Status >= 300 {
					t.Fatalf("resolve: %d %s", r.Status, r.Body)
				}
				run.Wait(t, claudeWait)
				tr := model.WaitToolResult(t, time.Second)
				t.Logf("tool_result: %+v", tr)
				_, statErr := os.Stat(marker)
				switch action {
				case "accept":
					if statErr != nil || tr.IsError {
						t.Fatalf("approved, but the command did not run (%v); tool_result %+v\n%s", statErr, tr, run.Output())
					}
				default:
					if statErr == nil {
						t.Fatalf("declined, but the command ran")
					}
					if !strings.Contains(tr.Text, reason) {
						t.Fatalf("tool_result = %+v, want the person's message %q", tr, reason)
					}
				}
			})
		}
	}
}
