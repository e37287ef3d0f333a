// Package ntfytest is an ntfy-compatible server on loopback for tests: it takes
// publishes as ntfy does (JSON at "/", header style at "/<topic>"), checks the access
// token, records what it received, can be told to fail or hang, and can press a
// message's action button the way the ntfy app does, so end-to-end tests answer a
// prompt from "the phone".
package ntfytest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/testkit/receivertest"
)

// maxBody bounds a publish the server reads (ntfy's own message limit is 4,096 bytes;
// JSON overhead and actions come on top).
const maxBody = 64 << 10

// Action is an action button as ntfy stores it.
type Action struct {
	Action  string            `json:"action"`
	Label   string            `json:"label"`
	URL     string            `json:"url"`
	Method  string            `json:"method,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	Clear   bool              `json:"clear,omitempty"`
}

// Message is one publish the server accepted.
type Message struct {
	ID         string
	Topic      string
	Title      string
	Message    string
	Priority   int
	Tags       []string
	Click      string
	Actions    []Action
	Markdown   bool
	SequenceID string
	// JSON reports a JSON publish at "/"; false is header style at "/<topic>".
	JSON bool
	// Fields are the JSON keys as sent (JSON publishes), for tests that check a field
	// was sent explicitly ("markdown": false).
	Fields []string
	// Token is the bearer token the publish carried ("" for none).
	Token  string
	Header http.Header
	Body   []byte
}

// Rejection is a publish refused for its token (401/403) or for being malformed (400).
type Rejection struct {
	Status int
	Reason string
}

// Fault is how the server misbehaves (receivertest.Fault): answer Status, or hang for
// Hang (until the client gives up or the server closes) and then answer Status (503).
type Fault = receivertest.Fault

// Status is a Fault that answers code.
func Status(code int) Fault { return receivertest.Status(code) }

// Hang is a Fault that holds the request for d: give it longer than the client's
// timeout to see the client time out.
func Hang(d time.Duration) Fault { return receivertest.Hang(d) }

// Server is the ntfy stand-in. Its methods are safe for concurrent use.
type Server struct {
	// URL is the server's root (http://127.0.0.1:port).
	URL string
	// Token, when not "", is the access token every publish must carry.
	Token string

	srv    *httptest.Server
	faults receivertest.Faults

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every recorded request
	messages   []Message
	rejections []Rejection
	seq        int
}

// New starts a server requiring token ("" for none), closed when the test ends.
func New(t testing.TB, token string) *Server {
	t.Helper()
	s := &Server{Token: token, changed: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// TopicURL is the URL of topic on this server, as a person enters it in settings.
func (s *Server) TopicURL(topic string) string { return s.URL + "/" + topic }

// Close stops the server, releasing hanging requests first.
func (s *Server) Close() {
	s.faults.Release()
	s.srv.Close()
}

// FailNext makes the next n publishes (past the token check) suffer f.
func (s *Server) FailNext(n int, f Fault) {
	s.faults.Set(n, f)
}

// FailAlways makes every publish suffer f until Recover.
func (s *Server) FailAlways(f Fault) { s.FailNext(-1, f) }

// Recover makes the server accept again.
func (s *Server) Recover() { s.FailNext(0, Fault{}) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		ntfyError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	token, hasToken := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if s.Token != "" && (!hasToken || token != s.Token) {
		// ntfy: a wrong token is 401, publishing to a protected topic without one 403.
		status := http.StatusForbidden
		if hasToken {
			status = http.StatusUnauthorized
		}
		s.record(func() { s.rejections = append(s.rejections, Rejection{Status: status, Reason: "bad or missing token"}) })
		ntfyError(w, status, http.StatusText(status))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		ntfyError(w, http.StatusRequestEntityTooLarge, "message too large")
		return
	}
	var m Message
	if r.URL.Path == "/" {
		m, err = parseJSON(body)
	} else {
		m, err = parseHeaders(r, body)
	}
	if err != nil {
		s.record(func() {
			s.rejections = append(s.rejections, Rejection{Status: http.StatusBadRequest, Reason: err.Error()})
		})
		ntfyError(w, http.StatusBadRequest, err.Error())
		return
	}
	m.Token, m.Header, m.Body = token, r.Header.Clone(), body

	if f, failing := s.faults.Take(); failing {
		ntfyError(w, s.faults.Hold(r.Context(), f), "ntfytest: injected failure")
		return
	}
	s.record(func() {
		s.seq++
		m.ID = fmt.Sprintf("msg%06d", s.seq)
		if m.SequenceID == "" {
			m.SequenceID = m.ID // ntfy: a message is its own sequence unless told otherwise
		}
		s.messages = append(s.messages, m)
	})
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": m.ID, "time": time.Now().Unix(), "event": "message", "topic": m.Topic,
		"title": m.Title, "message": m.Message, "sequence_id": m.SequenceID,
	})
}

// ntfyError answers as ntfy does: {"code","http","error"}.
func ntfyError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": status * 100, "http": status, "error": msg})
}

// parseJSON reads a JSON publish.
func parseJSON(body []byte) (Message, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return Message{}, fmt.Errorf("invalid JSON: %v", err)
	}
	var p struct {
		Topic      string   `json:"topic"`
		Title      string   `json:"title"`
		Message    string   `json:"message"`
		Priority   int      `json:"priority"`
		Tags       []string `json:"tags"`
		Click      string   `json:"click"`
		Actions    []Action `json:"actions"`
		Markdown   bool     `json:"markdown"`
		SequenceID string   `json:"sequence_id"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return Message{}, fmt.Errorf("invalid JSON: %v", err)
	}
	m := Message{
		Topic: p.Topic, Title: p.Title, Message: p.Message, Priority: p.Priority, Tags: p.Tags,
		Click: p.Click, Actions: p.Actions, Markdown: p.Markdown, SequenceID: p.SequenceID, JSON: true,
	}
	for k := range raw {
		m.Fields = append(m.Fields, k)
	}
	return m, check(m)
}

