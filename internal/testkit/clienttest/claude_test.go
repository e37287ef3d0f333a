package clienttest

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// claudeRunLimit bounds one Claude Code process; claudeWait is how long a test waits
// for one step of it.
const (
	claudeRunLimit = 3 * time.Minute
	claudeWait     = 90 * time.Second
)

// claudeServerFlags hold a retried MCP call (Claude Code 2.1.332 retries at once) long
// enough for the person to decide in the test.
var claudeServerFlags = []string{"--mcp-retry-wait", "20s"}

// TestClaudeCodeRunsAnUngatedTool: real Claude Code connects to Gatehouse's MCP
// endpoint, lists the runner's tools, and a tool no policy gates runs once, its output
// reaching the model. It proves the harness (Claude Code, the fake model, the MCP
// wiring) before the ASK tests rely on it.
func TestClaudeCodeRunsAnUngatedTool(t *testing.T) {
	for _, v := range claudeVersions {
		t.Run(v.name, func(t *testing.T) {
			bin := claudeBinary(t, v)
			f := newClaudeFixture(t, testserver.Databases(t)[0], claudeNoPolicies)
			run := startClaude(t, bin, f.model.URL, f.MCPURL(), "deploy to prod", claudeRunLimit)
			res := run.Wait(t, claudeWait)
			tr := f.model.WaitToolResult(t, time.Second)
			if tr.IsError || !strings.Contains(tr.Text, "deployed prod") {
				t.Fatalf("tool_result = %+v, want the runner's output\n%s", tr, run.Output())
			}
			if n := f.runner.Runs(); n != 1 {
				t.Fatalf("the runner ran %d times, want 1", n)
			}
			if res.IsError || res.Result != "The deploy is handled." {
				t.Fatalf("claude result = %+v", res)
			}
			if p := f.claudePrompts(t); len(p) != 0 {
				t.Fatalf("an ungated tool made %d prompts", len(p))
			}
		})
	}
}

// TestClaudeCodeApprovedDeployRunsOnce: the policy ASKs for deploy; a person approves
// on the approval page; Claude Code's tool result (as the model sees it) is the
// runner's output, the runner ran exactly once, and only one prompt was ever made —
// whatever Claude Code's retries look like for its protocol version.
func TestClaudeCodeApprovedDeployRunsOnce(t *testing.T) {
	for _, v := range claudeVersions {
		t.Run(v.name, func(t *testing.T) {
			bin := claudeBinary(t, v)
			testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
				f := newClaudeFixture(t, db, askDeployPolicy, claudeServerFlags...)
				run := startClaude(t, bin, f.model.URL, f.MCPURL(), "deploy to prod", claudeRunLimit)
				ev := f.waitPrompt(t, run, claudeWait)
				eid, _ := ev["elicitation_id"].(string)
				// Decide while Claude Code waits on Gatehouse (its retry held, or its call
				// held open), as when a person takes a moment to look.
				f.tap.WaitClaudeWaiting(t, run, claudeWait)
				if f.runner.Runs() != 0 {
					t.Fatalf("the runner ran before anyone approved")
				}
				f.srv.DecideOnPage(t, "", f.sid, eid, "accept", "")
				res := run.Wait(t, claudeWait)
				tr := f.model.WaitToolResult(t, time.Second)
				if tr.IsError || !strings.Contains(tr.Text, "deployed prod") {
					t.Fatalf("tool_result = %+v, want the runner's output\n%s", tr, run.Output())
				}
				if n := f.runner.Runs(); n != 1 {
					t.Fatalf("the runner ran %d times, want exactly 1", n)
				}
				if p := f.claudePrompts(t); len(p) != 1 {
					t.Fatalf("%d prompts were made, want exactly 1: %+v", len(p), p)
				}
				if res.IsError {
					t.Fatalf("claude result = %+v", res)
				}
			})
		})
	}
}

// TestClaudeCodeDeclinedDeployNeverRuns: a person declines with a reason; Claude
// Code's tool result is an error that names the decline and the reason, the runner
// never ran, and only one prompt was ever made.
func TestClaudeCodeDeclinedDeployNeverRuns(t *testing.T) {
	const reason = "not on a Friday"
	for _, v := range claudeVersions {
		t.Run(v.name, func(t *testing.T) {
			bin := claudeBinary(t, v)
			testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
				f := newClaudeFixture(t, db, askDeployPolicy, claudeServerFlags...)
				run := startClaude(t, bin, f.model.URL, f.MCPURL(), "deploy to prod", claudeRunLimit)
				ev := f.waitPrompt(t, run, claudeWait)
				eid, _ := ev["elicitation_id"].(string)
				f.tap.WaitClaudeWaiting(t, run, claudeWait)
				f.srv.DecideOnPage(t, "", f.sid, eid, "decline", reason)
				run.Wait(t, claudeWait)
				tr := f.model.WaitToolResult(t, time.Second)
				if !tr.IsError || !strings.Contains(strings.ToLower(tr.Text), "declin") || !strings.Contains(tr.Text, reason) {
					t.Fatalf("tool_result = %+v, want an error naming the decline and %q\n%s", tr, reason, run.Output())
				}
				if n := f.runner.Runs(); n != 0 {
					t.Fatalf("the runner ran %d times after a decline", n)
				}
				if p := f.claudePrompts(t); len(p) != 1 {
					t.Fatalf("%d prompts were made, want exactly 1: %+v", len(p), p)
				}
			})
		})
	}
}
