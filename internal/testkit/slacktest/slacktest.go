// Package slacktest is a stand-in for the parts of Slack that Gatehouse talks to, for
// tests: the Web API methods the Slack channel calls (reached through slack-go's API URL
// option) and response URLs; and requests to the interactivity endpoint signed exactly
// as Slack signs them.
package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// WaitTimeout bounds every Wait helper: a test fails instead of hanging.
const WaitTimeout = 10 * time.Second

// User is a member of the stand-in's workspace.
type User struct {
	ID    string
	Email string
	Name  string
	// Deleted and IsBot are the users.info flags of the same names.
	Deleted bool
	IsBot   bool
}

// Message is one chat.postMessage or chat.update the stand-in accepted.
type Message struct {
	Method  string
	Channel string
	TS      string
	Text    string
	// Blocks is the message's Block Kit JSON as sent.
	Blocks json.RawMessage
	// Form is every parameter of the call (token removed).
	Form map[string]string
}

// Reply is one message posted to a response URL.
type Reply struct {
	Path string
	Body map[string]any
}

// Text returns the reply's text.
func (r Reply) Text() string { s, _ := r.Body["text"].(string); return s }

// failure is a scripted answer to the next call.
type failure struct {
	status     int
	retryAfter int
	code       string
}

// Server is the stand-in Slack. Its zero value is not usable; call Start.
type Server struct {
	// URL is the Web API base for slack.OptionAPIURL (it ends in "/").
	URL string
	// Token is the bot token the stand-in accepts.
	Token string
	srv   *httptest.Server

	mu       sync.Mutex
	users    map[string]User
	posted   []Message
	updated  []Message
	replies  []Reply
	calls    map[string]int
	failures []failure
	seq      int
	// changed is closed (and replaced) whenever something is recorded, to wake waiters.
	changed chan struct{}
}

// Start runs the stand-in on a loopback port until the test ends. token is the bot
// token it accepts ("xoxb-…").
func Start(t testing.TB, token string) *Server {
	t.Helper()
	s := &Server{Token: token, users: map[string]User{}, calls: map[string]int{}, changed: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/api/"
	t.Cleanup(s.srv.Close)
	return s
}

// AddUser adds a member, found by users.lookupByEmail and users.info.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = u
}

// ResponseURL is a response URL on the stand-in, for interaction payloads; what is
// posted there is recorded as a Reply.
func (s *Server) ResponseURL(id string) string {
	return s.srv.URL + "/response/" + id
}

// FailNext makes the next n Web API calls answer HTTP status (e.g. 500) with an HTML
// body, as Slack's front end does.
func (s *Server) FailNext(n, status int) { s.script(n, failure{status: status}) }

// RateLimitNext makes the next n Web API calls answer 429 with Retry-After seconds.
func (s *Server) RateLimitNext(n, retryAfter int) {
	s.script(n, failure{status: http.StatusTooManyRequests, retryAfter: retryAfter})
}

// ErrorNext makes the next n Web API calls answer {"ok":false,"error":code}.
func (s *Server) ErrorNext(n int, code string) {
	s.script(n, failure{status: http.StatusOK, code: code})
}

func (s *Server) script(n int, f failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures = append(s.failures, f)
	}
}

// Calls is how many times method was called (failed calls included).
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Posted returns the messages posted so far.
func (s *Server) Posted() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.posted...)
}

// Updated returns the chat.update calls accepted so far.
func (s *Server) Updated() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.updated...)
}

// WaitPosted waits until at least n messages were posted and returns them.
func (s *Server) WaitPosted(t testing.TB, n int) []Message {
	t.Helper()
	s.wait(t, fmt.Sprintf("%d posted messages", n), func() bool { return len(s.posted) >= n })
	return s.Posted()
}

// WaitUpdated waits until at least n messages were updated and returns the updates.
func (s *Server) WaitUpdated(t testing.TB, n int) []Message {
	t.Helper()
	s.wait(t, fmt.Sprintf("%d message updates", n), func() bool { return len(s.updated) >= n })
	return s.Updated()
}

// WaitReplies waits until at least n replies reached response URLs and returns them.
func (s *Server) WaitReplies(t testing.TB, n int) []Reply {
	t.Helper()
	s.wait(t, fmt.Sprintf("%d response URL replies", n), func() bool { return len(s.replies) >= n })
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Reply(nil), s.replies...)
}

// wait blocks until done (called under the lock) holds, or fails t after WaitTimeout.
func (s *Server) wait(t testing.TB, what string, done func() bool) {
	t.Helper()
	deadline := time.NewTimer(WaitTimeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok, ch := done(), s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("slacktest: no %s within %s", what, WaitTimeout)
		}
	}
}

