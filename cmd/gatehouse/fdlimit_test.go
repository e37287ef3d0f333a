//go:build linux

package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// nofileEnv, in a test binary's environment, makes TestMain lower the process's limit
// on open files (RLIMIT_NOFILE, soft and hard) to its value and then exec the program
// its arguments name: how a test runs the real gatehouse with few descriptors. The
// limit survives exec, and Go cannot raise a soft limit above the hard one.
const nofileEnv = "GATEHOUSE_TEST_EXEC_NOFILE"

// execWithNofile is that child: it only returns when it cannot become the program.
func execWithNofile(limit string) int {
	n, err := strconv.ParseUint(limit, 10, 64)
	if err == nil {
		err = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n})
	}
	if err == nil && len(os.Args) < 2 {
		err = fmt.Errorf("no program to run")
	}
	if err == nil {
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, nofileEnv+"=") {
				env = append(env, kv)
			}
		}
		err = syscall.Exec(os.Args[1], os.Args[1:], env)
	}
	fmt.Fprintf(os.Stderr, "%s=%s: %v\n", nofileEnv, limit, err)
	return 1
}

// fdLimit is the descriptor limit the exhaustion test gives the server: room for its
// database connections and a few dozen parked requests.
const fdLimit = 128

// TestServeSurvivesDescriptorExhaustion runs `gatehouse serve` with RLIMIT_NOFILE 128
// and parks hooks, each holding its connection, until the process is out of file
// descriptors. No request is left hanging: each parks, or is answered — and once the
// descriptors are gone a new connection is refused at once with 503, the error
// envelope and Retry-After, instead of waiting unanswered in the backlog. When the
// parked clients hang up the descriptors come back (every held connection is closed),
// their prompts are abandoned after the grace, and a fresh request — a health check, a
// hook that parks and gets its verdict — is served again.
func TestServeSurvivesDescriptorExhaustion(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		dbURL := db.NewURL(t)
		cmd := exec.Command(self, binary(t), "serve", "--addr", "127.0.0.1:0", "--database-url", dbURL,
			"--session-secret", strings.Repeat("k", 32), "--disconnect-grace", "5s")
		cmd.Env = childEnv(nofileEnv + "=" + strconv.Itoa(fdLimit))
		srv := startCmd(t, dbURL, cmd)
		c := srv.Client()
		sid := c.CreateSession(t, c.CreateAgent(t), "", "")
		st := c.OpenStream(t, "/v1/sessions/"+sid+"/stream")
		st.WaitHeartbeat(t)
		hook := "/v1/sessions/" + sid + "/hooks/permission-request"
		body := func(i int) map[string]any {
			return testserver.ClaudeBody("Bash", map[string]any{"command": fmt.Sprintf("echo %d", i)})
		}
		// nextEvent returns the next frame of event on st, or nil once done is closed.
		nextEvent := func(event string, done <-chan struct{}, within time.Duration) *testserver.Frame {
			t.Helper()
			deadline := time.After(within)
			for {
				select {
				case f, ok := <-st.Frames():
					if !ok {
						t.Fatal("the stream closed")
					}
					if f.Event == event {
						return &f
					}
				case <-done:
					return nil
				case <-deadline:
					t.Fatalf("no %s within %s, and the request was not answered: left hanging", event, within)
				}
			}
		}

		var parked []*testserver.Parked
		eids := map[string]bool{}
		for refused := false; !refused; {
			if len(parked) > fdLimit {
				t.Fatalf("%d requests parked under a limit of %d descriptors and none was refused", len(parked), fdLimit)
			}
			p := c.ParkAsync(hook, body(len(parked)))
			if f := nextEvent("response.elicitation_request", p.DoneChan(), 30*time.Second); f != nil {
				parked = append(parked, p)
				eids[f.Map(t)["elicitation_id"].(string)] = true
				continue
			}
			r := p.Wait(t, time.Second) // already answered
			if r.Status < 500 {
				t.Fatalf("request %d: %d %s, want it parked or refused", len(parked), r.Status, r.Body)
			}
			e, _ := r.JSON(t)["error"].(map[string]any)
			msg, _ := e["message"].(string)
			switch {
			case r.Status == http.StatusServiceUnavailable && strings.Contains(msg, "out of file descriptors"):
				if e["code"] != "unavailable" || r.Header.Get("Retry-After") != "1" {
					t.Fatalf("refusal: %d %v %s, want 503 unavailable with Retry-After: 1", r.Status, r.Header, r.Body)
				}
				refused = true
			default:
				// Accepted with the last descriptor, then short of one for the database:
				// answered, not left hanging.
				t.Logf("request %d answered %d %s", len(parked), r.Status, r.Body)
			}
		}
		// The parked clients hang up: their connections close, and after the grace their
		// prompts are abandoned (the stream, open all along, says so).
		for _, p := range parked {
			p.Cancel()
		}
		for len(eids) > 0 {
			f := nextEvent("response.elicitation_resolved", nil, 60*time.Second)
			delete(eids, f.Map(t)["elicitation_id"].(string))
		}
		// Every held connection whose client hung up was closed: none is left half
		// open (CLOSE_WAIT) on the server's side.
		if n := closeWaiting(t, srv.cmd.Process.Pid, srv.URL); n != 0 {
			t.Fatalf("%d connections the clients closed are still open in the server (CLOSE_WAIT)", n)
		}
		if r := c.Do(t, http.MethodGet, "/healthz", nil); r.Status != http.StatusOK {
			t.Fatalf("healthz after the descriptors came back: %d %s", r.Status, r.Body)
		}
		p := c.ParkAsync(hook, body(-1))
		f := nextEvent("response.elicitation_request", p.DoneChan(), 30*time.Second)
		if f == nil {
			r := p.Wait(t, time.Second) // already answered
			t.Fatalf("a hook after the descriptors came back: %d %s", r.Status, r.Body)
		}
		eid := f.Map(t)["elicitation_id"].(string)
		if r := c.Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+eid+"/resolve", map[string]any{"action": "accept"}); r.Status != http.StatusAccepted {
			t.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		if r := p.Wait(t, 30*time.Second); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"allow"`) {
			t.Fatalf("the verdict: %d %s", r.Status, r.Body)
		}
		srv.Terminate(t)
		if code := srv.WaitExit(t, 20*time.Second); code != 0 {
			t.Fatalf("exit code after SIGTERM = %d", code)
		}
		if !strings.Contains(srv.stderr.String(), "refusing connections: the process is out of file descriptors") {
			t.Errorf("the server did not log that it refused connections:\n%s", srv.stderr.String())
		}
	})
}

// closeWaiting counts the TCP connections of process pid on serverURL's port that the
// peer has closed and the process has not (state CLOSE_WAIT, 08 in /proc/net/tcp):
// descriptors leaked by connections nobody will answer.
func closeWaiting(t *testing.T, pid int, serverURL string) int {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	owned := map[string]bool{} // socket inodes among the process's descriptors
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && strings.HasPrefix(link, "socket:[") {
			owned[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	n := 0
	for _, table := range []string{"tcp", "tcp6"} {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 {
				continue
			}
			_, localPort, _ := strings.Cut(f[1], ":")
			p, _ := strconv.ParseInt(localPort, 16, 32)
			if int(p) == port && f[3] == "08" && owned[f[9]] {
				n++
			}
		}
	}
	return n
}
