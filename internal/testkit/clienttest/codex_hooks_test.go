package clienttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestCodexHooksApprove: real Codex asks to run a command outside its sandbox; its
// hook (sending the developer's hooks-only API token) parks in the developer's
// Gatehouse session, they approve on the approval page, and the command
// runs (the marker file exists) — with one prompt for the command, though Codex fires
// both PreToolUse and PermissionRequest for it.
func TestCodexHooksApprove(t *testing.T) {
	db := testserver.Databases(t)[0]
	marker := filepath.Join(t.TempDir(), "approved.txt")
	f := newCodexFixture(t, db, "touch "+marker, codexBothHooks)
	run := f.start(t, "Create the marker file.", 3*time.Minute)

	sid, prompt := f.waitPrompt(t, run, "PreToolUse", time.Minute)
	params := prompt.DecodeParams().All
	if params["vendor"] != "Codex" || !strings.Contains(params["message"].(string), "Codex wants to run **touch "+marker) {
		t.Fatalf("prompt params = %v", params)
	}
	f.srv.DecideOnPage(t, codexDeveloper, sid, prompt.ID, "accept", "")
	run.Wait(t, 2*time.Minute)

	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the approved command did not run: %v\n%s\nhooks:\n%s", err, run.Output(), f.tap.Transcript())
	}
	out := f.model.WaitOutput(t, 10*time.Second)
	t.Logf("function_call_output after approve: %s", out)
	for _, ex := range f.tap.Exchanges() {
		if ex.Status != 200 {
			t.Errorf("hook answered %d: %s", ex.Status, ex.Answer)
		}
	}
}

// TestCodexHooksReject: a person rejects with a reason; the command never runs and the
// reason reaches the model in the call's function_call_output.
func TestCodexHooksReject(t *testing.T) {
	db := testserver.Databases(t)[0]
	marker := filepath.Join(t.TempDir(), "rejected.txt")
	f := newCodexFixture(t, db, "touch "+marker, codexBothHooks)
	run := f.start(t, "Create the marker file.", 3*time.Minute)

	sid, prompt := f.waitPrompt(t, run, "PreToolUse", time.Minute)
	const reason = "Not on this machine: use the staging box"
	f.srv.DecideOnPage(t, codexDeveloper, sid, prompt.ID, "decline", reason)
	out := f.model.WaitOutput(t, 2*time.Minute)
	run.Wait(t, 2*time.Minute)

	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the rejected command ran")
	}
	if !strings.Contains(out, reason) {
		t.Fatalf("the model's function_call_output does not carry the reason %q: %s", reason, out)
	}
	t.Logf("function_call_output after reject: %s", out)
}

// TestCodexHooksPermissionRequestOnly: with only the PermissionRequest hook (a person
// is asked only when Codex itself would ask), a rejection is Codex's "deny" with the
// person's reason as its message: the command does not run and the model reads why.
func TestCodexHooksPermissionRequestOnly(t *testing.T) {
	db := testserver.Databases(t)[0]
	marker := filepath.Join(t.TempDir(), "rejected.txt")
	f := newCodexFixture(t, db, "touch "+marker, []string{"PermissionRequest"})
	run := f.start(t, "Create the marker file.", 3*time.Minute)

	sid, prompt := f.waitPrompt(t, run, "PermissionRequest", time.Minute)
	params := prompt.DecodeParams().All
	if params["reason"] != "Create the marker file the task asks for" || params["codex_event"] != "PermissionRequest" {
		t.Fatalf("prompt params = %v", params)
	}
	const reason = "Ask in #ops first"
	f.srv.DecideOnPage(t, codexDeveloper, sid, prompt.ID, "decline", reason)
	out := f.model.WaitOutput(t, 2*time.Minute)
	run.Wait(t, 2*time.Minute)

	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the rejected command ran")
	}
	if !strings.Contains(out, reason) {
		t.Fatalf("the model's function_call_output does not carry the reason %q: %s", reason, out)
	}
	t.Logf("function_call_output after reject: %s", out)
}
