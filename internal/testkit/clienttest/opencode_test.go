package clienttest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/fakemodel"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testnpm"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// openCodeBin is the pinned OpenCode server from package.json (opencode-linux-x64
// 1.18.33: the platform build the opencode-ai wrapper would run).
const openCodeBin = "opencode-linux-x64/bin/opencode"

// openCodeDeveloper owns the hooks-only API token the bridge sends.
const openCodeDeveloper = "dev@example.com"

// openCodeFixture is a Gatehouse server, a fake chat-completions model that asks for
// one bash command, a real `opencode serve` whose project config points its model at
// the fake and asks before every bash command, and the real `gatehouse bridge
// opencode` between them.
type openCodeFixture struct {
	srv       *testserver.Server
	model     *fakemodel.Chat
	gatehouse string // the built gatehouse binary
	token     string
	project   string // OpenCode's project directory (the marker goes here)
	openCode  string // OpenCode's server URL
	proc      *openCodeProcess
}

// openCodeProcess is a started child process (opencode serve, the bridge) whose output is kept for failure messages.
type openCodeProcess struct {
	name string
	cmd  *exec.Cmd
	out  openCodeOutput
	done chan struct{}
	err  error
}

type openCodeOutput struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *openCodeOutput) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *openCodeOutput) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startOpenCodeProcess runs cmd until the test ends (killed then), logging its output on failure.
func startOpenCodeProcess(t *testing.T, name string, cmd *exec.Cmd) *openCodeProcess {
	t.Helper()
	p := &openCodeProcess{name: name, cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &p.out, &p.out
	cmd.WaitDelay = 5 * time.Second
	// The child dies with the test binary (a timeout's panic runs no cleanup).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("%s exited: %v\n%s", name, p.err, p.out.String())
		}
	})
	return p
}

