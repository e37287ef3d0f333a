// Package hookclient forwards one agent hook invocation (Claude Code or Codex CLI, a
// `type: command` hook) to a Gatehouse server and returns the answer to print. It is
// the engine of `gatehouse hook claude|codex`: the command reads stdin and flags, this
// package does the HTTP, the re-attach after a dropped connection, and the fallback
// answers when the server cannot give one.
//
// The contract with the agent is its hook protocol: what goes to stdout is the
// decision (empty stdout = no decision, the agent asks locally), so a failure to reach
// Gatehouse must never print anything but a well-formed answer.
package hookclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/agents"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
)

// Agent is the agent whose hook is forwarded (internal/agents): its name picks the
// server route, its Deny the shape of a fail-closed answer.
type Agent = agents.Agent

// Lookup returns the agent named name, from the registry's agents whose hooks can be
// forwarded (agents.Registry.Forwardable).
func Lookup(name string) (Agent, bool) { return agents.Default().Forwardable().Lookup(name) }

// Names are the agents a hook can be forwarded for, from the registry.
func Names() []string { return agents.Default().Forwardable().Names() }

// Route is the server path an agent's hook payloads are posted to.
func Route(a Agent) string { return "/v1/hooks/" + a.Name() }

// ReattachField is the payload field carrying the prompt id a retry re-attaches to.
const ReattachField = "_gatehouse_elicitation_id"

// Defaults of Options.
const (
	DefaultConnectWindow = 5 * time.Second
	DefaultReattachFor   = 30 * time.Second
	maxAnswerBytes       = 4 << 20
	// maxClosingNoVerdicts bounds the re-attaches after "no verdict" answers that closed
	// the connection (see errClosingNoVerdict), so a proxy that closes every connection
	// costs a few quick round trips, not a loop.
	maxClosingNoVerdicts = 3
)

// errClosingNoVerdict is an empty 200 that also closed the connection (`Connection:
// close` on a request that asked to keep it): what a Gatehouse shutting down answers its
// parked requests with, leaving their prompts pending for a client that re-attaches
// (SPEC §1). An ordinary "no verdict" given at once keeps the connection, so the
// forwarder re-attaches after this one: on the restarted server (or another replica) it
// either waits on or collects the verdict, or — the prompt having really ended — gets
// "no verdict" again, at once. (A request that waited is answered on a connection that
// then closes, internal/held, so its "no verdict" costs that one quick round trip.)
var errClosingNoVerdict = errors.New("the server closed the connection without a verdict (shutting down?)")

// Options configure one forward.
type Options struct {
	Agent Agent
	// BaseURL is the server's base URL (http or https, no path needed).
	BaseURL string
	// Token, when set, is sent as `Authorization: Bearer <Token>`.
	Token string
	// ConnectWindow bounds how long the forwarder keeps trying to reach a server it has
	// not reached yet in this invocation: a server that is down should not hold the
	// agent up for long, since the agent can still ask locally.
	ConnectWindow time.Duration
	// ReattachFor bounds how long the forwarder keeps re-attaching after a connection
	// that carried the request dropped (a restart, a proxy cutting idle requests). The
	// server keeps the prompt pending for its --disconnect-grace (10 s by default) and
	// across a restart, so a few seconds of backoff usually suffice.
	ReattachFor time.Duration
	// Client is the HTTP client; nil uses one with the environment's proxy settings and
	// no overall timeout (a parked request legitimately waits for hours).
	Client *http.Client
	// Sleep waits between attempts; nil uses a timer honouring ctx (tests may shorten it).
	Sleep func(ctx context.Context, d time.Duration) error
	// Logf, when set, receives progress notes (retries) for stderr.
	Logf func(format string, args ...any)
	// GrantsOnly asks the server only to let through the retry of a refusal a person
	// approved (?only=grants): any other call gets "no decision" at once, not a prompt.
	GrantsOnly bool
}

