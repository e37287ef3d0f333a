package handlers_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/handlers"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/notify"
	notifyslack "github.com/gatehouse-dev/gatehouse/internal/notify/slack"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/slacktest"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

const (
	slackInteractionsPath = "/v1/notify/slack/interactions"
	slackBotToken         = "xoxb-handler-test"
	slackSigningSecret    = "handler-test-signing-secret"
)

// postSlack sends req and returns the status, the body and the headers.
func postSlack(t *testing.T, hc *http.Client, req *http.Request) (int, []byte, http.Header) {
	t.Helper()
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body, resp.Header
}

func errorCode(t *testing.T, body []byte) string {
	t.Helper()
	var env struct {
		Error struct{ Code string } `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("not the error envelope: %s", body)
	}
	return env.Error.Code
}

// TestSlackInteractionsUnconfigured: without Slack the route is a 404 — and it is one
// for a caller with no identity under --auth header, so the identify middleware (which
// would answer 401) does not stand in front of it.
func TestSlackInteractionsUnconfigured(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Databases(t)[0].NewURL(t), "--auth", "header")
	body := slacktest.Body(slacktest.BlockActions(slacktest.Click{UserID: "U1", ActionID: notifyslack.ActionApprove, Value: "t"}))
	req := slacktest.SignedRequest(srv.URL+slackInteractionsPath, slackSigningSecret, body, time.Now())
	status, raw, _ := postSlack(t, srv.Client("").HC, req)
	if status != http.StatusNotFound || errorCode(t, raw) != "not_found" {
		t.Fatalf("unconfigured Slack: %d %s", status, raw)
	}
}

// slackApp is the real Echo app with Slack configured, under --auth header (the
// interactivity route must not need an identity), against a Slack stand-in.
func slackApp(t *testing.T) (*httptest.Server, *slacktest.Server) {
	t.Helper()
	st := slacktest.Start(t, slackBotToken)
	st.AddUser(slacktest.User{ID: "U1", Email: "alice@example.com", Name: "alice"})
	ident, err := auth.NewIdentifier(auth.ModeHeader, "X-Forwarded-Email", []string{"10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e := handlers.New(handlers.Deps{Ident: ident, Log: log, MaxBodyBytes: 1 << 20,
		SessionSecret: testserver.TestSessionSecret,
		Notify:        notify.New(nil, nil, notify.Options{Log: log, Secret: []byte(testserver.TestSessionSecret)}),
		Slack:         notifyslack.NewInteractions(slackSigningSecret, slackBotToken, st.URL)})
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv, st
}

func TestSlackInteractionsRefused(t *testing.T) {
	t.Parallel()
	srv, st := slackApp(t)
	click := slacktest.Click{UserID: "U1", ActionID: notifyslack.ActionApprove, Value: "accept-token",
		Channel: "D1", TS: "1.2", ResponseURL: st.ResponseURL("r")}
	body := slacktest.Body(slacktest.BlockActions(click))
	for _, tc := range []struct {
		name   string
		req    *http.Request
		status int
		code   string
	}{
		{"wrong secret", slacktest.SignedRequest(srv.URL+slackInteractionsPath, "not-the-secret", body, time.Now()), 401, "unauthorized"},
		{"stale timestamp", slacktest.SignedRequest(srv.URL+slackInteractionsPath, slackSigningSecret, body, time.Now().Add(-10*time.Minute)), 401, "unauthorized"},
		{"unsigned", func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, srv.URL+slackInteractionsPath, strings.NewReader(body))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return r
		}(), 401, "unauthorized"},
		{"signed, not a payload", slacktest.SignedRequest(srv.URL+slackInteractionsPath, slackSigningSecret, "payload=%7B", time.Now()), 400, "invalid_input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, raw, h := postSlack(t, http.DefaultClient, tc.req)
			if status != tc.status || errorCode(t, raw) != tc.code {
				t.Fatalf("%d %s, want %d %s", status, raw, tc.status, tc.code)
			}
			if h.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q", h.Get("Cache-Control"))
			}
		})
	}
	if n := st.Calls("users.info"); n != 0 {
		t.Errorf("users.info called %d times for refused requests", n)
	}
}

// TestSlackInteractionsAcknowledged: a verified click gets an empty 200 whatever it did;
// a click that cannot decide anything is explained to the clicker in an ephemeral reply.
func TestSlackInteractionsAcknowledged(t *testing.T) {
	t.Parallel()
	srv, st := slackApp(t)

	open := slacktest.Click{UserID: "U1", ActionID: notifyslack.ActionOpen, Channel: "D1", TS: "1.2", ResponseURL: st.ResponseURL("open")}
	req := slacktest.SignedRequest(srv.URL+slackInteractionsPath, slackSigningSecret, slacktest.Body(slacktest.BlockActions(open)), time.Now())
	if status, raw, _ := postSlack(t, http.DefaultClient, req); status != http.StatusOK || len(raw) != 0 {
		t.Fatalf("open link click: %d %q", status, raw)
	}

	// A token that names no prompt: refused, and the clicker is told.
	bogus := slacktest.Click{UserID: "U1", ActionID: notifyslack.ActionApprove, Value: "not-a-token",
		Channel: "D1", TS: "1.2", ResponseURL: st.ResponseURL("bogus")}
	req = slacktest.SignedRequest(srv.URL+slackInteractionsPath, slackSigningSecret, slacktest.Body(slacktest.BlockActions(bogus)), time.Now())
	if status, raw, _ := postSlack(t, http.DefaultClient, req); status != http.StatusOK || len(raw) != 0 {
		t.Fatalf("bogus token: %d %q", status, raw)
	}
	replies := st.WaitReplies(t, 1)
	if r := replies[0]; r.Path != "bogus" || r.Body["response_type"] != "ephemeral" || r.Text() == "" {
		t.Fatalf("reply to a refused click: %+v", r)
	}

	// A clicker whose Slack account has no e-mail Gatehouse can read.
	stranger := bogus
	stranger.UserID, stranger.ResponseURL = "UNOBODY", st.ResponseURL("stranger")
	req = slacktest.SignedRequest(srv.URL+slackInteractionsPath, slackSigningSecret, slacktest.Body(slacktest.BlockActions(stranger)), time.Now())
	if status, raw, _ := postSlack(t, http.DefaultClient, req); status != http.StatusOK || len(raw) != 0 {
		t.Fatalf("unknown clicker: %d %q", status, raw)
	}
	replies = st.WaitReplies(t, 2)
	if r := replies[1]; r.Path != "stranger" || !strings.Contains(r.Text(), "e-mail address") {
		t.Fatalf("reply to an unidentified clicker: %+v", r)
	}
}
