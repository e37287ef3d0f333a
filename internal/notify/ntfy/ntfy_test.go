package ntfy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/internal/notify/ntfy"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/ntfytest"
)

const wait = 5 * time.Second

// untrusted is a detail an agent controls: markdown that would render a link and a
// heading if the message were markdown.
const untrusted = "# Pwned\n[click me](https://evil.example) **now** `rm -rf ~`"

func message(srv *ntfytest.Server, topic, kind string) *notify.Message {
	m := &notify.Message{
		DeliveryID: "dlv_1",
		Kind:       kind,
		Recipient:  "alice@example.com",
		Prompt: notify.Summary{
			SessionID:     "ses_1",
			ElicitationID: "eli_1",
			SessionTitle:  "fix the build",
			Agent:         "claude",
			Vendor:        "Claude Code",
			Origin:        "claude_permission",
			Title:         "Claude Code wants to run Bash",
			Tool:          "Bash",
			Detail:        untrusted,
			Cwd:           "/home/alice/src",
			Answerable:    true,
		},
		ApproveURL: "https://gatehouse.example/approve/eli_1",
		Target:     notify.Target{URL: srv.TopicURL(topic), Token: srv.Token},
	}
	if kind != notify.KindResolved {
		m.AcceptURL = "https://gatehouse.example/a/accept-token"
		m.DeclineURL = "https://gatehouse.example/a/decline-token"
	}
	return m
}

func channel(timeout time.Duration) *ntfy.Channel {
	return ntfy.New(notify.HTTPClient(true, timeout))
}

func TestCreatedPublishesJSONWithActions(t *testing.T) {
	srv := ntfytest.New(t, "tk_secret")
	topic := ntfytest.NewTopic()
	m := message(srv, topic, notify.KindCreated)
	if _, err := channel(wait).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.WaitCount(t, 1, wait)[0]

	if !got.JSON || got.Topic != topic {
		t.Errorf("JSON %v topic %q, want a JSON publish to %q", got.JSON, got.Topic, topic)
	}
	if got.Token != "tk_secret" {
		t.Errorf("token = %q", got.Token)
	}
	if got.Title != "Claude Code wants to run Bash" || got.Click != m.ApproveURL || got.Priority != 4 {
		t.Errorf("title %q click %q priority %d", got.Title, got.Click, got.Priority)
	}
	want := []ntfytest.Action{
		{Action: "view", Label: "Open", URL: m.ApproveURL},
		{Action: "http", Label: "Approve", URL: m.AcceptURL, Method: "POST", Clear: true},
		{Action: "http", Label: "Reject", URL: m.DeclineURL, Method: "POST", Clear: true},
	}
	if !slices.EqualFunc(got.Actions, want, actionEqual) {
		t.Errorf("actions = %+v\nwant %+v", got.Actions, want)
	}
	if got.SequenceID != ntfy.SequenceID("eli_1", "alice@example.com") {
		t.Errorf("sequence_id = %q", got.SequenceID)
	}
}

func TestUntrustedTextIsNotMarkdown(t *testing.T) {
	srv := ntfytest.New(t, "")
	m := message(srv, "t1", notify.KindCreated)
	m.Prompt.Title = "Claude Code wants to run **Bash**\n# now"
	if _, err := channel(wait).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.WaitCount(t, 1, wait)[0]
	if got.Markdown || !slices.Contains(got.Fields, "markdown") {
		t.Errorf("markdown = %v (sent explicitly: %v), want false sent explicitly", got.Markdown, slices.Contains(got.Fields, "markdown"))
	}
	if !strings.Contains(got.Message, untrusted) {
		t.Errorf("message %q does not carry the detail verbatim", got.Message)
	}
	if got.Title != "Claude Code wants to run **Bash** # now" {
		t.Errorf("title = %q, want one line, verbatim", got.Title)
	}
}

func TestNoButtonsWhenNotAnswerable(t *testing.T) {
	srv := ntfytest.New(t, "")
	m := message(srv, "t1", notify.KindCreated)
	m.Prompt.Answerable, m.AcceptURL, m.DeclineURL = false, "", ""
	if _, err := channel(wait).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.WaitCount(t, 1, wait)[0]
	if len(got.Actions) != 1 || got.Actions[0].Label != "Open" {
		t.Errorf("actions = %+v, want only Open", got.Actions)
	}
}

