package clienttest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
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
)

// acpEditor plays the editor (Zed) on the other side of `gatehouse acp -- <agent>`:
// it writes JSON-RPC requests to its stdin and reads every message it prints.
type acpEditor struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr syncBuffer
	mu     sync.Mutex
	seen   []map[string]any
	more   chan struct{}
	done   chan struct{}
}

// startACP runs `gatehouse acp <flags> -- node claude-code-acp` with Claude Code's
// model at model, in a temp home, as root (IS_SANDBOX=1, which claude-code-acp needs).
func startACP(t *testing.T, gatehouse, model string, env []string, flags ...string) *acpEditor {
	t.Helper()
	node := testnpm.Node(t)
	agent := testnpm.NodeModule(t, "@zed-industries/claude-code-acp/dist/index.js")
	home := t.TempDir()
	env = append([]string{
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"ANTHROPIC_BASE_URL=" + model, "ANTHROPIC_API_KEY=sk-ant-fake", "IS_SANDBOX=1",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}, env...)
	return startACPAgent(t, gatehouse, home, []string{node, agent}, env, flags...)
}

// startACPAgent runs `gatehouse acp <flags> -- agent…` in home, offline (every proxy
// variable points at a closed port), with env added.
func startACPAgent(t *testing.T, gatehouse, home string, agent, env []string, flags ...string) *acpEditor {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	args := append(append(append([]string{"acp"}, flags...), "--"), agent...)
	cmd := exec.CommandContext(ctx, gatehouse, args...)
	cmd.Dir = home
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(offlineEnv(t, home), env...)
	e := &acpEditor{t: t, cmd: cmd, more: make(chan struct{}), done: make(chan struct{})}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	e.stdin, cmd.Stderr = stdin, &e.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start gatehouse acp: %v", err)
	}
	go func() {
		br := bufio.NewReader(stdout)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				var m map[string]any
				if jerr := json.Unmarshal(line, &m); jerr != nil {
					t.Errorf("gatehouse acp printed a line that is not JSON: %q", line)
				}
				e.mu.Lock()
				e.seen = append(e.seen, m)
				close(e.more)
				e.more = make(chan struct{})
				e.mu.Unlock()
			}
			if err != nil {
				break
			}
		}
		_ = cmd.Wait()
		close(e.done)
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-e.done:
		case <-time.After(20 * time.Second):
			t.Error("gatehouse acp did not exit within 20s of its editor closing its input")
		}
		cancel()
		<-e.done
		if t.Failed() {
			t.Logf("gatehouse acp stderr:\n%s", e.stderr.String())
		}
	})
	return e
}

// send writes one JSON-RPC message.
func (e *acpEditor) send(msg map[string]any) {
	e.t.Helper()
	msg["jsonrpc"] = "2.0"
	raw, _ := json.Marshal(msg)
	if _, err := e.stdin.Write(append(raw, '\n')); err != nil {
		e.t.Fatalf("write to gatehouse acp: %v", err)
	}
}

// waitFor returns the first message (from the start) that match accepts.
func (e *acpEditor) waitFor(what string, within time.Duration, match func(map[string]any) bool) map[string]any {
	e.t.Helper()
	deadline := time.After(within)
	for i := 0; ; {
		e.mu.Lock()
		for ; i < len(e.seen); i++ {
			if match(e.seen[i]) {
				m := e.seen[i]
				e.mu.Unlock()
				return m
			}
		}
		more := e.more
		e.mu.Unlock()
		select {
		case <-more:
		case <-e.done:
			e.t.Fatalf("gatehouse acp exited before %s\n%s", what, e.stderr.String())
		case <-deadline:
			e.t.Fatalf("no %s within %s", what, within)
		}
	}
}

// response waits for the answer to request id.
func (e *acpEditor) response(id float64, within time.Duration) map[string]any {
	e.t.Helper()
	return e.waitFor("the answer to request "+strings.TrimSpace(jsonOf(id)), within, func(m map[string]any) bool {
		v, ok := m["id"].(float64)
		return ok && v == id && m["method"] == nil
	})
}

// sawMethod reports whether the editor was sent a message with method.
func (e *acpEditor) sawMethod(method string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range e.seen {
		if m["method"] == method {
			return true
		}
	}
	return false
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// open initializes the agent and opens a session in dir, returning its id.
func (e *acpEditor) open(dir string) string {
	e.t.Helper()
	e.send(map[string]any{"id": 0, "method": "initialize", "params": map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}, "terminal": false}}})
	e.response(0, time.Minute)
	e.send(map[string]any{"id": 1, "method": "session/new", "params": map[string]any{"cwd": dir, "mcpServers": []any{}}})
	res, _ := e.response(1, time.Minute)["result"].(map[string]any)
	sid, _ := res["sessionId"].(string)
	if sid == "" {
		e.t.Fatalf("session/new gave no sessionId: %v", res)
	}
	return sid
}