// Outcome is what a forward produced.
type Outcome struct {
	// Answer is the server's answer body, exactly as received (printed to stdout);
	// empty when the server had no decision or could not be used.
	Answer []byte
	// Err, when set, says why the server could not be used (unreachable, refused,
	// garbage): the caller prints nothing or, failing closed, a deny.
	Err error
	// ElicitationID is the re-attach id the payload carried.
	ElicitationID string
}

// Forward posts payload to the server and waits for its answer, re-attaching with the
// same prompt id after a dropped connection. It never panics on bad input and never
// returns an Answer that is not a JSON object.
func Forward(ctx context.Context, o Options, payload []byte) Outcome {
	o.defaults()
	endpoint, err := endpointURL(o.BaseURL, o.Agent)
	if err != nil {
		return Outcome{Err: err}
	}
	if o.GrantsOnly {
		endpoint += "?only=grants"
	}
	body, eid, err := withReattachID(payload, o.Agent)
	if err != nil {
		return Outcome{Err: err}
	}
	out := Outcome{ElicitationID: eid}
	contacted := false // a connection carried our request at least once
	windowStart := time.Now()
	backoff := 200 * time.Millisecond
	closing := 0
	for attempt := 1; ; attempt++ {
		ans, sent, err := post(ctx, o, endpoint, body)
		if sent {
			contacted = true
		}
		if errors.Is(err, errClosingNoVerdict) {
			if closing++; closing > maxClosingNoVerdicts {
				return out // no decision after all
			}
		}
		if err == nil {
			out.Answer = ans
			return out
		}
		var perm permanentError
		if errors.As(err, &perm) || ctx.Err() != nil {
			out.Err = err
			return out
		}
		if sent {
			windowStart = time.Now() // the request reached the server: re-attach from now
		}
		window := o.ConnectWindow
		if contacted {
			window = o.ReattachFor
		}
		wait := backoff
		if ra := retryAfter(err); ra > wait {
			wait = ra
		}
		if time.Since(windowStart)+wait > window {
			if contacted {
				out.Err = fmt.Errorf("lost the connection to %s and could not re-attach within %s: %w", o.BaseURL, o.ReattachFor, err)
			} else {
				out.Err = fmt.Errorf("cannot reach Gatehouse at %s: %w", o.BaseURL, err)
			}
			return out
		}
		o.Logf("gatehouse hook: attempt %d failed (%v); retrying in %s with %s", attempt, err, wait.Round(time.Millisecond), eid)
		if err := o.Sleep(ctx, wait); err != nil {
			out.Err = err
			return out
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

func (o *Options) defaults() {
	if o.ConnectWindow <= 0 {
		o.ConnectWindow = DefaultConnectWindow
	}
	if o.ReattachFor <= 0 {
		o.ReattachFor = DefaultReattachFor
	}
	if o.Client == nil {
		o.Client = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 15 * time.Second}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			// Keep-alive stays on: a server shutting down says so with `Connection: close`.
			IdleConnTimeout:       30 * time.Second,
			ForceAttemptHTTP2:     true,
			ExpectContinueTimeout: time.Second,
		}}
	}
	if o.Sleep == nil {
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
}

// endpointURL checks base and joins the agent's route to it.
func endpointURL(base string, a Agent) (string, error) {
	base = strings.TrimSpace(base)
	if base == "" {
		return "", permanentError{errors.New("no Gatehouse URL: pass --url or set GATEHOUSE_URL")}
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", permanentError{fmt.Errorf("the Gatehouse URL must be an absolute http(s) URL, got %q", base)}
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", permanentError{fmt.Errorf("the Gatehouse URL must not carry a query or fragment, got %q", base)}
	}
	return strings.TrimRight(u.String(), "/") + Route(a), nil
}

// withReattachID returns the payload with a re-attach id added (a random one, kept for
// this invocation; an id the payload already carries is kept), and that id. The id is
// random rather than derived from the payload: PermissionRequest has no tool_use_id,
// so the same command asked twice in a session would otherwise re-attach to the first
// prompt and receive its verdict without anyone being asked.
func withReattachID(payload []byte, a Agent) ([]byte, string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(payload, &obj); err != nil || obj == nil {
		return nil, "", permanentError{fmt.Errorf("the hook payload on stdin is not a JSON object")}
	}
	if raw, ok := obj[ReattachField]; ok {
		var eid string
		if json.Unmarshal(raw, &eid) == nil && ids.ValidReattach(eid) {
			return payload, eid, nil
		}
	}
	eid := ids.New(ids.ElicitationPrefix + a.Name() + "_")
	raw, _ := json.Marshal(eid)
	obj[ReattachField] = raw
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, "", permanentError{err}
	}
	return body, eid, nil
}

