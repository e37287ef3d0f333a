package handlers_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	notifyslack "github.com/gatehouse-dev/gatehouse/internal/notify/slack"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/slacktest"
	"github.com/gatehouse-dev/gatehouse/internal/testkit/testserver"
)

// TestSlackApproveReachesParkedHook: end to end through the real server. A parked
// Claude Code hook is announced as a Slack DM with the request and both buttons; a
// signed Approve click from the recipient's Slack account allows the hook, records
// resolved_via slack, and the message is updated in place with the outcome. A second
// click is refused and told to the clicker.
func TestSlackApproveReachesParkedHook(t *testing.T) {
	testserver.EachDB(t, func(t *testing.T, db testserver.DB) {
		st := slacktest.Start(t, slackBotToken)
		st.AddUser(slacktest.User{ID: "U1", Email: "alice@example.com", Name: "alice"})
		srv := testserver.Start(t, db.NewURL(t), "--auth", "header", "--notify-retry-base", "200ms",
			"--slack-bot-token", slackBotToken, "--slack-signing-secret", slackSigningSecret, "--slack-api-url", st.URL)
		alice := srv.Client("alice@example.com")
		if r := alice.Do(t, http.MethodPut, "/v1/me/notifications", map[string]any{"slack": map[string]any{}}); r.Status != http.StatusOK {
			t.Fatalf("PUT /v1/me/notifications: %d %s", r.Status, r.Body)
		}
		sid := alice.CreateSession(t, alice.CreateAgent(t), "", "from slack")
		parked, eid, _ := alice.ParkClaude(t, sid, sid, "Bash", map[string]any{"command": "terraform apply", "cwd": "/srv/infra"})

		posted := st.WaitPosted(t, 1)[0]
		raw := string(posted.Blocks)
		if !strings.Contains(raw, "terraform apply") {
			t.Fatalf("the message does not show the request: %s", raw)
		}
		var approve string
		var blocks []map[string]any
		if err := json.Unmarshal(posted.Blocks, &blocks); err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if b["type"] == "actions" {
				for _, el := range b["elements"].([]any) {
					if el := el.(map[string]any); el["action_id"] == notifyslack.ActionApprove {
						approve, _ = el["value"].(string)
					}
				}
			}
		}
		if approve == "" {
			t.Fatalf("no Approve button: %s", raw)
		}

		click := slacktest.Click{UserID: "U1", ActionID: notifyslack.ActionApprove, Value: approve,
			Channel: posted.Channel, TS: posted.TS, ResponseURL: st.ResponseURL("first")}
		req := slacktest.SignedRequest(srv.URL+slackInteractionsPath, slackSigningSecret, slacktest.Body(slacktest.BlockActions(click)), time.Now())
		if status, body, _ := postSlack(t, http.DefaultClient, req); status != http.StatusOK || len(body) != 0 {
			t.Fatalf("click: %d %q", status, body)
		}
		if answer := parked.Wait(t, 20*time.Second); !strings.Contains(string(answer.Body), `"allow"`) {
			t.Fatalf("the hook was not allowed: %s", answer.Body)
		}
		row := alice.Do(t, http.MethodGet, "/v1/sessions/"+sid+"/elicitations/"+eid, nil).JSON(t)
		if row["resolved_by"] != "alice@example.com" || row["resolved_via"] != "slack" {
			t.Fatalf("resolved_by %v via %v", row["resolved_by"], row["resolved_via"])
		}
		up := st.WaitUpdated(t, 1)[0]
		if up.Channel != posted.Channel || up.TS != posted.TS || !strings.Contains(string(up.Blocks), "Approved by alice@example.com via slack") {
			t.Fatalf("message not updated in place with the outcome: %s %s %s", up.Channel, up.TS, up.Blocks)
		}

		// The same button again: single use, and the clicker is told.
		click.ResponseURL = st.ResponseURL("again")
		req = slacktest.SignedRequest(srv.URL+slackInteractionsPath, slackSigningSecret, slacktest.Body(slacktest.BlockActions(click)), time.Now())
		if status, _, _ := postSlack(t, http.DefaultClient, req); status != http.StatusOK {
			t.Fatalf("second click: %d", status)
		}
		if r := st.WaitReplies(t, 1)[0]; r.Path != "again" || r.Text() == "" {
			t.Fatalf("reply to the second click: %+v", r)
		}
	})
}