// stop ends the process with SIGTERM (SIGKILL after 10 s) and waits for it.
func (p *openCodeProcess) stop(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *openCodeProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func openCodeFreePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func newOpenCodeFixture(t *testing.T, db testserver.DB, marker string, flags ...string) *openCodeFixture {
	t.Helper()
	bin := testnpm.NodeModule(t, openCodeBin) // skip (or fail in CI) before building anything
	srv := testserver.Start(t, db.NewURL(t), append([]string{"--auth", "header"}, flags...)...)
	f := &openCodeFixture{srv: srv, gatehouse: buildGatehouse(t), project: filepath.Dir(marker)}
	_, f.token = srv.IssueToken(t, openCodeDeveloper, "hooks", "", time.Time{})
	f.model = fakemodel.StartChat(t, fakemodel.ChatScript{Tool: "bash", Model: "fake-model",
		Arguments: map[string]any{"command": "touch " + marker, "description": "Create the marker file"}, FinalText: "Finished."})

	// The offline configuration of PROTOCOLS.md: the provider package
	// (@ai-sdk/openai-compatible) is bundled in the binary, so nothing is installed;
	// bash asks, so every command waits for a reply.
	config := map[string]any{"$schema": "https://opencode.ai/config.json", "model": "fake/fake-model",
		"permission": map[string]any{"bash": "ask"},
		"provider": map[string]any{"fake": map[string]any{"npm": "@ai-sdk/openai-compatible",
			"options": map[string]any{"baseURL": f.model.URL + "/v1", "apiKey": "fake"},
			"models":  map[string]any{"fake-model": map[string]any{"tool_call": true}}}}}
	raw, _ := json.Marshal(config)
	if err := os.WriteFile(filepath.Join(f.project, "opencode.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	port := openCodeFreePort(t)
	f.openCode = "http://127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "serve", "--port", strconv.Itoa(port), "--hostname", "127.0.0.1", "--print-logs")
	cmd.Dir = f.project
	dead := claudeDeadProxy(t)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local/share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local/state"),
		"TMPDIR=" + home,
		"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"HTTP_PROXY=" + dead, "HTTPS_PROXY=" + dead, "http_proxy=" + dead, "https_proxy=" + dead,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	f.proc = startOpenCodeProcess(t, "opencode serve", cmd)
	deadline := time.Now().Add(time.Minute)
	quick := &http.Client{Timeout: 5 * time.Second}
	for {
		resp, err := quick.Get(f.openCode + "/permission?directory=" + f.project)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if f.proc.exited() || time.Now().After(deadline) {
			t.Fatalf("opencode serve did not answer (%v)\n%s", err, f.proc.out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return f
}

// startBridge runs `gatehouse bridge opencode` against the fixture.
func (f *openCodeFixture) startBridge(t *testing.T) *openCodeProcess {
	t.Helper()
	cmd := exec.Command(f.gatehouse, "bridge", "opencode", "--server", f.openCode, "--directory", f.project,
		"--url", f.srv.URL, "--token-env", "GATEHOUSE_TOKEN")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GATEHOUSE_TOKEN=" + f.token}
	return startOpenCodeProcess(t, "gatehouse bridge opencode", cmd)
}

// call sends one request to OpenCode's API and decodes its JSON answer.
func (f *openCodeFixture) call(t *testing.T, method, path string, body any, out any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	req, _ := http.NewRequest(method, f.openCode+path+sep+"directory="+f.project, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, got)
	}
	if out != nil {
		if err := json.Unmarshal(got, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, got)
		}
	}
}

// ask opens an OpenCode session (a child of parent when set) and sends it a message
// without waiting for the answer; the fake model then asks for the bash command.
func (f *openCodeFixture) ask(t *testing.T, parent string) string {
	t.Helper()
	body := map[string]any{}
	if parent != "" {
		body["parentID"] = parent
	}
	var sess struct {
		ID string `json:"id"`
	}
	f.call(t, http.MethodPost, "/session", body, &sess)
	f.call(t, http.MethodPost, "/session/"+sess.ID+"/prompt_async", map[string]any{
		"parts": []any{map[string]any{"type": "text", "text": "Create the marker file."}}}, nil)
	return sess.ID
}

// waitPrompt waits for the prompt the bridge parked, in the session Gatehouse made for
// the top-level OpenCode session, failing at once if OpenCode exits.
func (f *openCodeFixture) waitPrompt(t *testing.T, within time.Duration) (string, models.Elicitation) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		list := f.srv.Client(openCodeDeveloper).Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)
		sessions, _ := list["sessions"].([]any)
		for _, s := range sessions {
			m := s.(map[string]any)
			if m["parent_session_id"] != nil {
				continue
			}
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
		if f.proc.exited() {
			t.Fatalf("opencode exited before Gatehouse asked a person")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no pending prompt within %s; model requests:\n%s", within, f.model.Summary())
	return "", models.Elicitation{}
}

// promptsEver counts every prompt of session sid and its sub-agents, pending or decided.
func (f *openCodeFixture) promptsEver(t *testing.T, sid string) int {
	t.Helper()
	ctx := context.Background()
	sess, err := f.srv.App.Store.GetSession(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	pending, err := f.srv.App.Store.PendingInSubtree(ctx, sess.Path)
	if err != nil {
		t.Fatal(err)
	}
	decided, err := f.srv.App.Store.RecentDecidedInSubtree(ctx, sess.Path, 100)
	if err != nil {
		t.Fatal(err)
	}
	return len(pending) + len(decided)
}

func (f *openCodeFixture) resolve(t *testing.T, sid, eid string, body map[string]any) {
	t.Helper()
	r := f.srv.Client(openCodeDeveloper).Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", body)
	if r.Status != http.StatusAccepted || r.JSON(t)["outcome"] != "resolved" {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
}

// checkOpenCodePrompt asserts what the person is shown: who asks, the command, the shell kind.
func checkOpenCodePrompt(t *testing.T, prompt models.Elicitation, marker string) {
	t.Helper()
	params := prompt.DecodeParams().All
	if params["message"] != "OpenCode wants to run **touch "+marker+"**" || params["vendor"] != "OpenCode" ||
		params["tool_kind"] != "shell" || params["tool_name"] != "Bash" || params["cwd"] != filepath.Dir(marker) {
		t.Fatalf("prompt params = %v", params)
	}
	if id, _ := params["opencode_request_id"].(string); !strings.HasPrefix(id, "per_") || !strings.HasPrefix(prompt.ID, "elicit_opencode_") {
		t.Fatalf("prompt %s for OpenCode request %v", prompt.ID, params["opencode_request_id"])
	}
}

// TestOpenCodeApprove: real OpenCode asks to run a command; the bridge parks it in
// the session of OpenCode's own session id, saying OpenCode asks; approved through the
// API, the command runs once.
func TestOpenCodeApprove(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		marker := filepath.Join(t.TempDir(), "approved.txt")
		f := newOpenCodeFixture(t, db, marker)
		f.startBridge(t)
		ocSession := f.ask(t, "")
		sid, prompt := f.waitPrompt(t, time.Minute)
		checkOpenCodePrompt(t, prompt, marker)
		if sess := f.srv.Client(openCodeDeveloper).Do(t, http.MethodGet, "/v1/sessions/"+sid, nil).JSON(t); !strings.HasPrefix(sess["title"].(string), "OpenCode "+ocSession[:8]) {
			t.Fatalf("session = %v", sess)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("the command ran before anyone approved it")
		}
		f.resolve(t, sid, prompt.ID, map[string]any{"action": "accept"})
		if got := f.model.WaitToolMessage(t, time.Minute); strings.Contains(got, "rejected") {
			t.Fatalf("the tool message after an approval: %q", got)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("approved, but the command did not run: %v", err)
		}
		if n := len(f.model.ToolMessages()); n != 1 {
			t.Fatalf("%d tool results, want 1: %q", n, f.model.ToolMessages())
		}
		if n := f.promptsEver(t, sid); n != 1 {
			t.Fatalf("%d prompts for one request", n)
		}
	})
}

// TestOpenCodeReject: rejected with a reason, the command does not run and the model
// is told the reason.
func TestOpenCodeReject(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		marker := filepath.Join(t.TempDir(), "rejected.txt")
		f := newOpenCodeFixture(t, db, marker)
		f.startBridge(t)
		f.ask(t, "")
		sid, prompt := f.waitPrompt(t, time.Minute)
		const reason = "not in this repository, use the scratch dir"
		f.resolve(t, sid, prompt.ID, map[string]any{"action": "decline", "content": map[string]any{"feedback": reason}})
		if got := f.model.WaitToolMessage(t, time.Minute); !strings.Contains(got, reason) {
			t.Fatalf("the model was not told the reason: %q", got)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("rejected, but the command ran")
		}
	})
}

// TestOpenCodeBridgeRestart: the bridge stops while a request waits and another
// starts; it re-attaches to the same prompt (no second one), and the approval given
// then is answered in OpenCode once.
func TestOpenCodeBridgeRestart(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		marker := filepath.Join(t.TempDir(), "restarted.txt")
		// A long grace: the prompt must survive the gap between the two bridges
		// however slowly the second starts.
		f := newOpenCodeFixture(t, db, marker, "--disconnect-grace", "5m")
		first := f.startBridge(t)
		f.ask(t, "")
		sid, prompt := f.waitPrompt(t, time.Minute)
		first.stop(t)
		second := f.startBridge(t)
		openCodeWaitLog(t, second, "connected to OpenCode", time.Minute)
		f.resolve(t, sid, prompt.ID, map[string]any{"action": "accept"})
		f.model.WaitToolMessage(t, time.Minute)
		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("approved, but the command did not run: %v", err)
		}
		if n := f.promptsEver(t, sid); n != 1 {
			t.Fatalf("%d prompts for one request across a bridge restart", n)
		}
		if n := len(f.model.ToolMessages()); n != 1 {
			t.Fatalf("%d tool results, want 1", n)
		}
	})
}

