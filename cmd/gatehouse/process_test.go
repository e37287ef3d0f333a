package main

// Process-level tests: the real gatehouse binary, built once per test run, runs as a
// child process on a free loopback port. These tests cover what in-process servers
// cannot: SIGKILL, SIGTERM, exit codes and the command line.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// testVersion is stamped into the test binary so `gatehouse version` can be checked.
const testVersion = "v0.0.0-proctest"

// binDir holds the binary built for this test run; TestMain creates and removes it.
var binDir string

// buildOnce builds the binary the first time a test needs it.
var buildOnce = sync.OnceValues(func() (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = "/usr/local/go/bin/go" // where .ci/run expects Go
	}
	bin := filepath.Join(binDir, "gatehouse")
	args := []string{"build", "-o", bin, "-ldflags", "-X main.version=" + testVersion}
	if raceBuild {
		args = append(args, "-race")
	}
	cmd := exec.Command(goCmd, append(args, ".")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	if n := os.Getenv(nofileEnv); n != "" {
		os.Exit(execWithNofile(n)) // a child started to run gatehouse with few descriptors
	}
	dir, err := os.MkdirTemp("", "gatehouse-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binary returns the path of the built gatehouse binary.
func binary(t testing.TB) string {
	t.Helper()
	bin, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// childEnv is the parent's environment without GATEHOUSE_* settings, so a developer's
// shell cannot change what a test runs; extra entries are appended.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GATEHOUSE_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reading test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proc is a running `gatehouse serve` child process.
type proc struct {
	URL    string
	DBURL  string
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan struct{}
	err    error // cmd.Wait's result, valid after exited is closed
}

// runningPrefix starts the stdout line that announces the URL.
const runningPrefix = "Gatehouse is running at "

// startServe runs `gatehouse serve` on dbURL on a free loopback port and waits for the
// line announcing its URL. The process is killed when the test ends if still running.
func startServe(t *testing.T, dbURL string, flags ...string) *proc {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--database-url", dbURL,
		"--session-secret", strings.Repeat("k", 32)}, flags...)
	return startProc(t, dbURL, childEnv(), args...)
}

// startProc runs the binary with args and env and waits for the URL line.
func startProc(t *testing.T, dbURL string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = env
	return startCmd(t, dbURL, cmd)
}

// startCmd starts cmd, a `gatehouse serve` (perhaps through a wrapper), and waits for
// the URL line.
func startCmd(t *testing.T, dbURL string, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{DBURL: dbURL, cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start gatehouse: %v", err)
	}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		found := false
		for sc.Scan() {
			line := sc.Text()
			if !found && strings.HasPrefix(line, runningPrefix) {
				found = true
				urlc <- strings.Fields(strings.TrimPrefix(line, runningPrefix))[0]
			}
		}
		p.err = cmd.Wait() // after stdout is drained, as StdoutPipe requires
		close(p.exited)
	}()
	t.Cleanup(func() {
		if !p.Exited() {
			_ = cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("gatehouse stderr (%s):\n%s", dbURL, p.stderr.String())
		}
	})
	select {
	case p.URL = <-urlc:
	case <-p.exited:
		t.Fatalf("gatehouse exited before serving (%v):\n%s", p.err, p.stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("gatehouse did not print %q within 60s:\n%s", runningPrefix, p.stderr.String())
	}
	return p
}

// Client returns an API client for the process (auth none: no identity header).
func (p *proc) Client() *testserver.Client {
	return &testserver.Client{Base: p.URL, HC: &http.Client{}}
}

// Exited reports whether the process has ended.
func (p *proc) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// Kill ends the process with SIGKILL (no shutdown code runs) and waits for it.
func (p *proc) Kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill: %v", err)
	}
	p.WaitExit(t, 10*time.Second)
}

// Terminate sends SIGTERM.
func (p *proc) Terminate(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
}

// WaitExit waits for the process to end and returns its exit code (-1 when killed by a
// signal).
func (p *proc) WaitExit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(within):
		t.Fatalf("gatehouse still running %s after being told to stop", within)
	}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return 0
	case errors.As(p.err, &ee):
		return ee.ExitCode()
	default:
		t.Fatalf("wait: %v", p.err)
		return 0
	}
}

// runCmd runs the binary to completion and returns its exit code, stdout and stderr.
func runCmd(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("gatehouse %v did not finish within 60s", args)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("gatehouse %v: %v", args, err)
	}
	return code, stdout.String(), stderr.String()
}
