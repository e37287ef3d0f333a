package clienttest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/testnpm"
)

// script is a running client script from js/ (see js/driver.mjs for the line protocol).
// Its whole transcript (stdout lines and stderr) is logged when the test fails, so a
// failure shows what the real client saw.
type script struct {
	stdin  io.WriteCloser
	lines  chan map[string]any
	mu     sync.Mutex
	log    []string
	stderr bytes.Buffer
}

// startScript runs node js/<name> args…; it is killed when the test ends. The npm
// packages resolve from the repository's node_modules (ESM resolution walks up from
// the script), so a missing `npm ci` skips the test (fails in CI) here.
func startScript(t *testing.T, pkg, name string, args ...string) *script {
	t.Helper()
	testnpm.NodeModule(t, pkg+"/package.json")
	node := testnpm.Node(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("js", name)}, args...)...)
	s := &script{lines: make(chan map[string]any, 16)}
	cmd.Stderr = &lockedWriter{mu: &s.mu, w: &s.stderr}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.log = append(s.log, "stdout: "+sc.Text())
			s.mu.Unlock()
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				s.lines <- m
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			s.mu.Lock()
			defer s.mu.Unlock()
			t.Logf("%s transcript:\n%s\nstderr:\n%s", name, strings.Join(s.log, "\n"), s.stderr.String())
		}
	})
	return s
}

// expect returns the script's next line, failing unless it is the given event.
func (s *script) expect(t testing.TB, event string, within time.Duration) map[string]any {
	t.Helper()
	select {
	case m, ok := <-s.lines:
		if !ok {
			t.Fatalf("the client script exited while the test waited for %q", event)
		}
		if m["event"] != event {
			raw, _ := json.Marshal(m)
			t.Fatalf("the client script printed %s, want a %q line", raw, event)
		}
		return m
	case <-time.After(within):
		t.Fatalf("no %q line from the client script within %s", event, within)
	}
	return nil
}

// quiet fails the test when the script has already printed a line the test has not
// read (for example a result before the person decided).
func (s *script) quiet(t testing.TB, why string) {
	t.Helper()
	select {
	case m, ok := <-s.lines:
		if ok {
			raw, _ := json.Marshal(m)
			t.Fatalf("%s, but the client script already printed %s", why, raw)
		}
		t.Fatalf("%s, but the client script has exited", why)
	default:
	}
}

// send writes one line to the script's stdin (the person's action).
func (s *script) send(t testing.TB, line string) {
	t.Helper()
	s.mu.Lock()
	s.log = append(s.log, "stdin:  "+line)
	s.mu.Unlock()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		t.Fatalf("write to the client script: %v", err)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
