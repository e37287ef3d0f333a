package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
)

// DefaultIdleTimeout is how long an upstream session may sit unused before its
// process is reaped.
const DefaultIdleTimeout = 10 * time.Minute

// DefaultMaxProcessesPerPerson is Options.MaxProcessesPerPerson when none is given.
const DefaultMaxProcessesPerPerson = 8

// Options configures a Pool.
type Options struct {
	Log *slog.Logger
	// IdleTimeout reaps a session's stdio processes after this idle time; default 10m.
	IdleTimeout time.Duration
	// Elicit, when set, answers an upstream server's elicitation/create during a call
	// (Gatehouse parks a prompt for a person). nil → decline. Its context ends when the
	// upstream session is reaped. person is who started the server's process (MCP
	// does not say which call a server's request belongs to).
	Elicit func(ctx context.Context, sid, person, server, tool string, params *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// MaxProcessesPerPerson caps the stdio server processes one person's calls keep
	// running in this pool (--max-upstream-processes-per-person); default
	// DefaultMaxProcessesPerPerson. See Pool.
	MaxProcessesPerPerson int
}

// Pool holds the upstream MCP sessions of every Gatehouse session: one SDK client
// session per (Gatehouse session, server), created on first use. It is safe for
// concurrent use.
//
// A stdio server's process belongs to the person whose call started it, until it has
// exited and been waited (it crashed, its session ended, it sat idle, Gatehouse shut
// down). One person may have at most Options.MaxProcessesPerPerson of them at once:
// each is a whole program (an interpreter, its memory, its descriptors), and sessions
// cost nothing to create, so without a cap one person could start processes until the
// machine gave out. The count is this process's, like the processes themselves.
type Pool struct {
	log      *slog.Logger
	servers  []Server
	byName   map[string]Server
	idle     time.Duration
	elicit   func(ctx context.Context, sid, person, server, tool string, params *mcp.ElicitParams) (*mcp.ElicitResult, error)
	maxProcs int

	mu       sync.Mutex
	sessions map[key]*session
	// procs counts each person's stdio processes not yet waited (guarded by mu).
	procs  map[string]int
	closed bool
	// bg counts the goroutines that hold processes (handshakes, watchers, reaps), so
	// Close returns only once every process has been waited. Add only under mu and
	// only while !closed.
	bg       sync.WaitGroup
	stopIdle chan struct{}

	// hints are each listed tool's annotations, by namespaced name (guarded by mu):
	// what its server says of the harm it can do, for rating a call (internal/risk).
	hints map[string]risk.Hints
}

// New returns a pool for cfg (nil: no servers). It starts the idle reaper; Close stops it.
func New(cfg *Config, o Options) *Pool {
	p := &Pool{
		log:      o.Log,
		byName:   map[string]Server{},
		idle:     o.IdleTimeout,
		elicit:   o.Elicit,
		maxProcs: o.MaxProcessesPerPerson,
		sessions: map[key]*session{},
		procs:    map[string]int{},
		stopIdle: make(chan struct{}),
		hints:    map[string]risk.Hints{},
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	p.log = p.log.With("component", "mcp_upstream")
	if p.idle <= 0 {
		p.idle = DefaultIdleTimeout
	}
	if p.maxProcs <= 0 {
		p.maxProcs = DefaultMaxProcessesPerPerson
	}
	if cfg != nil {
		p.servers = cfg.Servers
		for _, s := range cfg.Servers {
			p.byName[s.Name] = s
		}
	}
	go p.reapIdle()
	return p
}

// Owns reports whether name is a namespaced tool of a configured server, and splits
// it. Server names cannot contain the separator, so the split is exact even when the
// tool's own name contains "__".
func (p *Pool) Owns(name string) (server, tool string, ok bool) {
	server, tool, found := strings.Cut(name, Separator)
	if !found || tool == "" {
		return "", "", false
	}
	if _, ok := p.byName[server]; !ok {
		return "", "", false
	}
	return server, tool, true
}

// acquire returns the session of (sid, server), connecting it if needed, with tool
// marked in flight; the caller must call s.end(tool). ctx bounds the wait for the
// handshake. A stdio server's new process is person's: when person already has the
// most allowed, acquire refuses with errs.TooManyRequests.
func (p *Pool) acquire(ctx context.Context, sid, person string, srv Server, tool string) (*session, error) {
	k := key{sid: sid, server: srv.Name}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errorf("MCP server %s is not available: Gatehouse is shutting down", srv.Name)
	}
	s := p.sessions[k]
	if s != nil && s.closed() {
		s = nil // died between calls; its watcher has not forgotten it yet
	}
	if s == nil {
		if srv.Stdio() {
			if n := p.procs[person]; n >= p.maxProcs {
				p.mu.Unlock()
				return nil, errs.TooManyRequests("too many MCP server processes: %d of yours are running here (at most %d per person); "+
					"end an MCP session you no longer use (DELETE its /mcp endpoint) or wait for an idle one to stop", n, p.maxProcs)
			}
			p.procs[person]++
		}
		s = newSession(k, srv)
		s.person = person
		p.sessions[k] = s
		p.bg.Add(1)
		go p.connect(s)
	}
	s.begin(tool)
	p.mu.Unlock()

	select {
	case <-s.ready:
	case <-ctx.Done():
		s.end(tool)
		return nil, p.failure(ctx, s, ctx.Err())
	}
	if s.err != nil {
		s.end(tool)
		return nil, s.err
	}
	return s, nil
}

// connect runs the handshake of s, then watches its connection until it closes.
func (p *Pool) connect(s *session) {
	defer p.bg.Done()
	log := p.log.With("session_id", s.key.sid, "server", s.key.server)
	ctx, cancel := context.WithTimeoutCause(s.life, s.server.Timeout, errNoAnswer)
	defer cancel()

	t, cmd := newTransport(s.server, log)
	client := mcp.NewClient(&mcp.Implementation{Name: "gatehouse", Version: "1"}, &mcp.ClientOptions{
		Logger: log,
		// No roots: Gatehouse has no workspace of its own to offer a server.
		Capabilities:       &mcp.ClientCapabilities{},
		ElicitationHandler: p.elicitFor(s),
	})
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		// The SDK has closed the connection and waited for the process.
		s.err = p.connectError(ctx, s, err)
		p.forget(s)
		p.processGone(s)
		close(s.ready)
		close(s.exited)
		return
	}
	s.cs, s.cmd = cs, cmd
	if cmd != nil {
		log.Debug("mcp server started", "pid", cmd.Process.Pid)
	}
	close(s.ready)

	err = cs.Wait()
	s.exitErr = err
	p.forget(s)
	p.processGone(s)
	close(s.exited)
	if s.life.Err() == nil {
		log.Warn("mcp server connection closed", "err", err)
	} else {
		log.Debug("mcp server stopped", "reason", context.Cause(s.life), "err", err)
	}
}

