package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/internal/notify/slack"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/slacktest"
)

const botToken = "xoxb-test-token"

// hostile is agent-controlled text that would ping everyone and show a disguised link
// if it reached Slack's mrkdwn unescaped.
const hostile = "<!channel> <https://evil.example|click> & <@U999> ```*bold*```"

// dateToken is the expiry's <!date^…|…> token, the only markup Gatehouse writes itself.
var dateToken = regexp.MustCompile(`<!date\^[0-9]+\^\{date_short_pretty\} at \{time\}\|[^<>]*>`)

func startSlack(t *testing.T) (*slacktest.Server, *slack.Channel) {
	t.Helper()
	st := slacktest.Start(t, botToken)
	st.AddUser(slacktest.User{ID: "U1", Email: "alice@example.com", Name: "alice"})
	return st, slack.New(botToken, st.URL)
}

func created() *notify.Message {
	return &notify.Message{
		DeliveryID: "d1", Kind: notify.KindCreated, Recipient: "alice@example.com",
		Prompt: notify.Summary{SessionID: "s1", ElicitationID: "e1", SessionTitle: "fix the build", Agent: "laptop",
			Vendor: "Claude Code", Title: "Claude Code wants to run Bash", Tool: "Bash", Detail: "rm -rf ./build && make",
			Cwd: "/home/alice/src", Answerable: true, ExpiresAt: time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)},
		ApproveURL:  "https://gatehouse.example/approve/s1/e1",
		AcceptURL:   "https://gatehouse.example/a/accept-token",
		DeclineURL:  "https://gatehouse.example/a/decline-token",
		AcceptToken: "accept-token", DeclineToken: "decline-token",
		Target: notify.Target{Email: "alice@example.com"},
	}
}

// blocks decodes a message's Block Kit JSON.
func blocks(t *testing.T, m slacktest.Message) []map[string]any {
	t.Helper()
	var bs []map[string]any
	if err := json.Unmarshal(m.Blocks, &bs); err != nil {
		t.Fatalf("blocks: %v in %s", err, m.Blocks)
	}
	return bs
}

// texts collects every text object of the blocks (type, text, verbatim).
func texts(v any, out *[]map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		if typ, _ := x["type"].(string); (typ == "mrkdwn" || typ == "plain_text") && x["text"] != nil {
			*out = append(*out, x)
		}
		for _, c := range x {
			texts(c, out)
		}
	case []any:
		for _, c := range x {
			texts(c, out)
		}
	case []map[string]any:
		for _, c := range x {
			texts(c, out)
		}
	}
}

func buttons(bs []map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, b := range bs {
		if b["type"] != "actions" {
			continue
		}
		for _, e := range b["elements"].([]any) {
			el := e.(map[string]any)
			out[el["action_id"].(string)] = el
		}
	}
	return out
}

func TestSlackSendPostsRequestWithButtons(t *testing.T) {
	t.Parallel()
	st, ch := startSlack(t)
	if ch.Name() != notify.ChannelSlack {
		t.Fatalf("Name = %q", ch.Name())
	}
	ref, err := ch.Send(context.Background(), created())
	if err != nil {
		t.Fatal(err)
	}
	posted := st.WaitPosted(t, 1)
	if want := posted[0].Channel + " " + posted[0].TS; ref != want || posted[0].Channel != "D1" {
		t.Fatalf("ref %q, posted to %s %s", ref, posted[0].Channel, posted[0].TS)
	}
	if posted[0].Form["unfurl_links"] != "false" || posted[0].Form["unfurl_media"] != "false" {
		t.Errorf("links unfurl: %v", posted[0].Form)
	}
	bs := blocks(t, posted[0])
	raw := string(posted[0].Blocks)
	for _, want := range []string{"Claude Code wants to run Bash", "rm -rf ./build &amp;&amp; make", "laptop", "fix the build",
		"Bash", "/home/alice/src", "<!date^1796137200^"} {
		if !strings.Contains(raw, jsonEscaped(want)) {
			t.Errorf("blocks lack %q: %s", want, raw)
		}
	}
	if bs[0]["type"] != "header" {
		t.Errorf("first block is %v, want the header", bs[0]["type"])
	}
	btn := buttons(bs)
	if a := btn[slack.ActionApprove]; a == nil || a["value"] != "accept-token" || a["style"] != "primary" {
		t.Errorf("approve button: %v", a)
	}
	if r := btn[slack.ActionReject]; r == nil || r["value"] != "decline-token" || r["style"] != "danger" {
		t.Errorf("reject button: %v", r)
	}
	if o := btn[slack.ActionOpen]; o == nil || o["url"] != "https://gatehouse.example/approve/s1/e1" {
		t.Errorf("open button: %v", o)
	}
	if !strings.Contains(posted[0].Text, "Claude Code wants to run Bash") {
		t.Errorf("fallback text %q", posted[0].Text)
	}
}

