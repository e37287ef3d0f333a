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
	hc   *http.Client
}

// New returns a client for the runner at base (scheme://host[:port][/prefix]). hc may
// be nil. Requests are bounded by their context, not by a client-wide timeout: a
// tool may legitimately run for minutes while its caller waits.
func New(base string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--runner-url: want an http(s) URL, got %q", base)
	}
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			MaxIdleConnsPerHost:   32,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		}}
	}
	return &Client{base: strings.TrimRight(base, "/"), hc: hc}, nil
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
func (c *Client) Execute(ctx context.Context, sid, method string, params any) (json.RawMessage, error) {
	body, err := c.post(ctx, sid, "/mcp/execute", map[string]any{"method": method, "params": params})
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

func (c *Client) post(ctx context.Context, sid, suffix string, payload any) ([]byte, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("runner: encode request: %w", err)
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
