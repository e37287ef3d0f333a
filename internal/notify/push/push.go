// Package push is the Web Push channel (RFC 8030, 8291, 8292): it encrypts a small
// JSON message for one subscribed browser and hands it to that browser's push
// service, signed with the server's VAPID key. The service worker (static/sw.js)
// turns the JSON into a notification with Approve and Reject buttons.
package push

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
)

// ErrGone is the push service's answer that a subscription no longer exists (404 or
// 410): the browser unsubscribed or its data was cleared. Send returns it marked
// notify.Permanent, so the delivery fails at once instead of retrying.
var ErrGone = errors.New("push subscription is gone")

// Bounds of a message. Push services must accept 4 KiB of encrypted payload; the
// record overhead and padding leave a little under 4 000 bytes of plaintext, so the
// JSON stays below maxPayload by shortening the body.
const (
	maxPayload = 3000
	// minTTL and maxTTL bound how long a push service keeps an undelivered message: a
	// prompt's notification is worthless after the prompt expires, and a phone that is
	// off for a day should not wake to a pile of them.
	minTTL     = 60
	maxTTL     = 24 * 60 * 60
	defaultTTL = 60 * 60
	// resolvedTTL keeps the outcome long enough to replace a question shown on a
	// device that was offline for a while.
	resolvedTTL = 12 * 60 * 60
)

// Payload is the JSON the service worker receives in a push event.
type Payload struct {
	Kind  string `json:"kind"`
	Title string `json:"title"`
	Body  string `json:"body"`
	// Tag is the elicitation id: a later message about the same prompt (a reminder,
	// the outcome) replaces the notification instead of stacking another one.
	Tag string `json:"tag"`
	// URL is the approval page, opened by a click outside the buttons.
	URL string `json:"url"`
	// Actions are the Approve and Reject buttons, each with its single-use action link
	// (present only when the prompt can be answered from the notification).
	Actions []Action `json:"actions,omitempty"`
	// Outcome is the human text of how the prompt ended (KindResolved only).
	Outcome string `json:"outcome,omitempty"`
}

// Action is one notification button.
type Action struct {
	Action string `json:"action"`
	Title  string `json:"title"`
	URL    string `json:"url"`
}

// Keys is the server's VAPID key pair, base64url as webpush-go and browsers expect
// (Public is the 65-byte uncompressed P-256 point, the applicationServerKey).
type Keys struct {
	Public  string `json:"public"`
	Private string `json:"private"`
}

// Channel sends Web Push messages. It is safe for concurrent use.
type Channel struct {
	keys       Keys
	subscriber string
	client     *http.Client
	now        func() time.Time
}

// New returns the push channel. subscriber is the operator's contact the push
// services see in the VAPID token (an https URL or an e-mail address); client is
// notify.HTTPClient, so a subscription endpoint cannot point into the private network.
func New(keys Keys, subscriber string, client *http.Client) *Channel {
	if client == nil {
		client = http.DefaultClient
	}
	return &Channel{keys: keys, subscriber: subscriber, client: client, now: time.Now}
}

// Name is notify.ChannelPush.
func (c *Channel) Name() string { return notify.ChannelPush }