func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

func TestSlackUnanswerablePromptHasOnlyTheLink(t *testing.T) {
	t.Parallel()
	st, ch := startSlack(t)
	m := created()
	m.Prompt.Answerable, m.AcceptToken, m.DeclineToken, m.AcceptURL, m.DeclineURL = false, "", "", "", ""
	if _, err := ch.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	btn := buttons(blocks(t, st.WaitPosted(t, 1)[0]))
	if btn[slack.ActionApprove] != nil || btn[slack.ActionReject] != nil || btn[slack.ActionOpen] == nil {
		t.Fatalf("buttons of an unanswerable prompt: %v", btn)
	}
}

// TestSlackUntrustedTextIsInert: agent text in every field comes out escaped, in
// verbatim mrkdwn, and cannot close the code block it sits in.
func TestSlackUntrustedTextIsInert(t *testing.T) {
	t.Parallel()
	st, ch := startSlack(t)
	m := created()
	m.Prompt.Title, m.Prompt.Detail, m.Prompt.Agent, m.Prompt.SessionTitle = hostile, hostile+"\nline 2", hostile, hostile
	m.Prompt.Tool, m.Prompt.Cwd, m.Prompt.Vendor = hostile, hostile, hostile
	if _, err := ch.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	posted := st.WaitPosted(t, 1)[0]
	var objs []map[string]any
	texts(blocks(t, posted), &objs)
	if len(objs) < 5 {
		t.Fatalf("only %d text objects", len(objs))
	}
	all := append([]string{posted.Text}, "")
	for _, o := range objs {
		s := o["text"].(string)
		all = append(all, s)
		if o["type"] == "mrkdwn" && o["verbatim"] != true {
			t.Errorf("mrkdwn text is not verbatim (Slack would link bare URLs and names): %q", s)
		}
	}
	sawEscaped := false
	for _, s := range all {
		rest := dateToken.ReplaceAllString(s, "")
		if strings.ContainsAny(rest, "<>") || strings.Contains(s, "<!channel>") || strings.Contains(s, "<@U999>") {
			t.Errorf("unescaped markup reached Slack: %q", s)
		}
		if strings.Contains(s, "&lt;!channel&gt; &lt;https://evil.example|click&gt; &amp; &lt;@U999&gt;") {
			sawEscaped = true
		}
		if strings.Contains(s, "```\n") && strings.Count(s, "```") != 2 {
			t.Errorf("the detail broke out of its code block: %q", s)
		}
	}
	if !sawEscaped {
		t.Errorf("the escaped text is missing: %q", all)
	}
}

func TestSlackLongDetailIsBounded(t *testing.T) {
	t.Parallel()
	st, ch := startSlack(t)
	m := created()
	m.Prompt.Detail = strings.Repeat("<&>", 5000)
	if _, err := ch.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	texts(blocks(t, st.WaitPosted(t, 1)[0]), &objs)
	for _, o := range objs {
		s := o["text"].(string)
		if len(s) > 3000 {
			t.Errorf("a text object of %d characters (Slack's limit is 3000)", len(s))
		}
		if strings.HasPrefix(s, "```") && (!strings.Contains(s, "Shortened") || strings.Contains(s, "&l\n") || strings.Contains(s, "&a…")) {
			t.Errorf("cut detail: %q", s[len(s)-80:])
		}
	}
}

// TestSlackResolvedUpdatesInPlace: the outcome replaces the buttons of the message the
// question was posted in.
func TestSlackResolvedUpdatesInPlace(t *testing.T) {
	t.Parallel()
	st, ch := startSlack(t)
	ref, err := ch.Send(context.Background(), created())
	if err != nil {
		t.Fatal(err)
	}
	m := created()
	m.Kind, m.Ref = notify.KindResolved, ref
	m.AcceptURL, m.DeclineURL, m.AcceptToken, m.DeclineToken = "", "", "", ""
	m.Outcome = &notify.Outcome{Status: "resolved", Action: "accept", ResolvedBy: "alice", ResolvedVia: "slack", ResolvedAt: time.Now()}
	if got, err := ch.Send(context.Background(), m); err != nil || got != ref {
		t.Fatalf("resolved: ref %q, %v", got, err)
	}
	up := st.WaitUpdated(t, 1)[0]
	if up.Channel+" "+up.TS != ref {
		t.Fatalf("updated %s %s, posted %s", up.Channel, up.TS, ref)
	}
	raw := string(up.Blocks)
	if !strings.Contains(raw, "Approved by alice via slack") || !strings.Contains(raw, "Claude Code wants to run Bash") {
		t.Errorf("update lacks the outcome or the request: %s", raw)
	}
	if btn := buttons(blocks(t, up)); len(btn) != 0 {
		t.Errorf("buttons left after the decision: %v", btn)
	}
	if len(st.Posted()) != 1 {
		t.Errorf("a new message was posted instead of updating: %d", len(st.Posted()))
	}
}

