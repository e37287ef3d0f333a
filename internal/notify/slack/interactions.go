package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	slackapi "github.com/slack-go/slack"
)

// ErrBadSignature means a request to the interactivity endpoint is not signed with the
// app's signing secret, or its timestamp is more than five minutes off (a replay): it
// did not come from Slack. The handler answers 401.
var ErrBadSignature = errors.New("slack: request signature does not verify")

// ErrMalformed means a correctly signed request that is not an interaction payload Slack
// would send. The handler answers 400.
var ErrMalformed = errors.New("slack: malformed interaction payload")

// Interactions verifies and reads the requests Slack sends to the interactivity URL
// (--public-url + /v1/notify/slack/interactions) when someone clicks a button. Build it
// with NewInteractions (it needs the Web API client).
type Interactions struct {
	// SigningSecret is the app's signing secret (--slack-signing-secret). The signature
	// is the endpoint's only authentication.
	SigningSecret string
	api           *slackapi.Client
	// anyResponseURL lets replies go to response URLs outside hooks.slack.com (a Slack
	// stand-in, when the Web API URL is configured).
	anyResponseURL bool
}

// NewInteractions builds the endpoint's half. The bot token and Web API URL are the
// channel's: users.info turns the clicking Slack user into an e-mail address.
func NewInteractions(signingSecret, botToken, apiURL string) *Interactions {
	return &Interactions{SigningSecret: signingSecret, api: newClient(botToken, apiURL), anyResponseURL: apiURL != ""}
}

// Click is an Approve or Reject button clicked in a Gatehouse message.
type Click struct {
	// Token is the action token the button carries.
	Token string
	// ActionID is ActionApprove or ActionReject.
	ActionID string
	// SlackUserID is who clicked, and Email their Slack profile's address: the identity
	// that must match the token's person.
	SlackUserID string
	Email       string
	// ResponseURL is where replies to the clicker go (ephemeral messages).
	ResponseURL string
	// Channel and TS name the message clicked in.
	Channel string
	TS      string
}

// Read verifies r's signature and returns the click it reports. It returns nil and no
// error for interactions Gatehouse does not act on (the Open link's click, other
// interaction types), which Slack only needs acknowledged. r's body must already be
// size-limited.
func (in *Interactions) Read(ctx context.Context, r *http.Request) (*Click, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	if err := in.verify(r.Header, body); err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	payload := form.Get("payload")
	if payload == "" {
		return nil, fmt.Errorf("%w: no payload", ErrMalformed)
	}
	var cb slackapi.InteractionCallback
	if err := json.Unmarshal([]byte(payload), &cb); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if cb.Type != slackapi.InteractionTypeBlockActions {
		return nil, nil
	}
	var act *slackapi.BlockAction
	for _, a := range cb.ActionCallback.BlockActions {
		if a != nil && (a.ActionID == ActionApprove || a.ActionID == ActionReject) {
			act = a
			break
		}
	}
	if act == nil {
		return nil, nil
	}
	if act.Value == "" || cb.User.ID == "" {
		return nil, fmt.Errorf("%w: a button click without a value or a user", ErrMalformed)
	}
	c := &Click{Token: act.Value, ActionID: act.ActionID, SlackUserID: cb.User.ID, ResponseURL: cb.ResponseURL,
		Channel: firstOf(cb.Container.ChannelID, cb.Channel.ID), TS: firstOf(cb.Container.MessageTs, cb.Message.Timestamp)}
	// The payload names the user but not their address; the profile does (scope
	// users:read.email). Only a verified payload gets this far, so nobody can make
	// Gatehouse look up arbitrary users.
	u, err := in.api.GetUserInfoContext(ctx, cb.User.ID)
	if err != nil {
		return c, fmt.Errorf("slack users.info: %w", err)
	}
	if u.Deleted || u.IsBot || u.Profile.Email == "" {
		return c, fmt.Errorf("slack users.info: user %s has no usable e-mail address", cb.User.ID)
	}
	c.Email = u.Profile.Email
	return c, nil
}

// verify checks Slack's v0 signature: hex HMAC-SHA256 of "v0:<timestamp>:<body>" keyed
// with the signing secret, with the timestamp within five minutes of now (slack-go
// checks both, the comparison in constant time). A captured request replays within
// those five minutes, which is harmless here: the token it carries is single-use.
func (in *Interactions) verify(h http.Header, body []byte) error {
	sv, err := slackapi.NewSecretsVerifier(h, in.SigningSecret)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	if _, err := sv.Write(body); err != nil {
		return fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	if err := sv.Ensure(); err != nil {
		return fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return nil
}

// Reply shows text to the clicker only (an ephemeral message through the click's
// response URL), e.g. why a click was refused. Slack ignores the body of the answer to
// a block_actions request, so this is the way to tell the person anything.
func (in *Interactions) Reply(ctx context.Context, c *Click, text string) error {
	if c == nil || c.ResponseURL == "" {
		return nil
	}
	u, err := url.Parse(c.ResponseURL)
	if err != nil || !in.anyResponseURL && (u.Scheme != "https" || u.Host != "hooks.slack.com") {
		return fmt.Errorf("slack: refusing response URL %q", c.ResponseURL)
	}
	_, _, _, err = in.api.SendMessageContext(ctx, c.Channel,
		slackapi.MsgOptionResponseURL(c.ResponseURL, slackapi.ResponseTypeEphemeral),
		slackapi.MsgOptionText(escapeText(text), false))
	if err != nil {
		return fmt.Errorf("slack response_url: %w", err)
	}
	return nil
}
