package opencode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/bridge/opencode"
	"github.com/gatehouse-dev/gatehouse/internal/hookclient"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
	"github.com/gatehouse-dev/gatehouse/models"
)

// fakeOpenCode is OpenCode's server as the bridge uses it: an event stream the test
// writes to, the pending list, sessions with their parents, and the replies it got.
type fakeOpenCode struct {
	*httptest.Server
	mu       sync.Mutex
	pending  []map[string]any
	sessions map[string]map[string]any
	replies  map[string]map[string]any
	streams  []chan string // one per open stream; closing it ends that stream
	lists    int
	changed  chan struct{}
}

func newFakeOpenCode(t *testing.T) *fakeOpenCode {
	f := &fakeOpenCode{sessions: map[string]map[string]any{}, replies: map[string]map[string]any{}, changed: make(chan struct{})}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.mu.Lock()
		for _, s := range f.streams {
			close(s)
		}
		f.streams = nil
		f.mu.Unlock()
		f.Close()
	})
	return f
}

func (f *fakeOpenCode) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeOpenCode) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/event":
		ch := make(chan string, 16)
		f.mu.Lock()
		f.streams = append(f.streams, ch)
		f.notifyLocked()
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"type\":\"server.connected\",\"properties\":{}}\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case ev, ok := <-ch:
				if !ok {
					return
				}
				fmt.Fprintf(w, "data: %s\n\n", ev)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case r.Method == http.MethodGet && r.URL.Path == "/permission":
		f.mu.Lock()
		f.lists++
		raw, _ := json.Marshal(f.pending)
		f.notifyLocked()
		f.mu.Unlock()
		_, _ = w.Write(raw)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/session/"):
		f.mu.Lock()
		s, ok := f.sessions[strings.TrimPrefix(r.URL.Path, "/session/")]
		f.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(s)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/reply"):
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/permission/"), "/reply")
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, p := range f.pending {
			if p["id"] == id {
				f.pending = append(f.pending[:i], f.pending[i+1:]...)
				f.replies[id] = body
				f.notifyLocked()
				_, _ = io.WriteString(w, "true")
				return
			}
		}
		http.NotFound(w, r)
	default:
		http.NotFound(w, r)
	}
}

// ask adds a pending request and, when announce, sends its permission.asked event.
func (f *fakeOpenCode) ask(p map[string]any, announce bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending = append(f.pending, p)
	if announce {
		f.sendLocked(map[string]any{"type": "permission.asked", "properties": p})
	}
}

func (f *fakeOpenCode) sendLocked(ev map[string]any) {
	raw, _ := json.Marshal(ev)
	for _, s := range f.streams {
		s <- string(raw)
	}
}

// answerHere answers request id in OpenCode itself, as its UI does.
func (f *fakeOpenCode) answerHere(id, session string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, p := range f.pending {
		if p["id"] == id {
			f.pending = append(f.pending[:i], f.pending[i+1:]...)
		}
	}
	f.sendLocked(map[string]any{"type": "permission.replied", "properties": map[string]any{"sessionID": session, "requestID": id, "reply": "once"}})
}

// dropStreams ends every open stream (OpenCode restarting, a proxy cutting it).
func (f *fakeOpenCode) dropStreams() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.streams {
		close(s)
	}
	f.streams = nil
}

// waitFor waits until cond holds of the fake's state.
func (f *fakeOpenCode) waitFor(t *testing.T, what string, cond func(f *fakeOpenCode) bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		f.mu.Lock()
		ok, ch := cond(f), f.changed
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func bashAsk(id, session, command string) map[string]any {
	return map[string]any{"id": id, "sessionID": session, "permission": "bash", "patterns": []any{command},
		"metadata": map[string]any{"command": command}, "always": []any{"touch *"},
		"tool": map[string]any{"messageID": "msg_1", "callID": "call_1"}}
}

// run starts a bridge from OpenCode fake f to Gatehouse srv until the test ends.
func run(t *testing.T, f *fakeOpenCode, srv *testserver.Server) {
	t.Helper()
	b, err := opencode.New(opencode.Options{Server: f.URL, Directory: "/w/proj",
		Gatehouse: hookclient.Options{BaseURL: srv.URL}, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// pendingPrompt waits for the one pending prompt of the caller's sessions.
func pendingPrompt(t *testing.T, srv *testserver.Server) (string, models.Elicitation) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		list, _ := srv.Client("").Do(t, http.MethodGet, "/v1/sessions", nil).JSON(t)["sessions"].([]any)
		for _, s := range list {
			m := s.(map[string]any)
			if m["parent_session_id"] != nil {
				continue
			}
			sess, err := srv.App.Store.GetSession(ctx, m["id"].(string))
			if err != nil {
				t.Fatal(err)
			}
			pending, err := srv.App.Store.PendingInSubtree(ctx, sess.Path)
			if err != nil {
				t.Fatal(err)
			}
			if len(pending) > 0 {
				return sess.ID, pending[0]
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no pending prompt")
	return "", models.Elicitation{}
}

func status(t *testing.T, srv *testserver.Server, sid, eid string) map[string]any {
	t.Helper()
	return srv.Client("").Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t)
}

// TestBridgeAnswersAndReconnects: a request asked before the bridge connected is
// parked from the list; the verdict is replied once; after the stream drops the
// bridge reconnects, lists again and parks a request asked on the new stream.
func TestBridgeAnswersAndReconnects(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t))
		f := newFakeOpenCode(t)
		f.sessions["ses_a"] = map[string]any{"id": "ses_a", "directory": "/w/proj"}
		f.ask(bashAsk("per_1", "ses_a", "touch one"), false)
		run(t, f, srv)

		sid, prompt := pendingPrompt(t, srv)
		if p := prompt.DecodeParams().All; p["command"] != "touch one" || p["cwd"] != "/w/proj" {
			t.Fatalf("params = %v", p)
		}
		srv.Client("").Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+prompt.ID+"/resolve",
			map[string]any{"action": "accept", "content": map[string]any{"remember": true}})
		f.waitFor(t, "the reply", func(f *fakeOpenCode) bool { return f.replies["per_1"] != nil })
		if got := f.replies["per_1"]["reply"]; got != "always" {
			t.Fatalf("reply = %v", f.replies["per_1"])
		}

		f.dropStreams()
		f.waitFor(t, "a reconnect", func(f *fakeOpenCode) bool { return len(f.streams) == 1 && f.lists >= 2 })
		f.ask(bashAsk("per_2", "ses_a", "touch two"), true)
		sid, prompt = pendingPrompt(t, srv)
		srv.Client("").Do(t, http.MethodPost, "/v1/sessions/"+sid+"/elicitations/"+prompt.ID+"/resolve",
			map[string]any{"action": "decline", "content": map[string]any{"feedback": "not now"}})
		f.waitFor(t, "the second reply", func(f *fakeOpenCode) bool { return f.replies["per_2"] != nil })
		if r := f.replies["per_2"]; r["reply"] != "reject" || r["message"] != "not now" {
			t.Fatalf("reply = %v", r)
		}
	})
}

