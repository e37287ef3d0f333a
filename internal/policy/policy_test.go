package policy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/policy"
)

func bashCall(cmd string) policy.Event {
	return policy.Event{Type: policy.PhaseToolCall, Target: "Bash",
		Data:    map[string]any{"name": "Bash", "arguments": map[string]any{"command": cmd}},
		Context: map[string]any{"actor": map[string]any{"run_as": "alice@example.com"}},
		Session: policy.SessionInfo{ID: "conv_child", Depth: 1, RootID: "conv_root"}}
}

func engine(t *testing.T, yml string) *policy.Engine {
	t.Helper()
	e := policy.New()
	if err := e.LoadYAML("test.yaml", []byte(yml)); err != nil {
		t.Fatalf("load: %v", err)
	}
	return e
}

// TestCompositionFromYAML covers §7's composition rules over file policies.
func TestCompositionFromYAML(t *testing.T) {
	const file = `
policies:
  - name: admin__ask_bash
    on: [tool_call]
    when: 'data.name == "Bash"'
    action: ASK
    reason: Approve child tool call
  - name: ask_deep
    on: ["tool_call:Bash"]
    when: session.depth >= 1
    action: ask
  - name: deny_rm
    on: [tool_call]
    when: data.arguments.command.startsWith("rm ")
    action: DENY
    reason: no deleting
  - name: allow_everything
    action: ALLOW
`
	e := engine(t, file)
	cases := []struct {
		name   string
		ev     policy.Event
		action policy.Action
		reason string
		policy string
	}{
		{"two asks join in file order", bashCall("date"), policy.Ask,
			"admin__ask_bash: Approve child tool call; ask_deep: approval required", "admin__ask_bash"},
		{"deny short-circuits with its own reason, no name prefix", bashCall("rm -rf /"), policy.Deny, "no deleting", "deny_rm"},
		{"tool narrowing: ask_deep ignores Edit; admin__ask_bash too", policy.Event{Type: "tool_call", Target: "Edit",
			Data: map[string]any{"name": "Edit", "arguments": map[string]any{"command": "x"}}}, policy.Allow, "", ""},
		{"phase filter: llm_request is only seen by allow_everything", policy.Event{Type: "llm_request",
			Data: map[string]any{"model": "m"}}, policy.Allow, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := e.Evaluate(tc.ev)
			if got.Action != tc.action || got.Reason != tc.reason || got.Policy != tc.policy {
				t.Fatalf("got %+v, want %s %q by %q", got, tc.action, tc.reason, tc.policy)
			}
		})
	}
}

// TestEvaluationErrorsFailClosed: a condition that cannot be evaluated is a DENY
// naming the policy, and it stops evaluation like any DENY.
func TestEvaluationErrorsFailClosed(t *testing.T) {
	cases := []struct {
		name, when string
		ev         policy.Event
		wantReason string
	}{
		{"missing key", `data.arguments.path == "/etc"`, bashCall("ls"), "policy 'p' failed: no such key: path"},
		{"not a boolean", `data.name`, bashCall("ls"), "policy 'p' failed: condition gave Bash"},
		{"type error at run time", `data.arguments.command > 3`, bashCall("ls"), "policy 'p' failed: no such overload"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := engine(t, "policies:\n  - name: p\n    when: '"+tc.when+"'\n    action: ASK\n  - name: later\n    action: ASK\n")
			got := e.Evaluate(tc.ev)
			if got.Action != policy.Deny || !strings.HasPrefix(got.Reason, tc.wantReason) || got.Policy != "p" {
				t.Fatalf("got %+v, want DENY starting %q", got, tc.wantReason)
			}
		})
	}
}

// TestGoPolicies: registered functions compose with file policies; a panic or an
// unknown action fails closed.
func TestGoPolicies(t *testing.T) {
	e := engine(t, "policies:\n  - name: file_ask\n    on: [tool_call]\n    action: ASK\n    reason: from file\n")
	askBash := func(ev policy.Event) policy.Decision {
		if ev.Tool() == "Bash" {
			return policy.Decision{Action: policy.Ask, Reason: "Approve child tool call"}
		}
		return policy.Decision{Action: policy.Allow}
	}
	if err := e.Register("admin__ask_bash", nil, askBash); err != nil {
		t.Fatal(err)
	}
	if err := e.Register("admin__ask_bash", nil, askBash); err == nil {
		t.Fatal("a duplicate name was accepted")
	}
	if err := e.Register("bad_on", []string{"tool_cal"}, askBash); err == nil {
		t.Fatal("an unknown phase was accepted")
	}
	got := e.Evaluate(bashCall("date"))
	if got.Action != policy.Ask || got.Reason != "file_ask: from file; admin__ask_bash: Approve child tool call" || got.Policy != "file_ask" {
		t.Fatalf("got %+v", got)
	}

	if err := e.Register("boom", []string{"tool_call:Bash"}, func(policy.Event) policy.Decision { panic("kaput") }); err != nil {
		t.Fatal(err)
	}
	got = e.Evaluate(bashCall("date"))
	if got.Action != policy.Deny || got.Reason != "policy 'boom' failed: panic: kaput" {
		t.Fatalf("panic: got %+v", got)
	}
	if got := e.Evaluate(policy.Event{Type: "tool_call", Data: map[string]any{"name": "Edit"}}); got.Action != policy.Ask {
		t.Fatalf("boom is narrowed to Bash but fired on Edit: %+v", got)
	}

	odd := policy.New()
	_ = odd.Register("odd", nil, func(policy.Event) policy.Decision { return policy.Decision{Action: "MAYBE"} })
	if got := odd.Evaluate(bashCall("x")); got.Action != policy.Deny || !strings.Contains(got.Reason, `unknown action "MAYBE"`) {
		t.Fatalf("unknown action: got %+v", got)
	}
	if got := policy.New().Evaluate(bashCall("x")); got.Action != policy.Allow || got.Reason != "" {
		t.Fatalf("no policies: got %+v", got)
	}
}