// permanentError is a failure a retry cannot fix (bad URL, bad payload, 4xx, a server
// error that is not about availability, an unreadable answer).
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent reports whether err, an Outcome's Err, is one a retry cannot fix (a bad
// URL or payload, a 4xx, a refusal, an unreadable answer) rather than a server that
// could not be reached or re-attached to in time — which a long-lived caller (a
// bridge) retries later.
func Permanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// RefusedError is a 429 from Gatehouse: it would not park the request because a
// per-person limit is reached (too many of the caller's requests already wait for a
// person). Retrying at once would only be refused again, so the forwarder does not: it
// falls back (the agent asks locally, or --fail-closed denies) with Msg as the reason.
type RefusedError struct {
	// Msg is the server's message (which limit, how many are parked).
	Msg string
}

func (e *RefusedError) Error() string { return "Gatehouse refused: " + e.Msg }

// unavailableError is a 502/503/504: the server (or the proxy before it) is restarting
// or overloaded; the prompt usually survives, so the forwarder re-attaches.
type unavailableError struct {
	status int
	after  time.Duration
	msg    string
}

func (e unavailableError) Error() string {
	return fmt.Sprintf("Gatehouse answered %d%s", e.status, e.msg)
}

func retryAfter(err error) time.Duration {
	var u unavailableError
	if errors.As(err, &u) {
		return min(u.after, 10*time.Second)
	}
	return 0
}

// post makes one attempt. sent reports whether a connection carried the request (so
// the prompt may exist on the server and a retry re-attaches rather than re-asks).
func post(ctx context.Context, o Options, endpoint string, body []byte) (answer []byte, sent bool, err error) {
	trace := &httptrace.ClientTrace{WroteRequest: func(w httptrace.WroteRequestInfo) { sent = sent || w.Err == nil }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, false, permanentError{err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "gatehouse-hook/"+o.Agent.Name())
	if o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.Token)
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		return nil, sent, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return nil, true, fmt.Errorf("reading the answer: %w", err) // dropped mid-body: re-attach
	}
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusTooManyRequests:
		msg := strings.TrimPrefix(errorMessage(raw), ": ")
		if msg == "" {
			msg = "too many requests (429)"
		}
		return nil, true, permanentError{&RefusedError{Msg: msg}}
	case resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusGatewayTimeout:
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return nil, true, unavailableError{status: resp.StatusCode, after: time.Duration(secs) * time.Second, msg: errorMessage(raw)}
	default:
		return nil, true, permanentError{fmt.Errorf("the server answered %d%s", resp.StatusCode, errorMessage(raw))}
	}
	if len(raw) > maxAnswerBytes {
		return nil, true, permanentError{fmt.Errorf("the server's answer is larger than %d bytes", maxAnswerBytes)}
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		if resp.Close {
			return nil, true, errClosingNoVerdict
		}
		return nil, true, nil // no decision: the agent asks locally
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil, true, permanentError{errors.New("the server answered 200 with a body that is not a JSON object (is --url the Gatehouse server?)")}
	}
	return raw, true, nil
}

// errorMessage extracts ": <message>" from Gatehouse's error envelope, or "".
func errorMessage(raw []byte) string {
	var env struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &env) != nil || env.Error.Message == "" {
		return ""
	}
	msg := env.Error.Message
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return ": " + msg
}