// prompt sends the user's turn as request 2.
func (e *acpEditor) prompt(sid, text string) {
	e.send(map[string]any{"id": 2, "method": "session/prompt", "params": map[string]any{"sessionId": sid,
		"prompt": []any{map[string]any{"type": "text", "text": text}}}})
}

// acpFixture is a Gatehouse, the fake model scripted to run `touch <marker>` with
// Claude Code's Bash tool, and `gatehouse acp` in front of claude-code-acp.
type acpFixture struct {
	srv    *testserver.Server
	owner  *testserver.Client
	model  *fakemodel.Server
	marker string
	dir    string
	editor *acpEditor
}

func newACPFixture(t *testing.T, db testserver.DB, gatehouse string, flags ...string) *acpFixture {
	t.Helper()
	srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--disconnect-grace", "1s")
	const owner = "zoe@example.com"
	_, hookToken := srv.IssueToken(t, owner, "hooks", "", time.Time{})
	_, ownerToken := srv.IssueToken(t, owner, "", "", time.Time{})
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	model := fakemodel.Start(t, fakemodel.Script{Tool: "Bash",
		Input: map[string]any{"command": "touch " + marker, "description": "Mark the run"}, FinalText: "Done."})
	editor := startACP(t, gatehouse, model.URL, []string{"GATEHOUSE_TOKEN=" + hookToken},
		append([]string{"--url", srv.URL, "--token-env", "GATEHOUSE_TOKEN"}, flags...)...)
	return &acpFixture{srv: srv, owner: srv.TokenClient(ownerToken), model: model, marker: marker, dir: dir, editor: editor}
}

// TestACPAgentAsksGatehouse: Claude Code as an ACP agent (claude-code-acp) behind
// `gatehouse acp`: its permission request for `touch <marker>` parks at Gatehouse (the
// editor never sees it) as "Claude Code wants to run …" in the agent's session, in the
// session's directory. Approved, the command runs once and the turn ends; rejected, it
// does not run.
func TestACPAgentAsksGatehouse(t *testing.T) {
	gatehouse := buildGatehouse(t)
	for _, action := range []string{"accept", "decline"} {
		t.Run(action, func(t *testing.T) {
			testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
				f := newACPFixture(t, db, gatehouse)
				acpSession := f.editor.open(f.dir)
				f.editor.prompt(acpSession, "mark the run")
				sid, eid := waitACPPrompt(t, f)
				st := f.owner.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t)
				params, _ := st["params"].(map[string]any)
				if msg, _ := params["message"].(string); !strings.Contains(msg, "wants to run **touch "+f.marker+"**") || params["cwd"] != f.dir {
					t.Fatalf("prompt params %v", params)
				}
				if _, err := os.Stat(f.marker); err == nil {
					t.Fatal("the command ran before anyone decided")
				}
				if r := f.owner.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": action}); r.Status >= 300 {
					t.Fatalf("resolve: %d %s", r.Status, r.Body)
				}
				f.editor.response(2, 2*time.Minute)
				_, statErr := os.Stat(f.marker)
				if action == "accept" && statErr != nil {
					t.Fatalf("approved, but the command did not run: %v", statErr)
				}
				if action == "decline" && statErr == nil {
					t.Fatal("rejected, but the command ran")
				}
				if f.editor.sawMethod("session/request_permission") {
					t.Fatal("the editor was asked too: the request should have parked at Gatehouse only")
				}
			})
		})
	}
}