func (p *Pool) connectError(ctx context.Context, s *session, err error) *Error {
	name := s.server.Name
	p.log.Warn("mcp server handshake failed", "session_id", s.key.sid, "server", name, "err", err)
	switch {
	case context.Cause(ctx) == errNoAnswer:
		return errorf("MCP server %s did not answer within %s", name, humanDuration(s.server.Timeout))
	case s.life.Err() != nil:
		return errorf("MCP server %s was stopped before it started: %v", name, context.Cause(s.life))
	case s.server.Stdio():
		return errorf("MCP server %s could not be started", name)
	default:
		return errorf("MCP server %s could not be reached", name)
	}
}

// elicitFor answers elicitation/create from the server of s: through Options.Elicit
// when set, bounded by the session's life, or declined.
func (p *Pool) elicitFor(s *session) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if p.elicit == nil {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.life, cancel)()
		return p.elicit(ctx, s.key.sid, s.person, s.key.server, s.callingTool(), req.Params)
	}
}

// processGone gives back the process slot of s (a stdio server's), once its process
// has been waited — before s.exited closes, so whoever waited for that (EndSession,
// a reap) finds the slot free.
func (p *Pool) processGone(s *session) {
	if !s.server.Stdio() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.procs[s.person]--; p.procs[s.person] <= 0 {
		delete(p.procs, s.person)
	}
}

// forget removes s from the pool if it is still the session of its key, so the next
// call starts a fresh one.
func (p *Pool) forget(s *session) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sessions[s.key] == s {
		delete(p.sessions, s.key)
	}
}

// discard forgets s and reaps it in the background: its connection is broken.
func (p *Pool) discard(s *session, cause error) {
	p.forget(s)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return // Close reaps what it finds; this one is past saving anyway
	}
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		s.reap(cause)
	}()
}