// parseHeaders reads a header-style publish to /<topic> or /<topic>/<sequence id>.
func parseHeaders(r *http.Request, body []byte) (Message, error) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) > 2 {
		return Message{}, fmt.Errorf("unknown path %q", r.URL.Path)
	}
	m := Message{Topic: parts[0], Message: string(body)}
	if len(parts) == 2 {
		m.SequenceID = parts[1]
	}
	get := func(names ...string) string {
		for _, n := range names {
			if v := r.Header.Get(n); v != "" {
				return v
			}
		}
		return ""
	}
	m.Title = get("X-Title", "Title", "ti", "t")
	m.Click = get("X-Click", "Click")
	if v := get("X-Sequence-ID", "Sequence-ID", "sid"); v != "" {
		m.SequenceID = v
	}
	if v := get("X-Tags", "Tags", "Tag", "ta"); v != "" {
		for _, tag := range strings.Split(v, ",") {
			m.Tags = append(m.Tags, strings.TrimSpace(tag))
		}
	}
	switch v := strings.ToLower(get("X-Markdown", "Markdown", "md")); v {
	case "yes", "true", "1":
		m.Markdown = true
	}
	if v := get("X-Priority", "Priority", "prio", "p"); v != "" {
		p, err := parsePriority(v)
		if err != nil {
			return Message{}, err
		}
		m.Priority = p
	}
	if v := get("X-Actions", "Actions", "Action"); v != "" {
		acts, err := parseActions(v)
		if err != nil {
			return Message{}, err
		}
		m.Actions = acts
	}
	return m, check(m)
}

