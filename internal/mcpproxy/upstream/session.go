package upstream

import (
	"context"
	"errors"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Causes that tell a call's own end apart from its caller going away. The reasons a
// session is reaped end up in messages to MCP clients ("MCP server x was stopped: …").
var (
	errNoAnswer     = errors.New("the server did not answer in time")
	errSessionEnded = errors.New("the session ended")
	errShutdown     = errors.New("the Gatehouse server is shutting down")
	errIdle         = errors.New("it was idle too long")
	errBroken       = errors.New("its connection failed")
)

// key names one upstream session: one server on behalf of one Gatehouse session.
type key struct{ sid, server string }

// session is one SDK client session with one upstream server for one Gatehouse
// session. It is created by the first call that needs it and connects in the
// background, so concurrent first calls share one process.
type session struct {
	key    key
	server Server
	// person is who started it: its process counts against that person's limit.
	person string

	// life ends when the session is reaped; it cancels the handshake, every call in
	// flight and every elicitation waiting on a person, so closing never waits on them.
	life context.Context
	stop context.CancelCauseFunc

	ready chan struct{} // closed when the handshake finished; cs or err is set
	cs    *mcp.ClientSession
	cmd   *exec.Cmd // stdio only
	err   *Error

	exited  chan struct{} // closed when the connection is closed and its process waited
	exitErr error         // why it closed; set before exited closes

	reapOnce sync.Once

	mu       sync.Mutex
	active   int       // calls and listings in flight
	lastUsed time.Time // for the idle reaper
	tools    []string  // tools of calls in flight, to attribute an elicitation
}

func newSession(k key, s Server) *session {
	life, stop := context.WithCancelCause(context.Background())
	return &session{
		key: k, server: s, life: life, stop: stop,
		ready: make(chan struct{}), exited: make(chan struct{}),
		lastUsed: time.Now(),
	}
}

// begin marks a call (tool, or "" for a listing) in flight; it keeps the idle
// reaper away.
func (s *session) begin(tool string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active++
	if tool != "" {
		s.tools = append(s.tools, tool)
	}
}

func (s *session) end(tool string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	s.lastUsed = time.Now()
	if tool == "" {
		return
	}
	for i, t := range s.tools {
		if t == tool {
			s.tools = append(s.tools[:i], s.tools[i+1:]...)
			break
		}
	}
}

// idleSince reports whether nothing is in flight and nothing was since t.
func (s *session) idleSince(t time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active == 0 && !s.lastUsed.After(t)
}

// callingTool names the tool an elicitation from the server belongs to. MCP does
// not link a server's request to the client call that caused it (not on stdio), so
// it is the tool in flight when that is unambiguous, and "" when several different
// tools are running at once.
func (s *session) callingTool() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tools) == 0 {
		return ""
	}
	for _, t := range s.tools[1:] {
		if t != s.tools[0] {
			return ""
		}
	}
	return s.tools[0]
}

// closed reports whether the connection is already gone.
func (s *session) closed() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// hasExited reports whether the connection is gone (the process has been waited),
// giving the SDK up to d to notice: a crash fails the call a moment before the
// connection finishes closing.
func (s *session) hasExited(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.exited:
		return true
	case <-t.C:
		return false
	}
}

// reapTimeout bounds a graceful close (stdin closed, SIGTERM, SIGKILL, each after
// terminateGrace) before the process is killed outright.
const reapTimeout = 3*terminateGrace + time.Second

// reap ends the session: it cancels whatever is in flight, closes the connection
// (for stdio: stdin closed, then SIGTERM, then SIGKILL) and returns once the process
// has been waited. Safe to call more than once and concurrently.
func (s *session) reap(cause error) {
	s.reapOnce.Do(func() {
		s.stop(cause)
		<-s.ready
		if s.cs != nil {
			go s.cs.Close()
		}
	})
	if s.cs == nil {
		return // the handshake failed and the SDK already closed the connection
	}
	t := time.NewTimer(reapTimeout)
	defer t.Stop()
	select {
	case <-s.exited:
		return
	case <-t.C:
	}
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
	}
	// Killed, the process's pipes close and the SDK waits for it; a remote server
	// whose session refuses to close is given up on.
	t.Reset(reapTimeout)
	select {
	case <-s.exited:
	case <-t.C:
	}
}