// TestOpenCodeSubAgent: a request of a child OpenCode session (a sub-agent's) shows
// under the Gatehouse session of its top-level OpenCode session.
func TestOpenCodeSubAgent(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		marker := filepath.Join(t.TempDir(), "child.txt")
		f := newOpenCodeFixture(t, db, marker)
		f.startBridge(t)
		var parent struct {
			ID string `json:"id"`
		}
		f.call(t, http.MethodPost, "/session", map[string]any{}, &parent)
		child := f.ask(t, parent.ID)
		sid, prompt := f.waitPrompt(t, time.Minute)
		if prompt.SessionID == sid {
			t.Fatal("the sub-agent's prompt is on the top-level session itself")
		}
		c := f.srv.Client(openCodeDeveloper)
		root := c.Do(t, http.MethodGet, "/v1/sessions/"+sid, nil).JSON(t)
		sub := c.Do(t, http.MethodGet, "/v1/sessions/"+prompt.SessionID, nil).JSON(t)
		if !strings.HasPrefix(root["title"].(string), "OpenCode "+parent.ID[:8]) || sub["parent_session_id"] != sid || sub["title"] != "subagent:"+child {
			t.Fatalf("root %v, sub-agent %v", root, sub)
		}
		f.resolve(t, prompt.SessionID, prompt.ID, map[string]any{"action": "accept"})
		f.model.WaitToolMessage(t, time.Minute)
		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("approved, but the command did not run: %v", err)
		}
	})
}

// openCodeWaitLog waits for text in a process's output.
func openCodeWaitLog(t *testing.T, p *openCodeProcess, text string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(p.out.String(), text) {
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("%s did not log %q\n%s", p.name, text, p.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
