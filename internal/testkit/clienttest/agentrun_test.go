package clienttest

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// agentRun is one headless run of an agent's CLI (gemini -p, copilot -p).
type agentRun struct {
	name           string
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error
}

// startAgentRun runs bin args in dir, offline (every proxy variable points at a closed
// loopback port) with PATH, TMPDIR=home and env, killed when the test ends or after
// limit. summary, when set, is logged with the output of a failed test (the fake
// model's requests).
func startAgentRun(t *testing.T, name, bin string, args []string, dir, home string, env []string, limit time.Duration, summary func() string) *agentRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(offlineEnv(t, home), env...)
	r := &agentRun{name: name, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &r.stdout, &r.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() {
		r.err = cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
		if t.Failed() || testing.Verbose() {
			more := ""
			if summary != nil {
				more = "\nmodel requests:\n" + summary()
			}
			t.Logf("%s exited: %v\n%s%s", name, r.err, r.Output(), more)
		}
	})
	return r
}

// offlineEnv is an agent's environment with nothing but loopback reachable: PATH,
// HOME and TMPDIR=home, and every proxy variable pointing at a closed loopback port.
func offlineEnv(t *testing.T, home string) []string {
	dead := claudeDeadProxy(t)
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + home,
		"HTTP_PROXY=" + dead, "HTTPS_PROXY=" + dead, "http_proxy=" + dead, "https_proxy=" + dead,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
}

// Output is what the run printed, once it has exited.
func (r *agentRun) Output() string {
	select {
	case <-r.done:
		return "stdout:\n" + r.stdout.String() + "\nstderr:\n" + r.stderr.String()
	default:
		return "(" + r.name + " still running)"
	}
}

// Wait waits for the run to exit, failing the test after within.
func (r *agentRun) Wait(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(within):
		t.Fatalf("%s did not exit within %s\n%s", r.name, within, r.Output())
	}
}

// waitAgentPrompt waits for the first pending prompt in any session person can see on
// srv (the one the agent's hook created), failing at once if the run exits first.
func waitAgentPrompt(t *testing.T, srv *testserver.Server, person string, run *agentRun, within time.Duration) (string, models.Elicitation) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		list := srv.Client(person).Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)
		sessions, _ := list["sessions"].([]any)
		for _, s := range sessions {
			sid, _ := s.(map[string]any)["id"].(string)
			sess, err := srv.App.Store.GetSession(ctx, sid)
			if err != nil {
				t.Fatalf("session %s: %v", sid, err)
			}
			pending, err := srv.App.Store.PendingInSubtree(ctx, sess.Path)
			if err != nil {
				t.Fatalf("pending prompts: %v", err)
			}
			if len(pending) > 0 {
				return sid, pending[0]
			}
		}
		select {
		case <-run.done:
			t.Fatalf("%s exited (%v) before Gatehouse asked a person\n%s", run.name, run.err, run.Output())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no pending prompt within %s", within)
	return "", models.Elicitation{}
}