// TestACPCancelWithdrawsThePrompt: the editor cancels the turn while the request waits
// in Gatehouse: the agent is answered "cancelled" (the turn ends so), the command never
// runs, and the prompt ends instead of waiting for a person.
func TestACPCancelWithdrawsThePrompt(t *testing.T) {
	gatehouse := buildGatehouse(t)
	f := newACPFixture(t, testserver.Databases(t)[0], gatehouse)
	acpSession := f.editor.open(f.dir)
	f.editor.prompt(acpSession, "mark the run")
	sid, eid := waitACPPrompt(t, f)
	f.editor.send(map[string]any{"method": "session/cancel", "params": map[string]any{"sessionId": acpSession}})
	res, _ := f.editor.response(2, 2*time.Minute)["result"].(map[string]any)
	if res["stopReason"] != "cancelled" {
		t.Fatalf("session/prompt answered %v, want stopReason cancelled", res)
	}
	deadline := time.Now().Add(30 * time.Second)
	for f.owner.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t)["status"] == "pending" {
		if time.Now().After(deadline) {
			t.Fatal("the prompt still waits for a person after the editor cancelled")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(f.marker); err == nil {
		t.Fatal("the command ran after a cancel")
	}
}

// TestACPWithoutGatehouseTheEditorAsks: with Gatehouse unreachable the request goes on
// to the editor, whose own answer the agent gets: approving there runs the command.
func TestACPWithoutGatehouseTheEditorAsks(t *testing.T) {
	gatehouse := buildGatehouse(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	model := fakemodel.Start(t, fakemodel.Script{Tool: "Bash",
		Input: map[string]any{"command": "touch " + marker, "description": "Mark the run"}, FinalText: "Done."})
	e := startACP(t, gatehouse, model.URL, nil, "--url", claudeDeadProxy(t))
	sid := e.open(dir)
	e.prompt(sid, "mark the run")
	req := e.waitFor("the permission request passed on to the editor", 2*time.Minute, func(m map[string]any) bool {
		return m["method"] == "session/request_permission"
	})
	e.send(map[string]any{"id": req["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}}})
	e.response(2, 2*time.Minute)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the editor approved, but the command did not run: %v", err)
	}
}

// waitACPPrompt waits for the owner's first pending prompt.
func waitACPPrompt(t *testing.T, f *acpFixture) (string, string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-f.editor.done:
			t.Fatalf("gatehouse acp exited before Gatehouse asked a person\n%s", f.editor.stderr.String())
		default:
		}
		list := f.owner.Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)
		sessions, _ := list["sessions"].([]any)
		for _, s := range sessions {
			sid, _ := s.(map[string]any)["id"].(string)
			sess, err := f.srv.App.Store.GetSession(ctx, sid)
			if err != nil {
				t.Fatal(err)
			}
			if pending, _ := f.srv.App.Store.PendingInSubtree(ctx, sess.Path); len(pending) > 0 {
				return sid, pending[0].ID
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no prompt within 2m")
	return "", ""
}

// syncBuffer is a bytes.Buffer safe to read while a process writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

// TestACPGeminiAndCopilotAskGatehouse: Gemini CLI (`gemini --acp`, where its BeforeTool
// hook does not fire) and Copilot CLI (`copilot --acp`) as ACP agents behind `gatehouse
// acp`: each one's permission request for a shell command parks at Gatehouse, and the
// person's approval — answered with the agent's own allow-once option, whatever its id —
// runs the command once.
func TestACPGeminiAndCopilotAskGatehouse(t *testing.T) {
	gatehouse := buildGatehouse(t)
	for _, agent := range []struct {
		name string
		// start returns the agent's command line and environment for a fake model
		// that scripts `touch marker`, with home as HOME.
		start func(t *testing.T, home, marker string) ([]string, []string)
	}{
		{"gemini", func(t *testing.T, home, marker string) ([]string, []string) {
			model := fakemodel.StartGemini(t, fakemodel.GeminiScript{Tool: "run_shell_command",
				Args: map[string]any{"command": "touch " + marker, "description": "Create the marker file"}, FinalText: "Finished."})
			settings := filepath.Join(home, ".gemini", "settings.json")
			if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
				t.Fatal(err)
			}
			own := `{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}`
			if err := os.WriteFile(settings, []byte(own), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{testnpm.NodeModule(t, geminiBin), "--acp"},
				[]string{"GOOGLE_GEMINI_BASE_URL=" + model.URL, "GEMINI_API_KEY=fake", "GEMINI_CLI_TRUST_WORKSPACE=true"}
		}},
		{"copilot", func(t *testing.T, home, marker string) ([]string, []string) {
			model := fakemodel.StartChat(t, fakemodel.ChatScript{Tool: "bash",
				Arguments: map[string]any{"command": "touch " + marker, "description": "Create the marker file"}, FinalText: "Finished."})
			return []string{testnpm.NodeModule(t, copilotBin), "--acp"},
				[]string{"COPILOT_HOME=" + home, "COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL=" + model.URL + "/v1",
					"COPILOT_PROVIDER_API_KEY=fake", "COPILOT_MODEL=gpt-4.1"}
		}},
	} {
		t.Run(agent.name, func(t *testing.T) {
			srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--auth", "header")
			const owner = "gia@example.com"
			_, hookToken := srv.IssueToken(t, owner, "hooks", "", time.Time{})
			_, ownerToken := srv.IssueToken(t, owner, "", "", time.Time{})
			home, dir := t.TempDir(), t.TempDir()
			marker := filepath.Join(dir, "ran")
			argv, env := agent.start(t, home, marker)
			e := startACPAgent(t, gatehouse, home, argv, append(env, "GATEHOUSE_TOKEN="+hookToken),
				"--url", srv.URL, "--token-env", "GATEHOUSE_TOKEN")
			f := &acpFixture{srv: srv, owner: srv.TokenClient(ownerToken), marker: marker, dir: dir, editor: e}
			e.prompt(e.open(dir), "create the marker file")
			sid, eid := waitACPPrompt(t, f)
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the command ran before anyone decided")
			}
			if r := f.owner.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"}); r.Status >= 300 {
				t.Fatalf("resolve: %d %s", r.Status, r.Body)
			}
			e.response(2, 2*time.Minute)
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("approved, but the command did not run: %v", err)
			}
			if e.sawMethod("session/request_permission") {
				t.Fatal("the editor was asked too")
			}
		})
	}
}
