package clienttest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/fakemodel"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testnpm"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// copilotBin is the pinned Copilot CLI from package.json (@github/copilot 1.0.102).
const copilotBin = ".bin/copilot"

// copilotDeveloper owns the hooks-only API token Copilot's hook sends.
const copilotDeveloper = "dev@example.com"

// copilotFixture is a Gatehouse server, a fake chat-completions model that asks for
// one bash command, and a COPILOT_HOME whose settings.json `gatehouse setup copilot
// --install` wrote, as a person would.
type copilotFixture struct {
	srv      *testserver.Server
	model    *fakemodel.Chat
	home     string // HOME and COPILOT_HOME
	work     string // Copilot's working directory
	token    string
	settings string // the installed settings.json
}

func newCopilotFixture(t *testing.T, db testserver.DB, command string) *copilotFixture {
	t.Helper()
	testnpm.NodeModule(t, copilotBin) // skip (or fail in CI) before building anything
	srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
	f := &copilotFixture{srv: srv, home: t.TempDir(), work: t.TempDir()}
	_, f.token = srv.IssueToken(t, copilotDeveloper, "hooks", "", time.Time{})
	f.model = fakemodel.StartChat(t, fakemodel.ChatScript{Tool: "bash",
		Arguments: map[string]any{"command": command, "description": "Create the marker file"}, FinalText: "Finished."})
	gatehouse := buildGatehouse(t)
	cmd := exec.Command(gatehouse, "setup", "copilot", "--install", "--url", srv.URL, "--token-env", "GATEHOUSE_TOKEN", "--command", gatehouse)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + f.home, "COPILOT_HOME=" + f.home}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gatehouse setup copilot --install: %v\n%s", err, out)
	}
	f.settings = filepath.Join(f.home, "settings.json")
	raw, err := os.ReadFile(f.settings)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "hook copilot") || !strings.Contains(string(raw), "--answer-within") {
		t.Fatalf("setup installed no forwarding preToolUse hook:\n%s", raw)
	}
	return f
}

