// Package runner is the HTTP client of the external runner that executes MCP tools
// for a session (--runner-url, §6.5). It implements handlers.Runner.
package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxAnswerBytes caps what we read from the runner: a tool's output is passed on to
// the MCP client, but a runaway runner must not exhaust our memory.
const maxAnswerBytes = 16 << 20

// Client talks to one runner.
type Client struct {
	base string
	// path is base's escaped path without its trailing slash ("" for the root).
	path string
	hc   *http.Client
	// direct, when set, carries every call instead of hc (see direct).
	direct *direct
}

// New returns a client for the runner at base (scheme://host[:port][/prefix]). hc may
// be nil. Requests are bounded by their context, not by a client-wide timeout: a
// tool may legitimately run for minutes while its caller waits.
func New(base string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--runner-url: want an http(s) URL, got %q", base)
	}
	c := &Client{base: strings.TrimRight(base, "/"), path: strings.TrimRight(u.EscapedPath(), "/"), hc: hc}
	if hc == nil {
		c.direct = directFor(u)
		c.hc = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			MaxIdleConnsPerHost:   maxIdleConns,
			IdleConnTimeout:       idleTimeout,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
			DisableCompression:    true,
		}}
	}
	return c, nil
}

// directFor is the direct client of a runner at u, nil when the standard Transport
// must carry its calls: https, a proxy from the environment, user info, a query.
func directFor(u *url.URL) *direct {
	if u.Scheme != "http" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil
	}
	if proxy, err := http.ProxyFromEnvironment(&http.Request{URL: u}); err != nil || proxy != nil {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return &direct{addr: net.JoinHostPort(u.Hostname(), port), host: u.Host}
}

// Error is a runner failure: it could not be reached, or answered with a non-2xx
// status or a body that is not JSON. Its message is safe to show an MCP client.
type Error struct {
	Status int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// Execute posts {"method","params"} to {runner}/v1/sessions/{sid}/mcp/execute and
// returns the JSON answer.
//
// params already encoded (json.RawMessage) are sent as they are.
func (c *Client) Execute(ctx context.Context, sid, method string, params any) (json.RawMessage, error) {
	var payload any = map[string]any{"method": method, "params": params}
	if raw, ok := params.(json.RawMessage); ok && len(raw) > 0 {
		payload = executeBody(method, raw)
	}
	body, err := c.post(ctx, sid, "/mcp/execute", payload)
	if err != nil {
		return nil, err
	}
	if !json.Valid(body) {
		return nil, &Error{Status: http.StatusOK, Msg: "the runner answered with something that is not JSON"}
	}
	return body, nil
}

// PostEvent posts a control event to {runner}/v1/sessions/{sid}/events.
func (c *Client) PostEvent(ctx context.Context, sid string, event any) error {
	_, err := c.post(ctx, sid, "/events", event)
	return err
}

// encoded is a request body that needs no encoding.
type encoded []byte

// executeBody is {"method":method,"params":params} with params as they are.
func executeBody(method string, params json.RawMessage) encoded {
	m, _ := json.Marshal(method)
	b := make([]byte, 0, len(`{"method":,"params":}`)+len(m)+len(params))
	b = append(b, `{"method":`...)
	b = append(b, m...)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	return append(b, '}')
}

func (c *Client) post(ctx context.Context, sid, suffix string, payload any) ([]byte, error) {
	raw, ok := payload.(encoded)
	if !ok {
		var err error
		if raw, err = json.Marshal(payload); err != nil {
			return nil, fmt.Errorf("runner: encode request: %w", err)
		}
	}
	if c.direct != nil {
		return c.postDirect(ctx, c.path+"/v1/sessions/"+url.PathEscape(sid)+suffix, raw)
	}
	u := c.base + "/v1/sessions/" + url.PathEscape(sid) + suffix
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, &Error{Msg: "the runner could not be reached"}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return nil, &Error{Status: resp.StatusCode, Msg: "the runner's answer was cut off"}
	}
	if len(body) > maxAnswerBytes {
		return nil, &Error{Status: resp.StatusCode, Msg: "the runner's answer is too large"}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &Error{Status: resp.StatusCode, Msg: fmt.Sprintf("the runner answered HTTP %d", resp.StatusCode)}
	}
	return body, nil
}

// postDirect is post over the direct client, with the same errors.
func (c *Client) postDirect(ctx context.Context, path string, raw []byte) ([]byte, error) {
	status, body, err := c.direct.post(ctx, path, raw)
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return nil, err
	case errors.Is(err, errTooLarge):
		return nil, &Error{Status: status, Msg: "the runner's answer is too large"}
	case status != 0:
		return nil, &Error{Status: status, Msg: "the runner's answer was cut off"}
	default:
		return nil, &Error{Msg: "the runner could not be reached"}
	}
	if status < 200 || status > 299 {
		return nil, &Error{Status: status, Msg: fmt.Sprintf("the runner answered HTTP %d", status)}
	}
	return body, nil
}
