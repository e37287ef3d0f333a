package clienttest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/fakemodel"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testnpm"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// geminiBin is the pinned Gemini CLI from package.json (@google/gemini-cli 0.61.0).
const geminiBin = ".bin/gemini"

// geminiDeveloper owns the hooks-only API token Gemini's hook sends.
const geminiDeveloper = "dev@example.com"

// geminiFixture is a Gatehouse server, a fake Gemini API that asks for one shell
// command, and a HOME whose ~/.gemini/settings.json selects API-key auth and holds the
// hook `gatehouse setup gemini --install` merged into it, as a person would.
type geminiFixture struct {
	srv      *testserver.Server
	model    *fakemodel.Gemini
	home     string // HOME
	work     string // Gemini's working directory
	token    string
	settings string // the installed settings.json
}

func newGeminiFixture(t *testing.T, db testserver.DB, command string) *geminiFixture {
	t.Helper()
	testnpm.NodeModule(t, geminiBin) // skip (or fail in CI) before building anything
	srv := testserver.Start(t, db.NewURL(t), "--auth", "header")
	f := &geminiFixture{srv: srv, home: t.TempDir(), work: t.TempDir()}
	_, f.token = srv.IssueToken(t, geminiDeveloper, "hooks", "", time.Time{})
	f.model = fakemodel.StartGemini(t, fakemodel.GeminiScript{Tool: "run_shell_command",
		Args: map[string]any{"command": command, "description": "Create the marker file"}, FinalText: "Finished."})

	// Gemini's own settings first (API-key auth, no telemetry or update checks), then
	// setup merges the hook in, keeping them.
	f.settings = filepath.Join(f.home, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(f.settings), 0o700); err != nil {
		t.Fatal(err)
	}
	own := `{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}`
	if err := os.WriteFile(f.settings, []byte(own), 0o600); err != nil {
		t.Fatal(err)
	}
	gatehouse := buildGatehouse(t)
	cmd := exec.Command(gatehouse, "setup", "gemini", "--install", "--url", srv.URL, "--token-env", "GATEHOUSE_TOKEN", "--command", gatehouse)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + f.home}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gatehouse setup gemini --install: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(f.settings)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(raw); !strings.Contains(s, "hook gemini") || !strings.Contains(s, "--answer-within") ||
		!strings.Contains(s, `"BeforeTool"`) || !strings.Contains(s, `"selectedType": "gemini-api-key"`) {
		t.Fatalf("setup installed no forwarding BeforeTool hook beside Gemini's own settings:\n%s", raw)
	}
	return f
}