// Tools lists every configured server's tools for Gatehouse session sid on behalf of
// person, names namespaced "server__tool": the MCP Tool objects as the SDK decodes
// them, with the name rewritten. A server that fails to list is logged and left out,
// not fatal; the error is the caller's context ending, or person's process limit
// (errs.TooManyRequests) keeping a server from starting — a list silently short of a
// server's tools would hide why.
func (p *Pool) Tools(ctx context.Context, sid, person string) ([]json.RawMessage, error) {
	lists := make([][]json.RawMessage, len(p.servers))
	errsOf := make([]error, len(p.servers))
	var wg sync.WaitGroup
	for i, srv := range p.servers {
		wg.Go(func() {
			tools, err := p.listTools(ctx, sid, person, srv)
			if err != nil {
				p.log.Warn("mcp server tools left out", "session_id", sid, "server", srv.Name, "err", err)
				errsOf[i] = err
				return
			}
			lists[i] = tools
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errsOf {
		if errors.Is(err, errs.ErrTooManyRequests) {
			return nil, err
		}
	}
	var all []json.RawMessage
	for _, l := range lists {
		all = append(all, l...)
	}
	return all, nil
}

func (p *Pool) listTools(parent context.Context, sid, person string, srv Server) ([]json.RawMessage, error) {
	ctx, cancel := context.WithTimeoutCause(parent, srv.Timeout, errNoAnswer)
	defer cancel()
	s, err := p.acquire(ctx, sid, person, srv, "")
	if err != nil {
		return nil, err
	}
	defer s.end("")
	ctx, stop := p.boundToSession(ctx, s)
	defer stop()
	var out []json.RawMessage
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, p.failure(ctx, s, err)
		}
		raw, err := namespacedTool(srv.Name, t)
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
		p.remember(srv.Name+Separator+t.Name, t.Annotations)
	}
	return out, nil
}

// namespacedTool is t as JSON with its name prefixed by the server's.
// remember keeps a listed tool's annotations for Hints.
func (p *Pool) remember(name string, a *mcp.ToolAnnotations) {
	var h risk.Hints
	if a != nil {
		ro := a.ReadOnlyHint
		h = risk.Hints{ReadOnly: &ro, Destructive: a.DestructiveHint}
	}
	p.mu.Lock()
	p.hints[name] = h
	p.mu.Unlock()
}

// Hints returns what the server of the namespaced tool name says of the tool's harm,
// listing that server's tools first when this process has not yet (a client that
// listed them before a restart calls without listing again). A server that cannot
// list gives the specification's defaults: not read-only, destructive.
func (p *Pool) Hints(ctx context.Context, sid, person, name string) *risk.Hints {
	server, _, ok := p.Owns(name)
	if !ok {
		return nil
	}
	p.mu.Lock()
	h, known := p.hints[name]
	p.mu.Unlock()
	if !known {
		if _, err := p.listTools(ctx, sid, person, p.byName[server]); err != nil {
			return &risk.Hints{}
		}
		p.mu.Lock()
		h = p.hints[name]
		p.mu.Unlock()
	}
	return &h
}

func namespacedTool(server string, t *mcp.Tool) (json.RawMessage, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	name, err := json.Marshal(server + Separator + t.Name)
	if err != nil {
		return nil, err
	}
	m["name"] = name
	return json.Marshal(m)
}

// boundToSession derives a context that also ends when s is reaped, so reaping
// never waits on a call the server will not answer.
func (p *Pool) boundToSession(ctx context.Context, s *session) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stopAfter := context.AfterFunc(s.life, func() { cancel(errSessionEnded) })
	return ctx, func() { stopAfter(); cancel(nil) }
}

// Call runs tool on its server for session sid on behalf of person and returns the MCP
// CallToolResult as JSON (content, isError, structuredContent and _meta as the server
// sent them). A crash, a hang past the server's timeout or an unknown tool is an
// *Error; person's process limit is errs.TooManyRequests; the caller's own context
// ending is returned as that context's error.
func (p *Pool) Call(ctx context.Context, sid, person, name string, args json.RawMessage) (json.RawMessage, error) {
	server, tool, ok := p.Owns(name)
	if !ok {
		return nil, errorf("unknown tool %q", name)
	}
	srv := p.byName[server]
	arguments, err := callArguments(args)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, srv.Timeout, errNoAnswer)
	defer cancel()
	s, err := p.acquire(ctx, sid, person, srv, tool)
	if err != nil {
		return nil, err
	}
	defer s.end(tool)
	ctx, stop := p.boundToSession(ctx, s)
	defer stop()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: arguments})
	if err != nil {
		return nil, p.failure(ctx, s, err)
	}
	return encodeResult(res)
}

