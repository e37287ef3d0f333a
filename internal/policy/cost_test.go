package policy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/policy"
)

// listCall is a tool call whose arguments hold a list of n strings.
func listCall(n int) policy.Event {
	items := make([]any, n)
	for i := range items {
		items[i] = "x"
	}
	return policy.Event{Type: policy.PhaseToolCall, Target: "Write",
		Data: map[string]any{"name": "Write", "arguments": map[string]any{"files": items}}}
}

const scanFiles = `policies:
  - name: no_etc
    on: [tool_call]
    when: data.arguments.files.exists(f, f.startsWith("/etc"))
    action: DENY
    reason: keep out of /etc
`

// TestCELNestedLoopOverInputRefusedAtLoad: a condition whose worst case on agent input
// is quadratic would pin a CPU on a large list; the file does not load, and the error
// names the policy, the line and why.
func TestCELNestedLoopOverInputRefusedAtLoad(t *testing.T) {
	const file = `policies:
  - name: fine
    when: data.name == "Bash"
    action: ASK
  - name: pairwise
    when: data.arguments.files.all(a, data.arguments.files.all(b, a == b))
    action: DENY
`
	err := policy.New().LoadYAML("p.yaml", []byte(file))
	if err == nil {
		t.Fatal("a quadratic condition over agent input loaded")
	}
	for _, want := range []string{"line 6", "pairwise", "too expensive", "nested"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// A single pass over the input is fine.
	engine(t, scanFiles)
}

// TestCELLinearLoopOverLargeInputIsFast: a single pass over a list larger than the
// estimate assumed still answers, quickly — no runtime cost tracking that would make it
// quadratic.
func TestCELLinearLoopOverLargeInputIsFast(t *testing.T) {
	e := engine(t, scanFiles)
	ev := listCall(50_000)
	ev.Data["arguments"].(map[string]any)["files"].([]any)[49_999] = "/etc/passwd"
	start := time.Now()
	if r := e.Evaluate(ev); r.Action != policy.Deny || r.Reason != "keep out of /etc" {
		t.Fatalf("large input: %+v, want the policy's own DENY", r)
	}
	if d := time.Since(start); d > policy.EvalTimeout {
		t.Fatalf("one pass over 50k elements took %s", d)
	}
}

// TestCELStopsWhenCallerLeaves: a cancelled context stops a running condition, and
// the engine fails closed saying so.
func TestCELStopsWhenCallerLeaves(t *testing.T) {
	e := engine(t, scanFiles)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := e.EvaluateContext(ctx, listCall(100_000))
	if r.Action != policy.Deny || !strings.Contains(r.Reason, "the caller left") || r.Policy != "no_etc" {
		t.Fatalf("cancelled evaluation: %+v", r)
	}
}
