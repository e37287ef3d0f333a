package slack_test

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/notify/slack"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/slacktest"
)

const signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"

func startInteractions(t *testing.T) (*slacktest.Server, *slack.Interactions) {
	t.Helper()
	st := slacktest.Start(t, botToken)
	st.AddUser(slacktest.User{ID: "U1", Email: "alice@example.com", Name: "alice"})
	st.AddUser(slacktest.User{ID: "UBOT", Email: "", Name: "somebot", IsBot: true})
	return st, slack.NewInteractions(signingSecret, botToken, st.URL)
}

func approveClick(st *slacktest.Server) slacktest.Click {
	return slacktest.Click{UserID: "U1", ActionID: slack.ActionApprove, Value: "accept-token",
		Channel: "D1", TS: "1764590000.000001", ResponseURL: st.ResponseURL("r1")}
}

func TestSlackInteractionValidSignatureParses(t *testing.T) {
	t.Parallel()
	st, in := startInteractions(t)
	body := slacktest.Body(slacktest.BlockActions(approveClick(st)))
	c, err := in.Read(context.Background(), slacktest.SignedRequest("http://gatehouse.test/", signingSecret, body, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	want := slack.Click{Token: "accept-token", ActionID: slack.ActionApprove, SlackUserID: "U1", Email: "alice@example.com",
		ResponseURL: st.ResponseURL("r1"), Channel: "D1", TS: "1764590000.000001"}
	if c == nil || *c != want {
		t.Fatalf("click = %+v, want %+v", c, want)
	}
}

// TestSlackInteractionRejected: only requests signed with the app's secret, over the
// exact body, within five minutes, are read.
func TestSlackInteractionRejected(t *testing.T) {
	t.Parallel()
	st, in := startInteractions(t)
	body := slacktest.Body(slacktest.BlockActions(approveClick(st)))
	now := time.Now()
	for _, tc := range []struct {
		name string
		req  func() (string, string, time.Time, func(h map[string][]string)) // secret, body, ts, header edit
	}{
		{"wrong secret", func() (string, string, time.Time, func(map[string][]string)) {
			return "not-the-secret", body, now, nil
		}},
		{"stale timestamp", func() (string, string, time.Time, func(map[string][]string)) {
			return signingSecret, body, now.Add(-6 * time.Minute), nil
		}},
		{"future timestamp", func() (string, string, time.Time, func(map[string][]string)) {
			return signingSecret, body, now.Add(6 * time.Minute), nil
		}},
		{"no signature", func() (string, string, time.Time, func(map[string][]string)) {
			return signingSecret, body, now, func(h map[string][]string) { delete(h, "X-Slack-Signature") }
		}},
		{"no timestamp", func() (string, string, time.Time, func(map[string][]string)) {
			return signingSecret, body, now, func(h map[string][]string) { delete(h, "X-Slack-Request-Timestamp") }
		}},
		{"timestamp changed after signing", func() (string, string, time.Time, func(map[string][]string)) {
			return signingSecret, body, now, func(h map[string][]string) {
				h["X-Slack-Request-Timestamp"] = []string{strconv.FormatInt(now.Unix()-1, 10)}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secret, b, ts, edit := tc.req()
			r := slacktest.SignedRequest("http://gatehouse.test/", secret, b, ts)
			if edit != nil {
				edit(r.Header)
			}
			if c, err := in.Read(context.Background(), r); !errors.Is(err, slack.ErrBadSignature) {
				t.Fatalf("Read = %+v, %v; want ErrBadSignature", c, err)
			}
		})
	}
	t.Run("tampered body", func(t *testing.T) {
		r := slacktest.SignedRequest("http://gatehouse.test/", signingSecret, body, now)
		// The same headers over a body whose token was swapped.
		other := slacktest.SignedRequest("http://gatehouse.test/", signingSecret,
			strings.Replace(body, "accept-token", "stolen-token", 1), now)
		other.Header = r.Header
		if c, err := in.Read(context.Background(), other); !errors.Is(err, slack.ErrBadSignature) {
			t.Fatalf("Read = %+v, %v; want ErrBadSignature", c, err)
		}
	})
	if n := st.Calls("users.info"); n != 0 {
		t.Errorf("users.info called %d times for unsigned requests", n)
	}
}

func TestSlackInteractionMalformed(t *testing.T) {
	t.Parallel()
	st, in := startInteractions(t)
	for name, body := range map[string]string{
		"no payload":    "foo=bar",
		"not JSON":      "payload=%7Bnot-json",
		"bad form":      "payload=%zz",
		"click no user": slacktest.Body(slacktest.BlockActions(slacktest.Click{ActionID: slack.ActionApprove, Value: "t"})),
		"click no value": slacktest.Body(slacktest.BlockActions(slacktest.Click{UserID: "U1", ActionID: slack.ActionReject,
			ResponseURL: st.ResponseURL("r")})),
	} {
		r := slacktest.SignedRequest("http://gatehouse.test/", signingSecret, body, time.Now())
		if c, err := in.Read(context.Background(), r); !errors.Is(err, slack.ErrMalformed) {
			t.Errorf("%s: Read = %+v, %v; want ErrMalformed", name, c, err)
		}
	}
}

// TestSlackInteractionIgnored: the Open link's click and other interaction types are
// acknowledged without acting.
func TestSlackInteractionIgnored(t *testing.T) {
	t.Parallel()
	st, in := startInteractions(t)
	open := approveClick(st)
	open.ActionID, open.Value = slack.ActionOpen, ""
	shortcut := map[string]any{"type": "shortcut", "callback_id": "x", "user": map[string]any{"id": "U1"}}
	for name, body := range map[string]string{
		"open link": slacktest.Body(slacktest.BlockActions(open)),
		"shortcut":  slacktest.Body(shortcut),
	} {
		r := slacktest.SignedRequest("http://gatehouse.test/", signingSecret, body, time.Now())
		if c, err := in.Read(context.Background(), r); c != nil || err != nil {
			t.Errorf("%s: Read = %+v, %v; want nothing", name, c, err)
		}
	}
}

func TestSlackInteractionUserWithoutEmail(t *testing.T) {
	t.Parallel()
	st, in := startInteractions(t)
	for _, user := range []string{"UBOT", "UNKNOWN"} {
		c := approveClick(st)
		c.UserID = user
		r := slacktest.SignedRequest("http://gatehouse.test/", signingSecret, slacktest.Body(slacktest.BlockActions(c)), time.Now())
		got, err := in.Read(context.Background(), r)
		if err == nil || errors.Is(err, slack.ErrBadSignature) || errors.Is(err, slack.ErrMalformed) || got == nil || got.Email != "" {
			t.Errorf("%s: Read = %+v, %v; want the click without an e-mail and an error", user, got, err)
		}
	}
}

func TestSlackReplyIsEphemeral(t *testing.T) {
	t.Parallel()
	st, in := startInteractions(t)
	c := &slack.Click{ResponseURL: st.ResponseURL("r1"), Channel: "D1"}
	if err := in.Reply(context.Background(), c, "This link was already used <!here>"); err != nil {
		t.Fatal(err)
	}
	r := st.WaitReplies(t, 1)[0]
	if r.Path != "r1" || r.Body["response_type"] != "ephemeral" || r.Text() != "This link was already used &lt;!here&gt;" {
		t.Fatalf("reply %+v", r)
	}
	if r.Body["replace_original"] == true {
		t.Errorf("the reply replaced the message: %+v", r.Body)
	}
}

// TestSlackReplyOnlyToSlack: with Slack's own API, replies go to hooks.slack.com only.
func TestSlackReplyOnlyToSlack(t *testing.T) {
	t.Parallel()
	st := slacktest.Start(t, botToken)
	in := slack.NewInteractions(signingSecret, botToken, "")
	err := in.Reply(context.Background(), &slack.Click{ResponseURL: st.ResponseURL("r1")}, "hello")
	if err == nil {
		t.Fatal("a reply went to a URL outside Slack")
	}
	if u, _ := url.Parse(st.ResponseURL("r1")); u.Host == "hooks.slack.com" {
		t.Fatal("test premise")
	}
}
