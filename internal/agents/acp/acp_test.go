package acp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/models"
)

// bashBody is claude-code-acp 0.16.2's request for a Bash call (as it sends it), with
// the cwd and agent name `gatehouse acp` adds.
const bashBody = `{"sessionId":"9f1c","toolCall":{"toolCallId":"toolu_01","rawInput":{"command":"touch /work/app/ran","description":"Mark the run"},"title":"` + "`touch /work/app/ran`" + `"},"options":[{"kind":"allow_always","name":"Always Allow","optionId":"allow_always"},{"kind":"allow_once","name":"Allow","optionId":"allow"},{"kind":"reject_once","name":"Reject","optionId":"reject"}],"cwd":"/work/app","agent":"Claude Code"}`

// geminiBody is `gemini --acp`'s shape: its own option ids, an edit with locations.
const geminiBody = `{"sessionId":"s2","toolCall":{"toolCallId":"t2","title":"Edit src/app.ts","kind":"edit","locations":[{"path":"/work/app/src/app.ts"}],"rawInput":{"old_string":"a","new_string":"b"}},"options":[{"optionId":"proceed_always","name":"Always","kind":"allow_always"},{"optionId":"proceed_once","name":"Once","kind":"allow_once"},{"optionId":"cancel","name":"No","kind":"reject_once"}]}`

func TestDecodeAndAnswer(t *testing.T) {
	p, err := Decode([]byte(bashBody))
	if err != nil {
		t.Fatal(err)
	}
	tool := p.Tool()
	if tool.Name != "Bash" || tool.Kind != models.KindShell || tool.Input["command"] != "touch /work/app/ran" {
		t.Fatalf("tool %+v", tool)
	}
	params := p.Params()
	if params["message"] != "Claude Code wants to run **touch /work/app/ran**" || params["cwd"] != "/work/app" || params["reason"] != "Mark the run" {
		t.Fatalf("params %v", params)
	}
	for action, want := range map[string]string{"accept": "allow", "decline": "reject", "cancel": "reject"} {
		got, _ := json.Marshal(p.Answer(models.Verdict{Action: action}, "bob"))
		if string(got) != `{"outcome":{"optionId":"`+want+`","outcome":"selected"}}` {
			t.Errorf("%s: %s", action, got)
		}
	}
	// Approve and remember picks the agent's own allow-always option.
	if params["allow_remember"] != true || params[models.ParamRememberSuggestion] == nil {
		t.Fatalf("no remember offered for a request with allow_always: %v", params)
	}
	got, _ := json.Marshal(p.Answer(models.Verdict{Action: "accept", Content: map[string]any{"remember": map[string]any{"suggestion": 0}}}, "bob"))
	if string(got) != `{"outcome":{"optionId":"allow_always","outcome":"selected"}}` {
		t.Errorf("accept and remember: %s", got)
	}

	g, err := Decode([]byte(geminiBody))
	if err != nil {
		t.Fatal(err)
	}
	if tool := g.Tool(); tool.Kind != models.KindEdit || tool.Input["file_path"] != "/work/app/src/app.ts" {
		t.Fatalf("edit tool %+v", tool)
	}
	if g.Params()["vendor"] != Vendor {
		t.Fatalf("an agent without a name is %q", g.Params()["vendor"])
	}
	if got, _ := json.Marshal(g.Answer(models.Verdict{Action: "accept"}, "")); !strings.Contains(string(got), `"proceed_once"`) {
		t.Fatalf("accept picks the once option: %s", got)
	}
	if deny, ok := (Agent{}).Deny([]byte(geminiBody), "down"); !ok || !strings.Contains(string(deny), `"optionId":"cancel"`) {
		t.Fatalf("fail-closed deny: %s %v", deny, ok)
	}
}

func TestBadRequestsNameTheField(t *testing.T) {
	for body, want := range map[string]string{
		`[]`: "not a JSON object",
		`{"toolCall":{"toolCallId":"t"},"options":[]}`: "sessionId is required",
		`{"sessionId":"s","options":[]}`:               "toolCall.toolCallId is required",
		`{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"optionId":"r","kind":"reject_once"}]}`: "no allow_once or allow_always",
		`{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"optionId":"a","kind":"allow_once"}]}`:  "no reject_once or reject_always",
		`{"sessionId":"s","toolCall":{"toolCallId":"t","rawInput":[]}}`:                                     "toolCall.rawInput has the wrong type",
	} {
		if _, err := Decode([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", body, err, want)
		}
	}
}