// shortenTimeout rewrites the installed preToolUse hook to a timeout of secs with
// --answer-within within, as a person would who wants Copilot to wait less.
func (f *copilotFixture) shortenTimeout(t *testing.T, secs, within string) {
	t.Helper()
	raw, err := os.ReadFile(f.settings)
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	i := strings.Index(s, "--answer-within ")
	if i < 0 {
		t.Fatalf("no --answer-within in\n%s", s)
	}
	end := i + len("--answer-within ") + strings.IndexByte(s[i+len("--answer-within "):], '"')
	s = s[:i] + "--answer-within " + within + s[end:]
	s = strings.ReplaceAll(s, `"timeoutSec": 86430`, `"timeoutSec": `+secs)
	if !strings.Contains(s, `"timeoutSec": `+secs) {
		t.Fatalf("no default timeoutSec to shorten in\n%s", raw)
	}
	if err := os.WriteFile(f.settings, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// start runs `copilot -p prompt --allow-all-tools` headless and offline against the
// fake model (PROTOCOLS.md): every tool is allowed by Copilot itself, so only the
// preToolUse hook stands between the model and the command.
func (f *copilotFixture) start(t *testing.T, prompt string, limit time.Duration) *agentRun {
	t.Helper()
	return startAgentRun(t, "copilot", testnpm.NodeModule(t, copilotBin), []string{"-p", prompt, "--allow-all-tools"}, f.work, f.home,
		[]string{"COPILOT_HOME=" + f.home, "COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL=" + f.model.URL + "/v1",
			"COPILOT_PROVIDER_API_KEY=fake", "COPILOT_MODEL=gpt-4.1", "GATEHOUSE_TOKEN=" + f.token},
		limit, f.model.Summary)
}

// waitPrompt waits for the prompt Copilot's hook parked, in the session Gatehouse made
// for Copilot's sessionId, failing at once if Copilot exits first.
func (f *copilotFixture) waitPrompt(t *testing.T, run *agentRun, within time.Duration) (string, models.Elicitation) {
	t.Helper()
	return waitAgentPrompt(t, f.srv, copilotDeveloper, run, within)
}

// TestCopilotApprove: real Copilot (--allow-all-tools) asks to run a command; its
// preToolUse hook, installed by `gatehouse setup copilot --install`, parks a prompt
// that says Copilot CLI asks, in the session of Copilot's own session id; the
// developer approves on the approval page and the command runs once.
func TestCopilotApprove(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		marker := filepath.Join(t.TempDir(), "approved.txt")
		f := newCopilotFixture(t, db, "touch "+marker)
		run := f.start(t, "Create the marker file.", 3*time.Minute)

		sid, prompt := f.waitPrompt(t, run, time.Minute)
		params := prompt.DecodeParams().All
		if params["vendor"] != "Copilot CLI" || params["message"] != "Copilot CLI wants to run **touch "+marker+"**" ||
			params["tool_kind"] != "shell" || params["copilot_event"] != "preToolUse" {
			t.Fatalf("prompt params = %v", params)
		}
		sess, err := f.srv.App.Store.GetSession(context.Background(), sid)
		if err != nil || sess.ExternalSessionID == nil || *sess.ExternalSessionID != "copilot:"+params["copilot_session_id"].(string) {
			t.Fatalf("session %+v (%v) is not Copilot's session %v", sess, err, params["copilot_session_id"])
		}
		f.srv.DecideOnPage(t, copilotDeveloper, sid, prompt.ID, "accept", "")
		run.Wait(t, 2*time.Minute)

		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("the approved command did not run: %v\n%s", err, run.Output())
		}
		out := f.model.WaitToolMessage(t, 10*time.Second)
		if strings.Contains(out, "denied") {
			t.Fatalf("the model was told the approved command was denied: %s", out)
		}
	})
}

// TestCopilotReject: a person rejects with a reason; the command never runs and the
// reason reaches the model in the tool message.
func TestCopilotReject(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		marker := filepath.Join(t.TempDir(), "rejected.txt")
		f := newCopilotFixture(t, db, "touch "+marker)
		run := f.start(t, "Create the marker file.", 3*time.Minute)

		sid, prompt := f.waitPrompt(t, run, time.Minute)
		const reason = "Not on this machine: use the staging box"
		f.srv.DecideOnPage(t, copilotDeveloper, sid, prompt.ID, "decline", reason)
		out := f.model.WaitToolMessage(t, 2*time.Minute)
		run.Wait(t, 2*time.Minute)

		if _, err := os.Stat(marker); err == nil {
			t.Fatal("the rejected command ran")
		}
		if !strings.Contains(out, reason) {
			t.Fatalf("the model's tool message does not carry the reason %q: %s", reason, out)
		}
	})
}

// TestCopilotHookTimeoutDenies: Copilot runs the tool when its preToolUse hook times
// out. Installed with a short timeout and --answer-within below it, a prompt nobody
// answers in time ends in the forwarder's deny before that timeout: the command does
// not run and the model reads why.
func TestCopilotHookTimeoutDenies(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		marker := filepath.Join(t.TempDir(), "late.txt")
		f := newCopilotFixture(t, db, "touch "+marker)
		f.shortenTimeout(t, "8", "3s")
		run := f.start(t, "Create the marker file.", 3*time.Minute)

		f.waitPrompt(t, run, time.Minute) // parked; nobody answers
		out := f.model.WaitToolMessage(t, 2*time.Minute)
		run.Wait(t, 2*time.Minute)

		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("the command ran after the hook's timeout\n%s", run.Output())
		}
		if !strings.Contains(out, "Nobody answered in Gatehouse within 3s") {
			t.Fatalf("the model's tool message does not say nobody answered in time: %s", out)
		}
	})
}
