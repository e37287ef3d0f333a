// Package mcpproxy is the MCP proxy use case (§6.5): MCP clients call tools through
// Gatehouse, policies decide which calls need a person, and each client is asked the
// way its protocol revision allows — a multi round-trip input_required result
// (2026-07-28), a -32042 URLElicitationRequiredError (older clients that open links),
// or a call held open with progress notifications (older clients that cannot). Tools
// run on the runner (§6.5) or on real upstream MCP servers.
//
// The wire format lives in internal/adapters/mcp; this package holds the decisions.
//
// The official Go SDK's server (mcp.Server + StreamableHTTPHandler) is not used for the
// wire, although it negotiates versions and speaks SSE: its stateless mode forgets what
// initialize declared (so a form-only client would be sent an input kind it cannot
// take), its stateful mode keeps MCP sessions in one process's memory (lost on a
// rolling restart, invisible to other replicas) and refuses 2026-07-28 requests, its
// fallback for older clients is a server→client elicitation/create (which Claude Code
// auto-cancels in headless runs) rather than a held call, and the seed's bare requests
// (no Accept, no handshake) are refused by its transport. The proxy stays stateless:
// what initialize said travels in a signed Mcp-Session-Id (adapters/mcp SignClient).
package mcpproxy

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/park"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Runner executes tools through the runner protocol (§6.5).
type Runner interface {
	// Execute posts {"method","params"} to {runner}/v1/sessions/{sid}/mcp/execute and
	// returns the raw JSON answer.
	Execute(ctx context.Context, sid, method string, params any) (json.RawMessage, error)
}

// Upstreams are real MCP servers standing behind the proxy (upstream.Pool). person is
// the caller, whose limit on server processes a server started for the call counts
// against (errs.TooManyRequests when it is reached).
type Upstreams interface {
	// Tools lists every server's tools, named "server__tool".
	Tools(ctx context.Context, sid, person string) ([]json.RawMessage, error)
	// Owns splits a namespaced tool name when it names a configured server.
	Owns(name string) (server, tool string, ok bool)
	// Hints are what a tool's server says of the harm it can do (its annotations),
	// for rating a call; nil for a name no server owns.
	Hints(ctx context.Context, sid, person, name string) *risk.Hints
	// Call runs a tool and returns its CallToolResult.
	Call(ctx context.Context, sid, person, name string, args json.RawMessage) (json.RawMessage, error)
	// EndSession stops the session's server processes.
	EndSession(sid string)
}

// Options configure a Proxy.
type Options struct {
	// Mode is --elicitation-mode: "url" links to the approval page, "form" asks the
	// client for an approved boolean (which is never trusted on its own).
	Mode string
	// ApprovalTTL bounds how long an approval asked of a client that comes back for
	// it (input_required, -32042) stays pending (--mcp-approval-ttl).
	ApprovalTTL time.Duration
	// RetryWait bounds how long a retry waits for a verdict still pending before it is
	// answered as before (--mcp-retry-wait).
	RetryWait time.Duration
	// InputTimeout bounds the wait for answers to a runner's input requests.
	InputTimeout time.Duration
	// ProgressEvery is the pace of progress notifications on a held call.
	ProgressEvery time.Duration
	Log           *slog.Logger
	// Now tells time (injected in tests); time.Now when nil.
	Now func() time.Time
	// Park is the park use case the handlers share (internal/park): a policy ASK and a
	// server's request for input park through it, in its prepare slots, and its
	// Gatehouse rules answer an ASK without asking anyone. Nil: a Service of its own
	// with no rules.
	Park *park.Service
	// Tasks keeps MCP tasks: with it, a client that declares the Tasks extension on a
	// call that needs approval is answered with a task. Nil: no tasks are offered.
	Tasks TaskStore
	// TaskPollInterval is the pace a task asks its client to poll at (default 5s).
	TaskPollInterval time.Duration
}

// Proxy answers MCP requests for Gatehouse sessions.
type Proxy struct {
	elicit    *elicit.Service
	park      *park.Service
	policies  *policy.Engine
	runner    Runner
	upstreams Upstreams
	signer    *mcp.StateSigner
	clients   verifiedClients
	o         Options
}

// New builds a Proxy. runner and upstreams may each be nil, not both (see Available).
func New(core *elicit.Service, policies *policy.Engine, runner Runner, upstreams Upstreams, signer *mcp.StateSigner, o Options) *Proxy {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ApprovalTTL <= 0 {
		o.ApprovalTTL = 15 * time.Minute
	}
	if o.RetryWait <= 0 {
		o.RetryWait = 50 * time.Second
	}
	if o.InputTimeout <= 0 {
		o.InputTimeout = 5 * time.Minute
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 10 * time.Second
	}
	if o.TaskPollInterval <= 0 {
		o.TaskPollInterval = 5 * time.Second
	}
	if policies == nil {
		policies = policy.New()
	}
	if o.Park == nil {
		o.Park = park.New(core, nil, park.DefaultSlots)
	}
	return &Proxy{elicit: core, park: o.Park, policies: policies, runner: runner, upstreams: upstreams, signer: signer, o: o}
}

// Available reports whether any tools can run: without a runner and upstream servers
// the endpoint answers 503 (§6.5).
func (p *Proxy) Available() bool { return p != nil && (p.runner != nil || p.upstreams != nil) }

// EndSession ends what the proxy holds for a session's MCP client (its upstream
// stdio servers), when the client ends its MCP session (DELETE).
func (p *Proxy) EndSession(sid string) {
	if p != nil && p.upstreams != nil {
		p.upstreams.EndSession(sid)
	}
}

// Request is one POST to the MCP endpoint of a session the caller may edit.
type Request struct {
	Session *models.Session
	User    string
	Body    []byte
	// ProtocolHeader is the MCP-Protocol-Version header ("" when absent).
	ProtocolHeader string
	// ClientToken is the Mcp-Session-Id header ("" when absent).
	ClientToken string
	// BaseURL is the absolute base of links handed to clients: --public-url, or the
	// request's own scheme and host.
	BaseURL string
}

// Reply is what the endpoint answers.
type Reply struct {
	// Status is 200 (Body is the JSON-RPC answer), 202 (notifications and stray
	// responses; no body) or 404 (an Mcp-Session-Id this server did not issue: the
	// client must initialize again).
	Status int
	Body   any
	// ClientToken, when set, goes out as the Mcp-Session-Id header (after initialize).
	ClientToken string
}

// Stream lets a held call talk before its answer. The handler switches its response
// to an SSE stream on the first Send; the answer then goes out as the last event.
type Stream interface {
	// Send writes one JSON-RPC message (a notification) as an SSE event.
	Send(msg any) error
	// Keepalive writes an SSE comment: it keeps a held call's connection alive for
	// clients that asked for no progress.
	Keepalive() error
}
