package testserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Client talks to a test server as one user (User empty: no identity header).
type Client struct {
	Base string
	User string
	HC   *http.Client
}

// Client returns a client for user ("" sends no identity header). Its /v1 requests
// and responses are checked against the described API (api/openapi.yaml): a violation
// fails the test that made the request (see openAPIValidator).
func (s *Server) Client(user string) *Client {
	hc := &http.Client{}
	if s.openapi != nil {
		hc.Transport = s.openapi
	}
	return &Client{Base: s.URL, User: user, HC: hc}
}

// Response is a finished HTTP exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a map (failing the test when it is not a JSON object).
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response %d is not a JSON object: %v\n%s", r.Status, err, r.Body)
	}
	return m
}

// Do sends a request with a JSON body (v may be nil, []byte or a value to encode).
func (c *Client) Do(t testing.TB, method, path string, v any) *Response {
	t.Helper()
	return c.DoCtx(context.Background(), t, method, path, v)
}

// DoCtx is Do with a context (to cancel a parked request).
func (c *Client) DoCtx(ctx context.Context, t testing.TB, method, path string, v any) *Response {
	t.Helper()
	ctx, sink := withViolationSink(ctx)
	resp, err := c.send(ctx, method, path, v, "application/json")
	sink.report(t)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// Send is Do without failing the test on transport errors (for background goroutines).
func (c *Client) Send(ctx context.Context, method, path string, v any) (*Response, error) {
	return c.send(ctx, method, path, v, "application/json")
}

// SendRaw posts a raw body with a given content type.
func (c *Client) SendRaw(ctx context.Context, method, path, contentType string, body []byte) (*Response, error) {
	return c.send(ctx, method, path, body, contentType)
}

func (c *Client) send(ctx context.Context, method, path string, v any, contentType string) (*Response, error) {
	var body io.Reader
	switch b := v.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
	case string:
		body = strings.NewReader(b)
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, body)
	if err != nil {
		return nil, err
	}
	if body != nil && contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.User != "" {
		req.Header.Set("X-Forwarded-Email", c.User)
	}
	resp, err := c.HC.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}, nil
}

// CreateAgent registers an agent and returns its id.
func (c *Client) CreateAgent(t testing.TB) string {
	t.Helper()
	r := c.Do(t, http.MethodPost, "/v1/agents", map[string]any{"name": "test-agent"})
	if r.Status != http.StatusCreated {
		t.Fatalf("create agent: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)["id"].(string)
}

// CreateSession creates a session (a child when parent is not empty) and returns its id.
func (c *Client) CreateSession(t testing.TB, agentID, parent, title string) string {
	t.Helper()
	body := map[string]any{"agent_id": agentID}
	if parent != "" {
		body["parent_session_id"] = parent
	}
	if title != "" {
		body["title"] = title
	}
	r := c.Do(t, http.MethodPost, "/v1/sessions", body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create session: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)["id"].(string)
}

// Frame is one SSE frame.
type Frame struct {
	Event string
	ID    string
	Data  string
}

// Map decodes the frame's data as a JSON object.
func (f Frame) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(f.Data), &m); err != nil {
		t.Fatalf("frame %s data is not JSON: %v: %s", f.Event, err, f.Data)
	}
	return m
}

// Stream is an open SSE subscription.
type Stream struct {
	frames chan Frame
	cancel context.CancelFunc
	Header http.Header
}

// OpenStream subscribes to path (e.g. /v1/sessions/{id}/stream) and waits for the first
// frame, which must be the heartbeat unless query asks for a replay.
func (c *Client) OpenStream(t testing.TB, path string) *Stream {
	t.Helper()
	s, refused := c.TryOpenStream(t, path)
	if refused != nil {
		t.Fatalf("open stream %s: %d %s", path, refused.Status, refused.Body)
	}
	return s
}

// TryOpenStream is OpenStream for a stream the server may refuse: it returns either the
// open stream or the refusal (any status but 200, body read whole).
func (c *Client) TryOpenStream(t testing.TB, path string) (*Stream, *Response) {
	t.Helper()
	ctx, sink := withViolationSink(context.Background())
	defer sink.report(t)
	ctx, cancel := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+path, nil)
	if c.User != "" {
		req.Header.Set("X-Forwarded-Email", c.User)
	}
	resp, err := c.HC.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("open stream %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		return nil, &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	}
	s := &Stream{frames: make(chan Frame, 1024), cancel: cancel, Header: resp.Header}
	go func() {
		defer resp.Body.Close()
		defer close(s.frames)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
		var f Frame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if f.Event != "" || f.Data != "" {
					s.frames <- f
				}
				f = Frame{}
			case strings.HasPrefix(line, "event: "):
				f.Event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				f.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				if f.Data != "" {
					f.Data += "\n"
				}
				f.Data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	t.Cleanup(s.Close)
	return s, nil
}

// Close ends the subscription.
func (s *Stream) Close() { s.cancel() }

// Frames delivers the stream's frames as they arrive (closed when the stream ends), for
// a test that waits for a frame or for something else, whichever comes first.
func (s *Stream) Frames() <-chan Frame { return s.frames }

// Next returns the next frame, failing the test after the deadline.
func (s *Stream) Next(t testing.TB, within time.Duration) Frame {
	t.Helper()
	select {
	case f, ok := <-s.frames:
		if !ok {
			t.Fatalf("stream closed")
		}
		return f
	case <-time.After(within):
		t.Fatalf("no stream frame within %s", within)
	}
	return Frame{}
}

// WaitFor returns the next frame of the given event type, skipping heartbeats and
// other events, failing the test after the deadline.
func (s *Stream) WaitFor(t testing.TB, event string, within time.Duration) Frame {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case f, ok := <-s.frames:
			if !ok {
				t.Fatalf("stream closed while waiting for %s", event)
			}
			if f.Event == event {
				return f
			}
		case <-deadline:
			t.Fatalf("no %s frame within %s", event, within)
		}
	}
}

// WaitClosed waits until the server ends the stream (frames sent before the end are
// skipped), failing the test after the deadline.
func (s *Stream) WaitClosed(t testing.TB, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case _, ok := <-s.frames:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("stream still open after %s", within)
		}
	}
}

// FramesUntilClosed waits until the server ends the stream and returns every frame it
// sent before the end, failing the test after the deadline.
func (s *Stream) FramesUntilClosed(t testing.TB, within time.Duration) []Frame {
	t.Helper()
	deadline := time.After(within)
	var got []Frame
	for {
		select {
		case f, ok := <-s.frames:
			if !ok {
				return got
			}
			got = append(got, f)
		case <-deadline:
			t.Fatalf("stream still open after %s (frames so far: %v)", within, got)
		}
	}
}

// WaitHeartbeat waits for the first heartbeat: after it, nothing published is missed.
func (s *Stream) WaitHeartbeat(t testing.TB) {
	t.Helper()
	s.WaitFor(t, "session.heartbeat", 10*time.Second)
}