// TestBridgeWithdrawsAnsweredElsewhere: a request answered in OpenCode's own UI has
// its prompt withdrawn at once (not after the disconnect grace), and the bridge
// replies nothing.
func TestBridgeWithdrawsAnsweredElsewhere(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		srv := testserver.Start(t, db.NewURL(t), "--disconnect-grace", "10m")
		f := newFakeOpenCode(t)
		f.sessions["ses_a"] = map[string]any{"id": "ses_a"}
		run(t, f, srv)
		f.waitFor(t, "the stream", func(f *fakeOpenCode) bool { return len(f.streams) == 1 })
		f.ask(bashAsk("per_1", "ses_a", "touch one"), true)
		sid, prompt := pendingPrompt(t, srv)
		f.answerHere("per_1", "ses_a")
		deadline := time.Now().Add(20 * time.Second)
		for status(t, srv, sid, prompt.ID)["status"] == "pending" {
			if time.Now().After(deadline) {
				t.Fatal("the prompt of a request answered in OpenCode is still pending")
			}
			time.Sleep(10 * time.Millisecond)
		}
		row, err := srv.App.Store.GetElicitation(context.Background(), prompt.ID)
		if err != nil || row.Action == nil || *row.Action != models.ActionCancel {
			t.Fatalf("withdrawn prompt = %+v, %v", row, err)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.replies) != 0 {
			t.Fatalf("the bridge replied to a request answered elsewhere: %v", f.replies)
		}
	})
}

// TestBridgeSubAgentAndRefusal: a sub-agent's request (its session's parentID chain
// leads to ses_root) parks under ses_root's session; a request Gatehouse refuses as
// malformed is rejected in OpenCode with the reason, never left to run.
func TestBridgeSubAgentAndRefusal(t *testing.T) {
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t))
	f := newFakeOpenCode(t)
	f.sessions["ses_root"] = map[string]any{"id": "ses_root", "directory": "/w/proj"}
	f.sessions["ses_mid"] = map[string]any{"id": "ses_mid", "parentID": "ses_root", "directory": "/w/proj"}
	f.sessions["ses_leaf"] = map[string]any{"id": "ses_leaf", "parentID": "ses_mid", "directory": "/w/proj"}
	run(t, f, srv)
	f.waitFor(t, "the stream", func(f *fakeOpenCode) bool { return len(f.streams) == 1 })
	f.ask(bashAsk("per_1", "ses_leaf", "touch x"), true)
	sid, prompt := pendingPrompt(t, srv)
	root := srv.Client("").Do(t, http.MethodGet, "/v1/sessions/"+sid, nil).JSON(t)
	sub := srv.Client("").Do(t, http.MethodGet, "/v1/sessions/"+prompt.SessionID, nil).JSON(t)
	if !strings.HasPrefix(root["title"].(string), "OpenCode ses_root") || sub["title"] != "subagent:ses_leaf" || sub["parent_session_id"] != sid {
		t.Fatalf("root %v, sub-agent %v", root, sub)
	}

	bad := bashAsk("per_bad", "ses_root", "ls")
	bad["metadata"] = map[string]any{}
	f.ask(bad, true)
	f.waitFor(t, "the refusal", func(f *fakeOpenCode) bool { return f.replies["per_bad"] != nil })
	if r := f.replies["per_bad"]; r["reply"] != "reject" || !strings.Contains(r["message"].(string), "metadata.command") {
		t.Fatalf("reply = %v", r)
	}
}
