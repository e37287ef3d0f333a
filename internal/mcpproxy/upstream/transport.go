package upstream

import (
	"bytes"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// terminateGrace is how long a stdio server gets to exit after its stdin closes
// (and again after SIGTERM) before it is killed: the shutdown the MCP spec asks for,
// kept short because a person may be waiting on EndSession or on a shutdown.
const terminateGrace = 2 * time.Second

// waitDelay bounds how long reaping waits for a server's grandchildren to let go
// of its stderr after the server itself exited.
const waitDelay = 2 * time.Second

// keptEnv are the variables of Gatehouse's own environment a stdio server inherits:
// enough to find its interpreter and home directory, nothing that may hold secrets.
var keptEnv = []string{"PATH", "HOME"}

// stdioCommand builds the process for s. It is started by the SDK's CommandTransport,
// which also closes stdin, signals and waits for it when the session closes.
func stdioCommand(s Server, log *slog.Logger) *exec.Cmd {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = s.Cwd
	cmd.Env = serverEnv(s.Env)
	cmd.Stderr = &lineLogger{log: log}
	cmd.WaitDelay = waitDelay
	detachProcessGroup(cmd)
	return cmd
}

func serverEnv(extra map[string]string) []string {
	var env []string
	for _, k := range keptEnv {
		if v, ok := os.LookupEnv(k); ok {
			if _, overridden := extra[k]; !overridden {
				env = append(env, k+"="+v)
			}
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// newTransport returns how to reach s: a fresh process for stdio servers, an HTTP
// client carrying the configured headers for remote ones.
func newTransport(s Server, log *slog.Logger) (mcp.Transport, *exec.Cmd) {
	if s.Stdio() {
		cmd := stdioCommand(s, log)
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: terminateGrace}, cmd
	}
	hc := &http.Client{Transport: &headerTransport{headers: s.Headers, base: http.DefaultTransport}}
	// No retries: a server that went away is reported at once, and the next call
	// opens a new session.
	return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxRetries: -1}, nil
}

// headerTransport adds the configured headers (typically Authorization) to every
// request to a remote server.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}

// maxStderrLine caps one logged stderr line of a server.
const maxStderrLine = 2048

// lineLogger logs a stdio server's stderr line by line at debug level: that is where
// servers explain why they fail to start.
type lineLogger struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			if len(l.buf) > maxStderrLine {
				l.emit(l.buf)
				l.buf = l.buf[:0]
			}
			return len(p), nil
		}
		l.emit(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

func (l *lineLogger) emit(line []byte) {
	if len(line) > maxStderrLine {
		line = line[:maxStderrLine]
	}
	l.log.Debug("mcp server stderr", "line", string(bytes.TrimRight(line, "\r")))
}
