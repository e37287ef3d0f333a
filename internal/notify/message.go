package notify

import (
	"context"
	"errors"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
	"time"
)

// Channel names: the value of a delivery's channel column, of an action token's
// channel, and of resolved_via when a person decides through that channel.
const (
	ChannelPush    = "push"
	ChannelNtfy    = "ntfy"
	ChannelSlack   = "slack"
	ChannelWebhook = "webhook"
)

// Kinds of notification.
const (
	// KindCreated announces a new prompt (after the person's delay and quiet hours).
	KindCreated = "created"
	// KindReminder repeats a still-pending prompt shortly before it expires.
	KindReminder = "reminder"
	// KindResolved follows a delivered KindCreated with the outcome, so every channel
	// that showed the question shows the answer (Slack updates its message in place,
	// Web Push replaces the notification with the same tag).
	KindResolved = "resolved"
	// KindTest is the message of the settings page's test button: it names no prompt
	// and carries no action links, so it decides nothing.
	KindTest = "test"
	// KindWaiting says an agent waits for its person outside Gatehouse (SendWaiting):
	// it names a session, not a prompt, and carries no action links.
	KindWaiting = "waiting"
)

// Message is one notification for one person on one channel: everything a Channel
// needs to render and send it. The dispatcher builds it from the outbox row, the
// prompt and the person's settings; channels never read the database.
type Message struct {
	// DeliveryID is stable across retries of this delivery: the webhook-id, the push
	// Topic, an idempotency key for receivers that deduplicate.
	DeliveryID string
	Kind       string
	// Recipient is the Gatehouse identity the message is for.
	Recipient string
	Prompt    Summary
	// ApproveURL is the absolute link to the approval page.
	ApproveURL string
	// AcceptURL and DeclineURL are absolute, signed, single-use action links for this
	// recipient (GET shows a confirmation page, POST decides). Both are empty when the
	// prompt cannot be answered from a notification (it needs answers, or its card is
	// cut short) and on KindResolved.
	AcceptURL  string
	DeclineURL string
	// AcceptToken and DeclineToken are the action tokens inside those links (Slack's
	// buttons carry them as their value).
	AcceptToken  string
	DeclineToken string
	// Outcome is set on KindResolved.
	Outcome *Outcome
	// Ref is what the channel returned when it delivered this prompt's KindCreated to
	// the same target (Slack: "channel ts"), for updates in place; "" otherwise.
	Ref    string
	Target Target
}

// Summary says what is asked, in one screen: bounded plain text, never markup.
type Summary struct {
	SessionID     string
	ElicitationID string
	// SessionTitle and Agent name which agent and session asks.
	SessionTitle string
	Agent        string
	// Vendor is who asks ("Claude Code", "Codex", "MCP server").
	Vendor string
	Origin string
	// Title is one line: "Claude Code wants to run Bash".
	Title string
	Tool  string
	// Detail is the command, path or message (bounded; Cut reports it was shortened).
	Detail string
	Cut    bool
	Cwd    string
	// Answerable reports that the prompt can be approved or rejected from the
	// notification itself (AcceptURL/DeclineURL are set).
	Answerable bool
	// Risk is the request's rating (nil when it has none); a high or critical one
	// leads the title and its reasons lead the detail.
	Risk      *risk.Assessment
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Outcome is how a prompt ended.
type Outcome struct {
	// Status is resolved, expired or abandoned.
	Status string
	// Action is accept, decline or cancel (resolved only).
	Action      string
	ResolvedBy  string
	ResolvedVia string
	ResolvedAt  time.Time
}

// Target is where a channel sends, from the person's settings.
type Target struct {
	// URL is the webhook URL or the ntfy topic URL (https://ntfy.example/topic).
	URL string
	// Secret is the webhook's Standard Webhooks secret (whsec_…).
	Secret string
	// Token is the ntfy access token ("" for none).
	Token string
	// Push is the Web Push subscription (push only).
	Push *PushSubscription
	// SlackUser is the recipient's e-mail, which the Slack channel looks up.
	Email string
}

// PushSubscription is a browser's PushSubscription (its toJSON shape, flattened).
type PushSubscription struct {
	ID       string
	Endpoint string
	P256dh   string
	Auth     string
}

// Channel delivers messages of one kind. Send is called at least once per message
// (a crash between sending and recording repeats it; DeliveryID lets receivers
// deduplicate) and must honor ctx's deadline.
type Channel interface {
	Name() string
	// Send delivers m and returns the reference of what it created (Slack: "channel
	// ts"; others ""). An error means the receiver did not take it: the dispatcher
	// retries with backoff, unless the error is Permanent.
	Send(ctx context.Context, m *Message) (ref string, err error)
}

// permanent marks an error that retrying cannot fix.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err as not worth retrying (a push subscription that is gone, a Slack
// user that does not exist): the delivery fails at once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// IsPermanent reports whether err was marked Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}
