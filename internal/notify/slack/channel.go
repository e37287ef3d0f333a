// Package slack is the Slack notification channel: a direct message from the
// Gatehouse Slack app with the request and Approve / Reject buttons, updated in place
// with the outcome when the prompt is decided anywhere; and the interactivity endpoint's
// half that verifies Slack's signed button clicks and says who clicked what.
//
// The buttons carry the same single-use action tokens as the other channels' action
// links, so deciding from Slack goes through notify.Service.UseAction like every link.
package slack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
)

// Channel sends notifications as direct messages from the Slack app whose bot token it
// holds. It needs the users:read, users:read.email and chat:write scopes.
type Channel struct {
	api *slackapi.Client
}

// New builds the channel. apiURL is the Web API base ("" for Slack's own, a stand-in in
// tests); it must end in "/".
func New(botToken, apiURL string) *Channel {
	return &Channel{api: newClient(botToken, apiURL)}
}

// newClient is the Web API client both halves use. The timeout is a backstop: Send's
// context carries the dispatcher's deadline.
func newClient(botToken, apiURL string) *slackapi.Client {
	opts := []slackapi.Option{slackapi.OptionHTTPClient(&http.Client{Timeout: 30 * time.Second})}
	if apiURL != "" {
		if !strings.HasSuffix(apiURL, "/") {
			apiURL += "/"
		}
		opts = append(opts, slackapi.OptionAPIURL(apiURL))
	}
	return slackapi.New(botToken, opts...)
}

// Name is notify.ChannelSlack.
func (c *Channel) Name() string { return notify.ChannelSlack }

// Send posts the request to the recipient (created, reminder) or updates the message it
// posted earlier with the outcome (resolved). The returned ref is "<channel> <ts>" of
// the posted message.
func (c *Channel) Send(ctx context.Context, m *notify.Message) (string, error) {
	if m.Kind == notify.KindResolved {
		return m.Ref, c.update(ctx, m)
	}
	if m.Target.Email == "" {
		return "", notify.Permanent(errors.New("slack: no e-mail address to find the recipient by"))
	}
	user, err := c.api.GetUserByEmailContext(ctx, m.Target.Email)
	if err != nil {
		return "", classify("users.lookupByEmail", err)
	}
	// Posting to a user ID opens (or reuses) the app's direct message with that person;
	// the answer names the DM channel, which chat.update needs.
	channel, ts, err := c.api.PostMessageContext(ctx, user.ID,
		slackapi.MsgOptionText(fallbackText(m), false),
		slackapi.MsgOptionBlocks(messageBlocks(m)...),
		slackapi.MsgOptionDisableLinkUnfurl(), slackapi.MsgOptionDisableMediaUnfurl())
	if err != nil {
		return "", classify("chat.postMessage", err)
	}
	return channel + " " + ts, nil
}

// update replaces the buttons of the message m.Ref names with the outcome. Without a
// ref (the question was never delivered to Slack) there is nothing to update.
func (c *Channel) update(ctx context.Context, m *notify.Message) error {
	if m.Ref == "" {
		return nil
	}
	channel, ts, ok := strings.Cut(m.Ref, " ")
	if !ok || channel == "" || ts == "" {
		return notify.Permanent(fmt.Errorf("slack: malformed message reference %q", m.Ref))
	}
	_, _, _, err := c.api.UpdateMessageContext(ctx, channel, ts,
		slackapi.MsgOptionText(fallbackText(m), false),
		slackapi.MsgOptionBlocks(messageBlocks(m)...))
	if err != nil {
		return classify("chat.update", err)
	}
	return nil
}

// transientErrors are the Web API error codes that a later attempt can fix; any other
// error code (invalid_auth, channel_not_found, users_not_found, invalid_blocks, …)
// will fail the same way again.
var transientErrors = map[string]bool{
	"ratelimited":         true,
	"rate_limited":        true,
	"internal_error":      true,
	"fatal_error":         true,
	"service_unavailable": true,
	"request_timeout":     true,
	"team_added_to_org":   true,
}

// classify marks err Permanent unless retrying can help: rate limits, Slack's 5xx and
// transient error codes, and network failures are retried by the dispatcher.
func classify(method string, err error) error {
	wrapped := fmt.Errorf("slack %s: %w", method, err)
	var rl *slackapi.RateLimitedError
	var sc slackapi.StatusCodeError
	var se slackapi.SlackErrorResponse
	var ne net.Error
	switch {
	case errors.As(err, &rl):
		return wrapped
	case errors.As(err, &sc):
		if sc.Code >= 500 || sc.Code == http.StatusTooManyRequests || sc.Code == http.StatusRequestTimeout {
			return wrapped
		}
		return notify.Permanent(wrapped)
	case errors.As(err, &se):
		if transientErrors[se.Err] {
			return wrapped
		}
		return notify.Permanent(wrapped)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), errors.As(err, &ne):
		return wrapped
	}
	// Anything else (a body that is not JSON from a proxy in between, a reset
	// connection) may well pass next time.
	return wrapped
}
