package slacktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Click describes a button click, to build the block_actions payload Slack sends.
type Click struct {
	UserID   string
	ActionID string
	// Value is the button's value (the action token).
	Value       string
	Channel     string
	TS          string
	ResponseURL string
}

// BlockActions is the interaction payload Slack posts when someone clicks a button in a
// message: the fields Gatehouse reads, in Slack's shape.
func BlockActions(c Click) map[string]any {
	return map[string]any{
		"type":         "block_actions",
		"user":         map[string]any{"id": c.UserID, "username": "someone", "team_id": "T0001"},
		"api_app_id":   "A0001",
		"token":        "verification-token-unused",
		"container":    map[string]any{"type": "message", "message_ts": c.TS, "channel_id": c.Channel, "is_ephemeral": false},
		"trigger_id":   "1.2.3",
		"team":         map[string]any{"id": "T0001", "domain": "example"},
		"channel":      map[string]any{"id": c.Channel, "name": "directmessage"},
		"message":      map[string]any{"type": "message", "ts": c.TS, "text": "…"},
		"response_url": c.ResponseURL,
		"actions": []map[string]any{{
			"action_id": c.ActionID, "block_id": "gatehouse_decide", "type": "button",
			"value": c.Value, "action_ts": "1764590001.000001",
			"text": map[string]any{"type": "plain_text", "text": "Approve"},
		}},
	}
}

// Body is the form body Slack posts to an interactivity URL: payload=<JSON>.
func Body(payload any) string {
	b, err := json.Marshal(payload)
	if err != nil {
		panic("slacktest: payload does not marshal: " + err.Error())
	}
	return url.Values{"payload": {string(b)}}.Encode()
}

// Sign is Slack's v0 request signature: "v0=" + hex(HMAC-SHA256(secret,
// "v0:" + timestamp + ":" + body)).
func Sign(secret, timestamp, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + timestamp + ":" + body))
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// SignedRequest is the POST Slack sends to target with body, signed with secret at ts.
func SignedRequest(target, secret, body string, ts time.Time) *http.Request {
	r, err := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
	if err != nil {
		panic("slacktest: " + err.Error())
	}
	SignHeaders(r.Header, secret, body, ts)
	return r
}

// SignHeaders sets the headers Slack sends with an interaction: the form content type,
// X-Slack-Request-Timestamp and X-Slack-Signature.
func SignHeaders(h http.Header, secret, body string, ts time.Time) {
	stamp := strconv.FormatInt(ts.Unix(), 10)
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	h.Set("X-Slack-Request-Timestamp", stamp)
	h.Set("X-Slack-Signature", Sign(secret, stamp, body))
}
