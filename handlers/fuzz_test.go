package handlers

import (
	"errors"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/models"
)

// FuzzEvaluateBody feeds arbitrary bodies through the policies/evaluate decoder and,
// when they pass, through a policy engine with a CEL policy: a body is either a clean
// 400 or evaluates to one of the three results — never a panic, never another error.
func FuzzEvaluateBody(f *testing.F) {
	for _, s := range []string{
		`{"event":{"type":"PHASE_TOOL_CALL","target":"Bash","data":{"name":"Bash","arguments":{"command":"date"}}}}`,
		`{"event":{"type":"PHASE_LLM_REQUEST","data":{"messages":[{"role":"user","content":"hi"}]},"context":{"x":1}}}`,
		`{"event":{"type":"PHASE_TOOL_CALL","data":{"name":"Bash","arguments":"rm"}}}`,
		`{"event":{"type":"PHASE_NOPE","data":{}}}`, `{"event":null}`, `{}`, `[]`, `{"event":{"type":1}}`,
	} {
		f.Add([]byte(s))
	}
	engine := policy.New()
	if err := engine.LoadYAML("fuzz.yaml", []byte(`policies:
  - name: ask_bash
    on: ["tool_call:Bash"]
    when: 'data.arguments.command.startsWith("rm")'
    action: ASK
  - name: deny_big
    on: [tool_call]
    when: 'size(data.arguments) > 3'
    action: DENY
`)); err != nil {
		f.Fatal(err)
	}
	sess := &models.Session{ID: "conv_00000000000000000000000000000000", RootID: "conv_00000000000000000000000000000000"}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in evaluateBody
		if err := decodeJSON(body, &in); err != nil {
			assertInvalid(t, err)
			return
		}
		phase, data, evCtx, err := parseEvaluateEvent(in)
		if err != nil {
			assertInvalid(t, err)
			return
		}
		res := engine.Evaluate(policy.NewEvent(policy.SessionInfo{ID: sess.ID, RootID: sess.RootID}, "local", phase, in.Event.Target, data, evCtx))
		switch res.Action {
		case policy.Allow, policy.Deny, policy.Ask:
		default:
			t.Fatalf("evaluation gave %q", res.Action)
		}
	})
}

func assertInvalid(t *testing.T, err error) {
	t.Helper()
	var inv *errs.InvalidInput
	if !errors.As(err, &inv) {
		t.Fatalf("decoder error %T (%v) is not a 400", err, err)
	}
}