// TestCELSeesTheV0Event: every documented field is reachable from an expression.
func TestCELSeesTheV0Event(t *testing.T) {
	conds := []string{
		`type == "tool_call"`,
		`target == "Bash"`,
		`data.name == "Bash" && data.arguments.command == "date"`,
		`context.actor.run_as == "alice@example.com"`,
		`session.id == "conv_child" && session.depth == 1 && session.root_id == "conv_root"`,
		`event.data.name == "Bash"`,
		`has(data.arguments.command) && !has(data.arguments.path)`,
	}
	for _, c := range conds {
		e := engine(t, "policies:\n  - name: p\n    when: '"+c+"'\n    action: DENY\n    reason: matched\n")
		if got := e.Evaluate(bashCall("date")); got.Action != policy.Deny || got.Reason != "matched" {
			t.Errorf("%s: got %+v, want the policy to match", c, got)
		}
	}
}

// TestInvalidFilesAreRefusedWithTheLine: each broken file names the line to fix.
func TestInvalidFilesAreRefusedWithTheLine(t *testing.T) {
	cases := []struct {
		name, file string
		want       []string
	}{
		{"yaml syntax", "policies:\n  - name: a\n    when: 'x\n    action: ASK\n", []string{"test.yaml", "line 3"}},
		{"cel syntax", "policies:\n  - name: a\n    action: ASK\n  - name: bad_cel\n    when: 'data.name == '\n    action: DENY\n",
			[]string{"line 5", "policy 'bad_cel'", "when:", "Syntax error"}},
		{"cel unknown variable", "policies:\n  - name: undeclared\n    when: 'tool == \"Bash\"'\n    action: DENY\n",
			[]string{"line 3", "policy 'undeclared'", "undeclared reference to 'tool'"}},
		{"cel block scalar points at the inner line", "policies:\n  - name: block\n    action: DENY\n    when: |\n      data.name == \"Bash\" &&\n      data.arguments.command == == 1\n",
			[]string{"line 6", "policy 'block'"}},
		{"cel not boolean", "policies:\n  - name: nb\n    when: '1 + 2'\n    action: DENY\n", []string{"line 3", "policy 'nb'", "boolean"}},
		{"unknown action", "policies:\n  - name: a\n    action: MAYBE\n", []string{"line 3", "policy 'a'", "ALLOW, DENY or ASK"}},
		{"missing action", "policies:\n  - name: a\n    when: 'true'\n", []string{"line 2", "action is required"}},
		{"missing name", "policies:\n  - action: ASK\n", []string{"line 2", "non-empty name"}},
		{"typo key", "policies:\n  - name: a\n    action: ASK\n    wehn: 'true'\n", []string{"line 4", `unknown key "wehn"`}},
		{"unknown phase", "policies:\n  - name: a\n    on: [tool_cal]\n    action: ASK\n", []string{"line 3", "unknown phase"}},
		{"duplicate name", "policies:\n  - name: a\n    action: ASK\n  - name: a\n    action: DENY\n", []string{"line 4", "already defined at line 2"}},
		{"top level key", "rules:\n  - name: a\n", []string{"line 1", "unknown top-level key"}},
		{"policies not a list", "policies: yes\n", []string{"line 1", "must be a list"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := policy.New().LoadYAML("test.yaml", []byte(tc.file))
			if err == nil {
				t.Fatal("the file was accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestLoadFile: an empty path is no policies; a missing file and an invalid file are
// errors; a good file loads in order.
func TestLoadFile(t *testing.T) {
	e, err := policy.LoadFile("")
	if err != nil || e.Len() != 0 {
		t.Fatalf("empty path: %v, %d policies", err, e.Len())
	}
	dir := t.TempDir()
	if _, err := policy.LoadFile(filepath.Join(dir, "nope.yaml")); err == nil {
		t.Fatal("a missing file was accepted")
	}
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("# comments only are fine\npolicies:\n  - name: a\n    action: ASK\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if e, err := policy.LoadFile(good); err != nil || e.Len() != 1 {
		t.Fatalf("good file: %v", err)
	}
	empty := filepath.Join(dir, "empty.yaml")
	_ = os.WriteFile(empty, []byte("# nothing yet\n"), 0o600)
	if e, err := policy.LoadFile(empty); err != nil || e.Len() != 0 {
		t.Fatalf("empty file: %v", err)
	}
}

func TestPolicyOwnTimeoutLoads(t *testing.T) {
	New, Ask, PhaseToolCall := policy.New, policy.Ask, policy.PhaseToolCall
	e := New()
	if err := e.LoadYAML("p.yaml", []byte("policies:\n  - name: a\n    action: ASK\n    timeout: 90s\n    on_timeout: deny\n")); err != nil {
		t.Fatal(err)
	}
	res := e.EvaluateContext(context.Background(), policy.NewEvent(policy.SessionInfo{ID: "s"}, "u", PhaseToolCall, "", map[string]any{"name": "x"}, nil))
	if res.Action != Ask || res.Timeout != 90*time.Second || res.OnTimeout != "deny" {
		t.Fatalf("result = %+v", res)
	}
	for _, bad := range []string{
		"policies:\n  - name: a\n    action: ALLOW\n    timeout: 90s\n",
		"policies:\n  - name: a\n    action: ASK\n    timeout: soon\n",
		"policies:\n  - name: a\n    action: ASK\n    on_timeout: maybe\n",
	} {
		if err := New().LoadYAML("p.yaml", []byte(bad)); err == nil {
			t.Errorf("loaded %q", bad)
		}
	}
}