// shortenTimeout rewrites the installed hook to a timeout of ms milliseconds with
// --answer-within within, as a person would who wants Gemini to wait less.
func (f *geminiFixture) shortenTimeout(t *testing.T, ms, within string) {
	t.Helper()
	raw, err := os.ReadFile(f.settings)
	if err != nil {
		t.Fatal(err)
	}
	s := regexp.MustCompile(`--answer-within [0-9hms.]+`).ReplaceAllString(string(raw), "--answer-within "+within)
	s = regexp.MustCompile(`"timeout": [0-9]+`).ReplaceAllString(s, `"timeout": `+ms)
	if !strings.Contains(s, "--answer-within "+within) || !strings.Contains(s, `"timeout": `+ms) {
		t.Fatalf("no timeout to shorten in\n%s", raw)
	}
	if err := os.WriteFile(f.settings, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// start runs `gemini -p prompt --yolo` headless and offline against the fake model
// (PROTOCOLS.md): every tool is allowed by Gemini itself, so only the BeforeTool hook
// stands between the model and the command.
func (f *geminiFixture) start(t *testing.T, prompt string, limit time.Duration) *agentRun {
	t.Helper()
	return startAgentRun(t, "gemini", testnpm.NodeModule(t, geminiBin), []string{"-p", prompt, "--yolo"}, f.work, f.home,
		[]string{"GOOGLE_GEMINI_BASE_URL=" + f.model.URL, "GEMINI_API_KEY=fake", "GEMINI_CLI_TRUST_WORKSPACE=true", "GATEHOUSE_TOKEN=" + f.token},
		limit, f.model.Summary)
}

// waitPrompt waits for the prompt Gemini's hook parked, in the session Gatehouse made
// for Gemini's session_id, failing at once if Gemini exits first.
func (f *geminiFixture) waitPrompt(t *testing.T, run *agentRun, within time.Duration) (string, models.Elicitation) {
	t.Helper()
	return waitAgentPrompt(t, f.srv, geminiDeveloper, run, within)
}

// TestGeminiApprove: real Gemini CLI (--yolo) asks to run a command; its BeforeTool
// hook, installed by `gatehouse setup gemini --install`, parks a prompt that says
// Gemini CLI asks, in the session of Gemini's own session_id; the developer approves on
// the approval page and the command runs once.
func TestGeminiApprove(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		marker := filepath.Join(t.TempDir(), "approved.txt")
		f := newGeminiFixture(t, db, "touch "+marker)
		run := f.start(t, "Create the marker file.", 3*time.Minute)

		sid, prompt := f.waitPrompt(t, run, time.Minute)
		params := prompt.DecodeParams().All
		if params["vendor"] != "Gemini CLI" || params["message"] != "Gemini CLI wants to run **touch "+marker+"**" ||
			params["tool_kind"] != "shell" || params["tool_name"] != "Bash" || params["gemini_event"] != "BeforeTool" {
			t.Fatalf("prompt params = %v", params)
		}
		sess, err := f.srv.App.Store.GetSession(context.Background(), sid)
		if err != nil || sess.ExternalSessionID == nil || *sess.ExternalSessionID != "gemini:"+params["gemini_session_id"].(string) {
			t.Fatalf("session %+v (%v) is not Gemini's session %v", sess, err, params["gemini_session_id"])
		}
		f.srv.DecideOnPage(t, geminiDeveloper, sid, prompt.ID, "accept", "")
		out := f.model.WaitFunctionResponse(t, 2*time.Minute)
		run.Wait(t, 2*time.Minute)

		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("the approved command did not run: %v\n%s", err, run.Output())
		}
		if strings.Contains(out, "blocked") {
			t.Fatalf("the model was told the approved command was blocked: %s", out)
		}
		if n := len(f.model.FunctionResponses()); n != 1 {
			t.Fatalf("the command's result reached the model %d times: %v", n, f.model.FunctionResponses())
		}
	})
}

// TestGeminiReject: a person rejects with a reason; the command never runs and the
// reason reaches the model in the function response.
func TestGeminiReject(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		marker := filepath.Join(t.TempDir(), "rejected.txt")
		f := newGeminiFixture(t, db, "touch "+marker)
		run := f.start(t, "Create the marker file.", 3*time.Minute)

		sid, prompt := f.waitPrompt(t, run, time.Minute)
		const reason = "Not on this machine: use the staging box"
		f.srv.DecideOnPage(t, geminiDeveloper, sid, prompt.ID, "decline", reason)
		out := f.model.WaitFunctionResponse(t, 2*time.Minute)
		run.Wait(t, 2*time.Minute)

		if _, err := os.Stat(marker); err == nil {
			t.Fatal("the rejected command ran")
		}
		t.Logf("functionResponse after reject: %s", out)
		if !strings.Contains(out, "Tool execution blocked: "+reason) {
			t.Fatalf("the model's function response does not carry the reason %q: %s", reason, out)
		}
	})
}

// TestGeminiHookTimeoutDenies: Gemini runs the tool when its BeforeTool hook times
// out. Installed with a short timeout and --answer-within below it, a prompt nobody
// answers in time ends in the forwarder's deny before that timeout: the command does
// not run and the model reads why.
func TestGeminiHookTimeoutDenies(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		marker := filepath.Join(t.TempDir(), "late.txt")
		f := newGeminiFixture(t, db, "touch "+marker)
		f.shortenTimeout(t, "8000", "3s")
		run := f.start(t, "Create the marker file.", 3*time.Minute)

		f.waitPrompt(t, run, time.Minute) // parked; nobody answers
		out := f.model.WaitFunctionResponse(t, 2*time.Minute)
		run.Wait(t, 2*time.Minute)

		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("the command ran after the hook's timeout\n%s", run.Output())
		}
		if !strings.Contains(out, "Nobody answered in Gatehouse within 3s") {
			t.Fatalf("the model's function response does not say nobody answered in time: %s", out)
		}
	})
}