// callArguments checks that args is a JSON object (or absent) before it reaches a server.
func callArguments(args json.RawMessage) (json.RawMessage, error) {
	trimmed := strings.TrimSpace(string(args))
	if trimmed == "" || trimmed == "null" {
		return json.RawMessage(`{}`), nil
	}
	if trimmed[0] != '{' || !json.Valid(args) {
		return nil, errorf("tool arguments must be a JSON object")
	}
	return args, nil
}

// encodeResult is res as the MCP client should see it: the multi-round-trip fields
// are between Gatehouse and the upstream server (the SDK has completed that exchange),
// so they are dropped.
func encodeResult(res *mcp.CallToolResult) (json.RawMessage, error) {
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, k := range []string{"resultType", "inputRequests", "requestState"} {
		delete(m, k)
	}
	return json.Marshal(m)
}

// failure turns the error of a request to s into what the caller gets: the server's
// own JSON-RPC error, a timeout, the caller's context, or a crash. A broken session is
// dropped so the next call starts a new one.
func (p *Pool) failure(ctx context.Context, s *session, err error) error {
	name := s.server.Name
	if we, ok := serverAnswered(err); ok {
		return errorf("MCP server %s: %s", name, we.Message)
	}
	switch cause := context.Cause(ctx); {
	case cause == errNoAnswer:
		return errorf("MCP server %s did not answer within %s", name, humanDuration(s.server.Timeout))
	case cause == errSessionEnded:
		return errorf("MCP server %s was stopped: %v", name, context.Cause(s.life))
	case cause != nil:
		return cause // the caller gave up
	}
	log := p.log.With("session_id", s.key.sid, "server", name)
	if s.hasExited(exitNoticeDelay) {
		log.Warn("mcp server crashed during a request", "err", err, "exit", s.exitErr)
		if s.server.Stdio() {
			return errorf("MCP server %s crashed during the call", name)
		}
		return errorf("MCP server %s closed the connection during the call", name)
	}
	log.Warn("mcp server request failed; starting over with a new session", "err", err)
	p.discard(s, errBroken)
	if s.server.Stdio() {
		return errorf("MCP server %s failed during the call", name)
	}
	return errorf("MCP server %s could not be reached during the call", name)
}

// exitNoticeDelay is how long a failed request waits for the connection to report
// closed, which is how a crash is told apart from other failures.
const exitNoticeDelay = 2 * time.Second

// EndSession closes the upstream sessions of Gatehouse session sid and returns once
// their processes have been waited.
func (p *Pool) EndSession(sid string) {
	p.mu.Lock()
	var ending []*session
	for k, s := range p.sessions {
		if k.sid == sid {
			ending = append(ending, s)
			delete(p.sessions, k)
		}
	}
	p.mu.Unlock()
	reapAll(ending, errSessionEnded)
}

// Close reaps every upstream session (server shutdown) and returns once every
// process has been waited. Calls after Close fail with an *Error.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.stopIdle)
	var all []*session
	for k, s := range p.sessions {
		all = append(all, s)
		delete(p.sessions, k)
	}
	p.mu.Unlock()
	reapAll(all, errShutdown)
	p.bg.Wait()
	return nil
}

func reapAll(ss []*session, cause error) {
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Go(func() { s.reap(cause) })
	}
	wg.Wait()
}

// reapIdle closes sessions that have had nothing in flight for the idle timeout.
func (p *Pool) reapIdle() {
	tick := time.NewTicker(max(min(p.idle/2, time.Minute), 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-p.stopIdle:
			return
		case now := <-tick.C:
			cutoff := now.Add(-p.idle)
			p.mu.Lock()
			for k, s := range p.sessions {
				if s.idleSince(cutoff) {
					delete(p.sessions, k)
					p.bg.Add(1)
					go func() {
						defer p.bg.Done()
						s.reap(errIdle)
					}()
				}
			}
			p.mu.Unlock()
		}
	}
}