func TestResolvedReplacesTheQuestion(t *testing.T) {
	srv := ntfytest.New(t, "")
	c := channel(wait)
	if _, err := c.Send(t.Context(), message(srv, "t1", notify.KindCreated)); err != nil {
		t.Fatalf("Send created: %v", err)
	}
	r := message(srv, "t1", notify.KindResolved)
	r.Outcome = &notify.Outcome{Status: "resolved", Action: "accept", ResolvedBy: "bob@example.com", ResolvedVia: "ntfy"}
	if _, err := c.Send(t.Context(), r); err != nil {
		t.Fatalf("Send resolved: %v", err)
	}
	srv.WaitCount(t, 2, wait)
	shown := srv.Shown("t1")
	if len(shown) != 1 {
		t.Fatalf("the phone shows %d notifications, want the question replaced by the outcome", len(shown))
	}
	got := shown[0]
	if got.Title != "Approved: Claude Code wants to run Bash" || got.Message != "Approved by bob@example.com via ntfy" {
		t.Errorf("outcome: title %q message %q", got.Title, got.Message)
	}
	for _, a := range got.Actions {
		if a.Action == "http" {
			t.Errorf("the outcome still offers %q", a.Label)
		}
	}
	if !slices.Contains(got.Tags, "white_check_mark") || !slices.Contains(got.Tags, "gatehouse") {
		t.Errorf("tags = %v", got.Tags)
	}
}

func TestSequenceIDIsPerPersonAndValid(t *testing.T) {
	a, b := ntfy.SequenceID("eli_1", "alice"), ntfy.SequenceID("eli_1", "bob")
	if a == b || a != ntfy.SequenceID("eli_1", "alice") {
		t.Errorf("sequence ids %q %q: want stable per person", a, b)
	}
	if len(a) > 64 || strings.Trim(a, "-_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		t.Errorf("sequence id %q is not one ntfy accepts", a)
	}
}

func TestTokenRejectedIsPermanent(t *testing.T) {
	srv := ntfytest.New(t, "tk_right")
	m := message(srv, "t1", notify.KindCreated)
	m.Target.Token = "tk_wrong"
	_, err := channel(wait).Send(t.Context(), m)
	if !notify.IsPermanent(err) || !strings.Contains(err.Error(), "ntfy rejected the token") {
		t.Fatalf("wrong token: %v, want a permanent 'ntfy rejected the token'", err)
	}
	if strings.Contains(err.Error(), "tk_wrong") {
		t.Errorf("error carries the token: %v", err)
	}
	m.Target.Token = ""
	if _, err := channel(wait).Send(t.Context(), m); !notify.IsPermanent(err) {
		t.Fatalf("no token: %v, want permanent", err)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("%d messages accepted without the right token", n)
	}
	if n := len(srv.Rejections()); n != 2 {
		t.Errorf("%d rejections, want 2", n)
	}
}

func TestStatusClassification(t *testing.T) {
	for _, tc := range []struct {
		status    int
		permanent bool
	}{
		{500, false}, {502, false}, {507, false}, {429, false}, {408, false},
		{400, true}, {401, true}, {403, true}, {404, true}, {410, true}, {413, true},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv := ntfytest.New(t, "")
			srv.FailNext(1, ntfytest.Status(tc.status))
			_, err := channel(wait).Send(t.Context(), message(srv, "t1", notify.KindCreated))
			if err == nil {
				t.Fatal("Send succeeded against a failing server")
			}
			if notify.IsPermanent(err) != tc.permanent {
				t.Errorf("IsPermanent(%v) = %v, want %v", err, notify.IsPermanent(err), tc.permanent)
			}
			if !strings.Contains(err.Error(), fmt.Sprint(tc.status)) {
				t.Errorf("error does not name the status: %v", err)
			}
		})
	}
}

func TestHangingServerTimesOut(t *testing.T) {
	srv := ntfytest.New(t, "")
	srv.FailAlways(ntfytest.Hang(time.Minute))
	_, err := channel(300*time.Millisecond).Send(t.Context(), message(srv, "t1", notify.KindCreated))
	if !errors.Is(err, context.DeadlineExceeded) || notify.IsPermanent(err) {
		t.Errorf("Send = %v, want a retryable deadline error", err)
	}
	srv.Recover()
	if _, err := channel(wait).Send(t.Context(), message(srv, "t1", notify.KindCreated)); err != nil {
		t.Errorf("after recovery: %v", err)
	}
}