func TestSlackOutcomeText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    *notify.Outcome
		want string
	}{
		{&notify.Outcome{Status: "resolved", Action: "accept", ResolvedBy: "alice", ResolvedVia: "slack"}, "Approved by alice via slack"},
		{&notify.Outcome{Status: "resolved", Action: "decline", ResolvedBy: "bob", ResolvedVia: "page"}, "Rejected by bob via page"},
		{&notify.Outcome{Status: "expired"}, "Expired without an answer"},
		{&notify.Outcome{Status: "abandoned"}, "Abandoned: the agent stopped waiting"},
	} {
		if got := slack.OutcomeText(tc.o); got != tc.want {
			t.Errorf("OutcomeText(%+v) = %q, want %q", tc.o, got, tc.want)
		}
	}
}

// TestSlackErrors: what the dispatcher may retry and what fails the delivery at once.
func TestSlackErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		setup     func(st *slacktest.Server, m *notify.Message)
		token     string
		permanent bool
	}{
		{name: "server error", setup: func(st *slacktest.Server, _ *notify.Message) { st.FailNext(1, 500) }},
		{name: "bad gateway", setup: func(st *slacktest.Server, _ *notify.Message) { st.FailNext(1, 502) }},
		{name: "rate limited", setup: func(st *slacktest.Server, _ *notify.Message) { st.RateLimitNext(1, 3) }},
		{name: "internal_error", setup: func(st *slacktest.Server, _ *notify.Message) { st.ErrorNext(1, "internal_error") }},
		{name: "users_not_found", setup: func(_ *slacktest.Server, m *notify.Message) { m.Target.Email = "nobody@example.com" }, permanent: true},
		{name: "no e-mail", setup: func(_ *slacktest.Server, m *notify.Message) { m.Target.Email = "" }, permanent: true},
		{name: "invalid_auth", token: "xoxb-wrong", permanent: true},
		{name: "channel_not_found", setup: func(st *slacktest.Server, _ *notify.Message) { st.ErrorNext(1, "channel_not_found") }, permanent: true},
		{name: "unknown method (404)", setup: func(st *slacktest.Server, _ *notify.Message) { st.FailNext(1, 404) }, permanent: true},
		{name: "update of a gone message", setup: func(_ *slacktest.Server, m *notify.Message) {
			m.Kind, m.Ref, m.Outcome = notify.KindResolved, "D1 1.2", &notify.Outcome{Status: "expired"}
		}, permanent: true},
		{name: "malformed ref", setup: func(_ *slacktest.Server, m *notify.Message) {
			m.Kind, m.Ref, m.Outcome = notify.KindResolved, "D1", &notify.Outcome{Status: "expired"}
		}, permanent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := slacktest.Start(t, botToken)
			st.AddUser(slacktest.User{ID: "U1", Email: "alice@example.com"})
			token := botToken
			if tc.token != "" {
				token = tc.token
			}
			ch := slack.New(token, st.URL)
			m := created()
			if tc.setup != nil {
				tc.setup(st, m)
			}
			_, err := ch.Send(context.Background(), m)
			if err == nil {
				t.Fatal("Send succeeded")
			}
			if notify.IsPermanent(err) != tc.permanent {
				t.Fatalf("permanent = %v, want %v (%v)", notify.IsPermanent(err), tc.permanent, err)
			}
			if !tc.permanent {
				// The failure was passing: the dispatcher's next attempt delivers.
				if _, err := ch.Send(context.Background(), m); err != nil {
					t.Fatalf("retry: %v", err)
				}
				st.WaitPosted(t, 1)
			}
		})
	}
}

func TestSlackRateLimitKeepsRetryAfter(t *testing.T) {
	t.Parallel()
	st, ch := startSlack(t)
	st.RateLimitNext(1, 7)
	_, err := ch.Send(context.Background(), created())
	var rl *slackapi.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second || notify.IsPermanent(err) {
		t.Fatalf("rate limit: %v", err)
	}
}

func TestSlackResolvedWithoutRefIsANoOp(t *testing.T) {
	t.Parallel()
	st, ch := startSlack(t)
	m := created()
	m.Kind, m.Outcome = notify.KindResolved, &notify.Outcome{Status: "expired"}
	if _, err := ch.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if n := st.Calls("chat.update") + st.Calls("chat.postMessage"); n != 0 {
		t.Fatalf("%d calls for a prompt never posted", n)
	}
}
