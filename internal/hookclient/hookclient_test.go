package hookclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/ids"
)

const verdict = `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`

// recorder is a stub server answering each request with the next of answers (the last
// repeats) and recording the re-attach ids it was sent.
type recorder struct {
	mu      sync.Mutex
	answers []func(w http.ResponseWriter)
	eids    []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(req.Body).Decode(&body)
	r.mu.Lock()
	eid, _ := body[ReattachField].(string)
	r.eids = append(r.eids, eid)
	a := r.answers[min(len(r.eids), len(r.answers))-1]
	r.mu.Unlock()
	a(w)
}

func closingNoVerdict(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusOK)
}

func forward(t *testing.T, url string, payload string) Outcome {
	t.Helper()
	return Forward(context.Background(), Options{Agent: claudeAgent(t), BaseURL: url, ReattachFor: 5 * time.Second,
		Sleep: func(context.Context, time.Duration) error { return nil }}, []byte(payload))
}

// A "no verdict" that closes the connection (a server shutting down) is followed by a
// re-attach with the same id; a plain "no verdict" is final.
func TestClosingNoVerdictReattaches(t *testing.T) {
	rec := &recorder{answers: []func(http.ResponseWriter){closingNoVerdict, func(w http.ResponseWriter) { _, _ = io.WriteString(w, verdict) }}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	out := forward(t, srv.URL, `{"hook_event_name":"PermissionRequest","session_id":"s"}`)
	if out.Err != nil || string(out.Answer) != verdict {
		t.Fatalf("outcome = %q, %v", out.Answer, out.Err)
	}
	if len(rec.eids) != 2 || rec.eids[0] != rec.eids[1] || !ids.ValidReattach(rec.eids[0]) || !strings.HasPrefix(rec.eids[0], "elicit_claude_") {
		t.Fatalf("re-attach ids = %v, want the same valid id twice", rec.eids)
	}

	always := &recorder{answers: []func(http.ResponseWriter){closingNoVerdict}}
	srv2 := httptest.NewServer(always)
	defer srv2.Close()
	out = forward(t, srv2.URL, `{"hook_event_name":"PermissionRequest"}`)
	if out.Err != nil || out.Answer != nil || len(always.eids) != maxClosingNoVerdicts+1 {
		t.Fatalf("a server that always closes: outcome %q %v after %d requests", out.Answer, out.Err, len(always.eids))
	}

	plain := &recorder{answers: []func(http.ResponseWriter){func(w http.ResponseWriter) { w.WriteHeader(http.StatusOK) }}}
	srv3 := httptest.NewServer(plain)
	defer srv3.Close()
	if out = forward(t, srv3.URL, `{}`); out.Err != nil || out.Answer != nil || len(plain.eids) != 1 {
		t.Fatalf("plain no verdict: %q %v after %d requests", out.Answer, out.Err, len(plain.eids))
	}
}

// A 503 is retried (the server is restarting); a 401 is not.
func TestUnavailableIsRetriedUnauthorizedIsNot(t *testing.T) {
	rec := &recorder{answers: []func(http.ResponseWriter){
		func(w http.ResponseWriter) { http.Error(w, "", http.StatusServiceUnavailable) },
		func(w http.ResponseWriter) { _, _ = io.WriteString(w, verdict) }}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	if out := forward(t, srv.URL, `{}`); string(out.Answer) != verdict {
		t.Fatalf("after a 503: %q %v", out.Answer, out.Err)
	}
	un := &recorder{answers: []func(http.ResponseWriter){func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"code":"unauthorized","message":"sign in"}}`)
	}}}
	srv2 := httptest.NewServer(un)
	defer srv2.Close()
	out := forward(t, srv2.URL, `{}`)
	if out.Err == nil || !strings.Contains(out.Err.Error(), "401: sign in") || len(un.eids) != 1 || !Permanent(out.Err) {
		t.Fatalf("401: %v after %d requests", out.Err, len(un.eids))
	}

	// A server that stays down is not Permanent: a bridge tries again later.
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	out = Forward(context.Background(), Options{Agent: claudeAgent(t), BaseURL: down.URL, ConnectWindow: time.Millisecond,
		Sleep: func(context.Context, time.Duration) error { return nil }}, []byte(`{}`))
	if out.Err == nil || Permanent(out.Err) {
		t.Fatalf("unreachable: %v, permanent %v", out.Err, Permanent(out.Err))
	}
}

// A 429 (a per-person limit) is a RefusedError carrying the server's message, and is
// not retried: it would only be refused again.
func TestTooManyRequestsIsARefusal(t *testing.T) {
	rec := &recorder{answers: []func(http.ResponseWriter){func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"error":{"code":"too_many_requests","message":"too many parked requests: 3 of yours are waiting"}}`)
	}}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	out := forward(t, srv.URL, `{}`)
	var refused *RefusedError
	if !errors.As(out.Err, &refused) || out.Err.Error() != "Gatehouse refused: too many parked requests: 3 of yours are waiting" ||
		out.Answer != nil || len(rec.eids) != 1 {
		t.Fatalf("429: %v (%T), answer %q, after %d requests", out.Err, out.Err, out.Answer, len(rec.eids))
	}
}

// A payload's own valid re-attach id is kept; an invalid one is replaced.
func TestReattachIDFromThePayload(t *testing.T) {
	codexAgent, _ := Lookup("codex")
	own := ids.New("elicit_claude_")
	_, eid, err := withReattachID([]byte(`{"`+ReattachField+`":"`+own+`"}`), claudeAgent(t))
	if err != nil || eid != own {
		t.Fatalf("kept id = %q, %v", eid, err)
	}
	body, eid, err := withReattachID([]byte(`{"`+ReattachField+`":"nope","x":1}`), codexAgent)
	if err != nil || !strings.HasPrefix(eid, "elicit_codex_") || !strings.Contains(string(body), eid) || !strings.Contains(string(body), `"x":1`) {
		t.Fatalf("replaced: %s %q %v", body, eid, err)
	}
	for _, bad := range []string{"", "[]", "null", "nope", `"s"`} {
		if _, _, err := withReattachID([]byte(bad), claudeAgent(t)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestDenyShapes(t *testing.T) {
	for event, want := range map[string]string{
		"PermissionRequest": `{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"m"},"hookEventName":"PermissionRequest"}}`,
		"PreToolUse":        `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"m"}}`,
		"Elicitation":       `{"hookSpecificOutput":{"action":"decline","hookEventName":"Elicitation"}}`,
	} {
		got, ok := Deny(claudeAgent(t), []byte(`{"hook_event_name":"`+event+`"}`), "m")
		if !ok || string(got) != want {
			t.Errorf("%s: %s", event, got)
		}
	}
	if _, ok := Deny(claudeAgent(t), []byte(`{"hook_event_name":"Stop"}`), "m"); ok {
		t.Error("Stop has no deny answer")
	}
	// Without a message of the caller's, the deny still says why.
	for _, event := range []string{"PermissionRequest", "PreToolUse"} {
		got, ok := Deny(claudeAgent(t), []byte(`{"hook_event_name":"`+event+`"}`), "  ")
		if !ok || !strings.Contains(string(got), `"Denied by the Gatehouse hook forwarder."`) {
			t.Errorf("%s with a blank message: %s", event, got)
		}
	}
}

func claudeAgent(t *testing.T) Agent {
	t.Helper()
	a, ok := Lookup("claude")
	if !ok {
		t.Fatal("no claude agent in the registry")
	}
	return a
}