// notify wakes waiters; called with the lock held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if id, ok := strings.CutPrefix(r.URL.Path, "/response/"); ok {
		s.serveResponseURL(w, r, id)
		return
	}
	method, ok := strings.CutPrefix(r.URL.Path, "/api/")
	if !ok || r.Method != http.MethodPost && r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[method]++
	if len(s.failures) > 0 {
		f := s.failures[0]
		s.failures = s.failures[1:]
		switch {
		case f.code != "":
			answer(w, map[string]any{"ok": false, "error": f.code})
		case f.retryAfter > 0:
			w.Header().Set("Retry-After", strconv.Itoa(f.retryAfter))
			answerStatus(w, f.status, map[string]any{"ok": false, "error": "ratelimited"})
		default:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(f.status)
			_, _ = w.Write([]byte("<html><body>Slack is having trouble</body></html>"))
		}
		return
	}
	// Slack takes the token from the Authorization header or, as slack-go sends it
	// for form-encoded methods, from the token parameter.
	token := r.PostForm.Get("token")
	if h, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		token = h
	}
	switch {
	case token == "":
		answer(w, map[string]any{"ok": false, "error": "not_authed"})
		return
	case token != s.Token:
		answer(w, map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	switch method {
	case "users.lookupByEmail":
		for _, u := range s.users {
			if strings.EqualFold(u.Email, r.PostForm.Get("email")) && !u.Deleted {
				answer(w, map[string]any{"ok": true, "user": userJSON(u)})
				return
			}
		}
		answer(w, map[string]any{"ok": false, "error": "users_not_found"})
	case "users.info":
		u, ok := s.users[r.PostForm.Get("user")]
		if !ok {
			answer(w, map[string]any{"ok": false, "error": "user_not_found"})
			return
		}
		answer(w, map[string]any{"ok": true, "user": userJSON(u)})
	case "chat.postMessage":
		s.postMessage(w, r)
	case "chat.update":
		s.update(w, r)
	default:
		answerStatus(w, http.StatusNotFound, map[string]any{"ok": false, "error": "unknown_method"})
	}
}

// postMessage accepts a message to a member (their DM channel is "D" + the user ID
// without its "U") or to a DM channel it opened before.
func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	ch := r.PostForm.Get("channel")
	dm := ""
	if u, ok := s.users[ch]; ok && !u.Deleted {
		dm = "D" + strings.TrimPrefix(u.ID, "U")
	} else if strings.HasPrefix(ch, "D") {
		for _, u := range s.users {
			if "D"+strings.TrimPrefix(u.ID, "U") == ch {
				dm = ch
			}
		}
	}
	if dm == "" {
		answer(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	m, errCode := message("chat.postMessage", r)
	if errCode != "" {
		answer(w, map[string]any{"ok": false, "error": errCode})
		return
	}
	s.seq++
	m.Channel, m.TS = dm, fmt.Sprintf("1764590000.%06d", s.seq)
	s.posted = append(s.posted, m)
	s.notify()
	answer(w, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS,
		"message": map[string]any{"type": "message", "text": m.Text, "ts": m.TS, "blocks": m.Blocks}})
}

// update replaces a message the stand-in posted.
func (s *Server) update(w http.ResponseWriter, r *http.Request) {
	ch, ts := r.PostForm.Get("channel"), r.PostForm.Get("ts")
	found := false
	for _, p := range s.posted {
		found = found || p.Channel == ch && p.TS == ts
	}
	if !found {
		answer(w, map[string]any{"ok": false, "error": "message_not_found"})
		return
	}
	m, errCode := message("chat.update", r)
	if errCode != "" {
		answer(w, map[string]any{"ok": false, "error": errCode})
		return
	}
	m.Channel, m.TS = ch, ts
	s.updated = append(s.updated, m)
	s.notify()
	answer(w, map[string]any{"ok": true, "channel": ch, "ts": ts, "text": m.Text})
}

// message reads a chat.* call; blocks must be a JSON array, as Slack requires.
func message(method string, r *http.Request) (Message, string) {
	m := Message{Method: method, Text: r.PostForm.Get("text"), Form: map[string]string{}}
	for k := range r.PostForm {
		if k != "token" {
			m.Form[k] = r.PostForm.Get(k)
		}
	}
	if b := r.PostForm.Get("blocks"); b != "" {
		var arr []json.RawMessage
		if err := json.Unmarshal([]byte(b), &arr); err != nil {
			return m, "invalid_blocks"
		}
		m.Blocks = json.RawMessage(b)
	}
	if m.Text == "" && m.Blocks == nil {
		return m, "no_text"
	}
	return m, ""
}

func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request, id string) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.replies = append(s.replies, Reply{Path: id, Body: body})
	s.notify()
	s.mu.Unlock()
	answer(w, map[string]any{"ok": true})
}

func userJSON(u User) map[string]any {
	return map[string]any{"id": u.ID, "name": u.Name, "deleted": u.Deleted, "is_bot": u.IsBot,
		"profile": map[string]any{"email": u.Email, "real_name": u.Name}}
}

func answer(w http.ResponseWriter, v any) { answerStatus(w, http.StatusOK, v) }

func answerStatus(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