func parsePriority(v string) (int, error) {
	switch strings.ToLower(v) {
	case "min":
		return 1, nil
	case "low":
		return 2, nil
	case "default":
		return 3, nil
	case "high":
		return 4, nil
	case "max", "urgent":
		return 5, nil
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < 1 || p > 5 {
		return 0, fmt.Errorf("invalid priority %q", v)
	}
	return p, nil
}

// parseActions reads the Actions header: a JSON array, or ntfy's short format
// ("view, Open, https://…; http, Approve, https://…, method=POST, clear=true").
// Quoted values with commas are not supported.
func parseActions(v string) ([]Action, error) {
	if strings.HasPrefix(strings.TrimSpace(v), "[") {
		var acts []Action
		if err := json.Unmarshal([]byte(v), &acts); err != nil {
			return nil, fmt.Errorf("invalid actions JSON: %v", err)
		}
		return acts, nil
	}
	var acts []Action
	for _, def := range strings.Split(v, ";") {
		var a Action
		positional := 0
		for _, part := range strings.Split(def, ",") {
			part = strings.TrimSpace(part)
			key, val, isKV := strings.Cut(part, "=")
			if !isKV || strings.Contains(key, "/") || strings.Contains(key, ":") {
				// Positional: action, label, url (a URL may hold "=").
				switch positional {
				case 0:
					a.Action = part
				case 1:
					a.Label = part
				case 2:
					a.URL = part
				}
				positional++
				continue
			}
			key = strings.TrimSpace(key)
			switch lower := strings.ToLower(key); {
			case lower == "action":
				a.Action = val
			case lower == "label":
				a.Label = val
			case lower == "url":
				a.URL = val
			case lower == "method":
				a.Method = val
			case lower == "body":
				a.Body = val
			case lower == "clear":
				a.Clear = val == "true" || val == "yes" || val == "1"
			case strings.HasPrefix(lower, "headers."):
				if a.Headers == nil {
					a.Headers = map[string]string{}
				}
				a.Headers[key[len("headers."):]] = val
			}
		}
		acts = append(acts, a)
	}
	return acts, nil
}

// check applies the rules ntfy enforces that a sender could get wrong.
func check(m Message) error {
	if m.Topic == "" {
		return fmt.Errorf("topic missing")
	}
	if len(m.Actions) > 3 {
		return fmt.Errorf("too many actions (%d, ntfy allows 3)", len(m.Actions))
	}
	for _, a := range m.Actions {
		if a.Action != "view" && a.Action != "http" && a.Action != "broadcast" {
			return fmt.Errorf("unknown action %q", a.Action)
		}
		if a.Label == "" || (a.Action != "broadcast" && a.URL == "") {
			return fmt.Errorf("action %q needs a label and a URL", a.Action)
		}
	}
	if len(m.SequenceID) > 64 || strings.IndexFunc(m.SequenceID, func(r rune) bool {
		return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) >= 0 {
		return fmt.Errorf("sequence ID invalid")
	}
	return nil
}

// record applies change under the lock and wakes waiters.
func (s *Server) record(change func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	change()
	close(s.changed)
	s.changed = make(chan struct{})
}

// Messages returns the accepted publishes, in arrival order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Shown returns what a phone subscribed to topic shows: one notification per sequence
// id, the latest publish replacing earlier ones (ntfy ≥ 2.16), in first-seen order.
func (s *Server) Shown(topic string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var order []string
	latest := map[string]Message{}
	for _, m := range s.messages {
		if m.Topic != topic {
			continue
		}
		if _, seen := latest[m.SequenceID]; !seen {
			order = append(order, m.SequenceID)
		}
		latest[m.SequenceID] = m
	}
	out := make([]Message, 0, len(order))
	for _, id := range order {
		out = append(out, latest[id])
	}
	return out
}

// Rejections returns the publishes refused for their token or form.
func (s *Server) Rejections() []Rejection {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Rejection(nil), s.rejections...)
}

// WaitFor returns the first accepted message match reports, waiting up to timeout; the
// test fails at the deadline.
func (s *Server) WaitFor(t testing.TB, match func(Message) bool, timeout time.Duration) Message {
	t.Helper()
	var found Message
	s.wait(t, timeout, "a matching message", func() bool {
		for _, m := range s.messages {
			if match(m) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// WaitCount waits up to timeout until at least n messages were accepted and returns
// them; the test fails at the deadline.
func (s *Server) WaitCount(t testing.TB, n int, timeout time.Duration) []Message {
	t.Helper()
	s.wait(t, timeout, fmt.Sprintf("%d messages", n), func() bool { return len(s.messages) >= n })
	return s.Messages()
}

func (s *Server) wait(t testing.TB, timeout time.Duration, what string, done func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok, changed := done(), s.changed
		got, rejected := len(s.messages), len(s.rejections)
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("ntfytest: no %s within %v (%d accepted, %d rejected)", what, timeout, got, rejected)
			return
		}
	}
}

// PressAction does what the ntfy app does when the button labelled label is tapped:
// for "http", the request the action describes (method, default POST; headers; body);
// for "view", a GET of its URL. Redirects are not followed, so the test sees exactly
// what the server answered. The response's body is read in full and can be read again
// by the caller; nothing needs closing.
func PressAction(t testing.TB, m Message, label string) *http.Response {
	t.Helper()
	var act *Action
	for i := range m.Actions {
		if m.Actions[i].Label == label {
			act = &m.Actions[i]
		}
	}
	if act == nil {
		t.Fatalf("ntfytest: message %q has no action %q (has %v)", m.Title, label, labels(m.Actions))
	}
	method := http.MethodGet
	var body io.Reader
	switch act.Action {
	case "view":
	case "http":
		method = http.MethodPost
		if act.Method != "" {
			method = act.Method
		}
		body = strings.NewReader(act.Body)
	default:
		t.Fatalf("ntfytest: cannot press a %q action", act.Action)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, act.URL, body)
	if err != nil {
		t.Fatalf("ntfytest: action %q: %v", label, err)
	}
	req.Header.Set("User-Agent", "ntfytest (ntfy app stand-in)")
	for k, v := range act.Headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("ntfytest: pressing %q: %v", label, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("ntfytest: pressing %q: reading the answer: %v", label, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp
}

func labels(acts []Action) []string {
	var out []string
	for _, a := range acts {
		out = append(out, a.Label)
	}
	return out
}

// NewTopic returns a fresh, unguessable topic name (on a real server the topic is the
// password).
func NewTopic() string { return "gatehouse-" + strings.ToLower(rand.Text()[:16]) }