func TestHTTPClientRefusesLoopbackUnlessAllowed(t *testing.T) {
	srv := ntfytest.New(t, "")
	m := message(srv, "t1", notify.KindCreated)
	_, err := ntfy.New(notify.HTTPClient(false, wait)).Send(t.Context(), m)
	if err == nil || !strings.Contains(err.Error(), "private address") {
		t.Fatalf("guarded client: %v, want a refusal of the private address", err)
	}
	if n := len(srv.Messages()) + len(srv.Rejections()); n != 0 {
		t.Fatalf("the server saw %d publishes through the guarded client", n)
	}
	if _, err := ntfy.New(notify.HTTPClient(true, wait)).Send(t.Context(), m); err != nil {
		t.Fatalf("client allowing private addresses: %v", err)
	}
	srv.WaitCount(t, 1, wait)
}

// TestPressAction answers a prompt as the phone does: the Approve button's request
// reaches the action link with the method the message asked for.
func TestPressAction(t *testing.T) {
	var pressed atomic.Value
	gatehouse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pressed.Store(r.Method + " " + r.URL.Path)
		io.WriteString(w, "approved")
	}))
	defer gatehouse.Close()

	srv := ntfytest.New(t, "")
	m := message(srv, "t1", notify.KindCreated)
	m.AcceptURL, m.DeclineURL = gatehouse.URL+"/a/accept-token", gatehouse.URL+"/a/decline-token"
	if _, err := channel(wait).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.WaitCount(t, 1, wait)[0]
	resp := ntfytest.PressAction(t, got, "Approve")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "approved" || pressed.Load() != "POST /a/accept-token" {
		t.Errorf("pressing Approve: %d %q, server saw %v", resp.StatusCode, body, pressed.Load())
	}
}

func TestSplitTopicURL(t *testing.T) {
	for _, tc := range []struct{ in, root, topic string }{
		{"https://ntfy.example/alerts", "https://ntfy.example/", "alerts"},
		{"https://ntfy.example/alerts/", "https://ntfy.example/", "alerts"},
		{"http://127.0.0.1:8080/alerts", "http://127.0.0.1:8080/", "alerts"},
		{"https://example.com/ntfy/alerts", "https://example.com/ntfy/", "alerts"},
	} {
		root, topic, err := ntfy.SplitTopicURL(tc.in)
		if err != nil || root != tc.root || topic != tc.topic {
			t.Errorf("SplitTopicURL(%q) = %q, %q, %v", tc.in, root, topic, err)
		}
	}
	for _, bad := range []string{"https://ntfy.example/", "ftp://x/t", "not a url", "/topic"} {
		if _, _, err := ntfy.SplitTopicURL(bad); err == nil {
			t.Errorf("SplitTopicURL(%q) accepted", bad)
		}
	}
}

// TestHeaderStylePublish checks the stand-in also takes ntfy's header form, which
// other tools (and curl in a manual test) use.
func TestHeaderStylePublish(t *testing.T) {
	srv := ntfytest.New(t, "")
	req, _ := http.NewRequest(http.MethodPost, srv.TopicURL("t1"), strings.NewReader("body text"))
	req.Header.Set("Title", "hello")
	req.Header.Set("Priority", "high")
	req.Header.Set("Tags", "bell, gatehouse")
	req.Header.Set("Actions", "view, Open, https://x.example/p?a=b; http, Approve, https://x.example/a, method=PUT, clear=true, headers.X-Test=1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := srv.WaitCount(t, 1, wait)[0]
	want := []ntfytest.Action{
		{Action: "view", Label: "Open", URL: "https://x.example/p?a=b"},
		{Action: "http", Label: "Approve", URL: "https://x.example/a", Method: "PUT", Clear: true, Headers: map[string]string{"X-Test": "1"}},
	}
	if got.JSON || got.Title != "hello" || got.Message != "body text" || got.Priority != 4 ||
		!slices.Equal(got.Tags, []string{"bell", "gatehouse"}) || !slices.EqualFunc(got.Actions, want, actionEqual) {
		t.Errorf("header publish recorded as %+v", got)
	}
}

func actionEqual(a, b ntfytest.Action) bool {
	return a.Action == b.Action && a.Label == b.Label && a.URL == b.URL && a.Method == b.Method &&
		a.Body == b.Body && a.Clear == b.Clear && fmt.Sprint(a.Headers) == fmt.Sprint(b.Headers)
}