// Send encrypts m for its target subscription and posts it to the push service.
func (c *Channel) Send(ctx context.Context, m *notify.Message) (string, error) {
	sub := m.Target.Push
	if sub == nil || sub.Endpoint == "" {
		return "", notify.Permanent(errors.New("push: message has no subscription"))
	}
	body, err := json.Marshal(BuildPayload(m))
	if err != nil {
		return "", err
	}
	urgency := webpush.UrgencyHigh
	if m.Kind == notify.KindResolved {
		urgency = webpush.UrgencyNormal
	}
	client := &recordingClient{c: c.client}
	resp, err := webpush.SendNotificationWithContext(ctx, body,
		&webpush.Subscription{Endpoint: sub.Endpoint, Keys: webpush.Keys{P256dh: sub.P256dh, Auth: sub.Auth}},
		&webpush.Options{
			HTTPClient:      client,
			Subscriber:      c.subscriber,
			Topic:           Topic(m.Prompt.ElicitationID),
			TTL:             c.ttl(m),
			Urgency:         urgency,
			VAPIDPublicKey:  c.keys.Public,
			VAPIDPrivateKey: c.keys.Private,
		})
	if err != nil {
		if !client.tried {
			// webpush-go failed before sending: the subscription's keys do not
			// decode or are not a curve point. Retrying cannot fix that.
			return "", notify.Permanent(fmt.Errorf("push: %w", err))
		}
		return "", fmt.Errorf("push: %w", err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return "", nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return "", notify.Permanent(fmt.Errorf("%w (push service answered %d)", ErrGone, resp.StatusCode))
	default:
		return "", fmt.Errorf("push service answered %d: %s", resp.StatusCode, oneLine(string(snippet)))
	}
}

// recordingClient notes whether webpush-go got as far as sending: an error before
// that (keys that do not decode, a point off the curve) is the subscription's fault
// and permanent, one after it is the network's and worth retrying.
type recordingClient struct {
	c     *http.Client
	tried bool
}

func (r *recordingClient) Do(req *http.Request) (*http.Response, error) {
	r.tried = true
	return r.c.Do(req)
}

// ttl is how long the push service may hold m: until the prompt expires for
// questions, a fixed while for outcomes.
func (c *Channel) ttl(m *notify.Message) int {
	if m.Kind == notify.KindResolved {
		return resolvedTTL
	}
	if m.Prompt.ExpiresAt.IsZero() {
		return defaultTTL
	}
	secs := int(m.Prompt.ExpiresAt.Sub(c.now()).Seconds())
	return min(max(secs, minTTL), maxTTL)
}

// Topic derives the push Topic header from an elicitation id: at most 32 base64url
// characters (RFC 8030 §5.4), the same for every message about one prompt, so a push
// service holding an undelivered question replaces it with the reminder or outcome.
func Topic(elicitationID string) string {
	sum := sha256.Sum256([]byte(elicitationID))
	return base64.RawURLEncoding.EncodeToString(sum[:24])
}

// BuildPayload renders m as the JSON the service worker understands, bounded to
// maxPayload bytes by shortening the body.
func BuildPayload(m *notify.Message) Payload {
	p := Payload{Kind: m.Kind, Title: m.Prompt.Title, Tag: m.Prompt.ElicitationID, URL: m.ApproveURL}
	if p.Title == "" {
		p.Title = "Gatehouse"
	}
	switch m.Kind {
	case notify.KindResolved:
		p.Outcome = OutcomeText(m.Outcome)
		p.Body = p.Outcome
	default:
		if m.Kind == notify.KindReminder {
			p.Title = "Reminder: " + p.Title
		}
		p.Body = questionBody(&m.Prompt)
		if m.Prompt.Answerable && m.AcceptURL != "" && m.DeclineURL != "" {
			p.Actions = []Action{
				{Action: "accept", Title: "Approve", URL: m.AcceptURL},
				{Action: "decline", Title: "Reject", URL: m.DeclineURL},
			}
		}
	}
	p.Title = truncate(p.Title, 200)
	// Shorten the body, the one free-form part, to the longest prefix with which the
	// whole document fits (a binary search over its length in runes: JSON escaping
	// makes a rune cost 1 to 6 bytes, so the byte excess alone cannot say where to cut).
	if size(p) <= maxPayload {
		return p
	}
	full := p.Body
	lo, hi := 0, utf8.RuneCountInString(full)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		p.Body = truncate(full, mid)
		if size(p) <= maxPayload {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	p.Body = truncate(full, lo)
	return p
}

func size(p Payload) int {
	b, _ := json.Marshal(p)
	return len(b)
}

// questionBody is who asks and what: "my-session · main agent" then the detail.
func questionBody(s *notify.Summary) string {
	var who []string
	for _, part := range []string{s.SessionTitle, s.Agent} {
		if part != "" {
			who = append(who, part)
		}
	}
	lines := []string{}
	if len(who) > 0 {
		lines = append(lines, strings.Join(who, " · "))
	}
	if s.Detail != "" {
		d := s.Detail
		if s.Cut {
			d += "…"
		}
		lines = append(lines, d)
	}
	return strings.Join(lines, "\n")
}

// OutcomeText says how a prompt ended, for the notification that replaces the question.
func OutcomeText(o *notify.Outcome) string {
	if o == nil {
		return "Decided"
	}
	switch o.Status {
	case "expired":
		return "Expired without an answer"
	case "abandoned":
		return "No longer needed: the agent stopped waiting"
	}
	verb := map[string]string{"accept": "Approved", "decline": "Rejected", "cancel": "Cancelled"}[o.Action]
	if verb == "" {
		verb = "Decided"
	}
	if o.ResolvedBy != "" {
		verb += " by " + o.ResolvedBy
	}
	if o.ResolvedVia != "" {
		verb += " via " + o.ResolvedVia
	}
	return verb
}

// truncate cuts s to at most n runes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return ""
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func oneLine(s string) string {
	return truncate(strings.Join(strings.Fields(s), " "), 200)
}
