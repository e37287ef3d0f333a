// Package webhook delivers notifications as signed Standard Webhooks events (SPEC §11):
// a POST of {"type","timestamp","data"} with webhook-id, webhook-timestamp and
// webhook-signature headers, signed with the person's whsec_ secret, so any receiver
// with a Standard Webhooks library can check that Gatehouse sent it.
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Event types: the only two SPEC §11 names. A reminder is sent as TypeCreated again (see
// Channel.Send), and so are the settings page's test (OriginTest) and an agent's notice
// that it waits for its person (origin notify.OriginWaiting, no elicitation_id), so
// receivers need to know no third type.
const (
	TypeCreated  = "elicitation.created"
	TypeResolved = "elicitation.resolved"
)

// OriginTest is the origin of the settings page's test event (no session, no prompt).
const OriginTest = "test"

// UserAgent names Gatehouse to receivers (and in their access logs).
const UserAgent = "Gatehouse-Webhooks/1"

// maxDrain bounds how much of a receiver's answer is read: enough to reuse the
// connection after the usual short reply, never enough for a hostile receiver to make
// the dispatcher read forever.
const maxDrain = 64 << 10

// maxErrorBody bounds how much of a receiver's answer an error quotes.
const maxErrorBody = 200

// Event is the JSON body of a delivery, exactly the fields SPEC §11 fixes.
type Event struct {
	Type string `json:"type"`
	// Timestamp is the send time (RFC 3339), the same instant as webhook-timestamp.
	Timestamp time.Time `json:"timestamp"`
	Data      Data      `json:"data"`
}

// Data is what an event says about the prompt. Action, ResolvedBy and ResolvedVia are
// only present on elicitation.resolved (and Action only when a person decided).
type Data struct {
	SessionID     string `json:"session_id"`
	ElicitationID string `json:"elicitation_id"`
	// Message is the one-line request ("Claude Code wants to run Bash"): the detail may
	// hold secrets a third-party receiver has no need to see.
	Message string `json:"message"`
	// ApproveURL is the absolute link to the approval page.
	ApproveURL  string `json:"approve_url"`
	Origin      string `json:"origin"`
	Status      string `json:"status"`
	Action      string `json:"action,omitempty"`
	ResolvedBy  string `json:"resolved_by,omitempty"`
	ResolvedVia string `json:"resolved_via,omitempty"`
}

// Channel posts signed events to each person's webhook URL.
type Channel struct {
	client *http.Client
	// Now is the send time (webhook-timestamp and the body's timestamp); tests replace it
	// to check that receivers refuse stale deliveries.
	Now func() time.Time
}

// New returns the webhook channel sending with client, which should be
// notify.HTTPClient: it refuses private addresses and never follows redirects, and it
// keeps connections alive, which the dispatcher's throughput depends on.
func New(client *http.Client) *Channel {
	return &Channel{client: client, Now: time.Now}
}

// Name is notify.ChannelWebhook.
func (c *Channel) Name() string { return notify.ChannelWebhook }

// EventFor builds the event m announces, stamped at now. KindReminder becomes
// elicitation.created again, with the same data: the SPEC names no reminder type, and
// a receiver that deduplicates by elicitation_id ignores it while one that pages a
// person pages again, which is what a reminder is for. (Returning nil without posting
// would let the dispatcher record a delivery that never happened.)
func EventFor(m *notify.Message, now time.Time) (*Event, error) {
	d := Data{
		SessionID:     m.Prompt.SessionID,
		ElicitationID: m.Prompt.ElicitationID,
		Message:       m.Prompt.Title,
		ApproveURL:    m.ApproveURL,
		Origin:        m.Prompt.Origin,
		Status:        models.StatusPending,
	}
	ev := &Event{Timestamp: now.UTC().Truncate(time.Second), Data: d}
	switch m.Kind {
	case notify.KindCreated, notify.KindReminder:
		ev.Type = TypeCreated
	case notify.KindTest:
		// The settings page's test: the created event's shape, so a receiver that
		// takes real events takes it, with no ids and origin "test" to tell it apart.
		ev.Type = TypeCreated
		ev.Data.Origin = OriginTest
	case notify.KindWaiting:
		// Like the test: the created event's shape, the session's page as the link, no
		// prompt id, and the origin telling it apart.
		ev.Type = TypeCreated
		ev.Data.Origin = notify.OriginWaiting
	case notify.KindResolved:
		if m.Outcome == nil {
			return nil, errors.New("webhook: resolved message without an outcome")
		}
		ev.Type = TypeResolved
		ev.Data.Status = m.Outcome.Status
		ev.Data.Action = m.Outcome.Action
		ev.Data.ResolvedBy = m.Outcome.ResolvedBy
		ev.Data.ResolvedVia = m.Outcome.ResolvedVia
	default:
		return nil, fmt.Errorf("webhook: unknown message kind %q", m.Kind)
	}
	return ev, nil
}

// Send posts m to m.Target.URL, signed with m.Target.Secret. webhook-id is
// m.DeliveryID, the same on every retry, so receivers can deduplicate; the timestamp
// is the time of this attempt (a receiver refuses signatures older than its
// tolerance, so a retry must be signed afresh).
//
// A 2xx answer is delivered. 410 Gone and other 4xx answers (but 408, 409, 425 and
// 429, which are about timing) are Permanent: the receiver refuses this message and
// would refuse it again. 5xx answers, those four, timeouts and connection errors are
// retryable. Errors name the status and quote a bounded, printable part of the
// answer; they never carry the secret or the URL (which may hold a token).
func (c *Channel) Send(ctx context.Context, m *notify.Message) (string, error) {
	if m.Target.Secret == "" {
		// An unsigned event could be forged by anyone who learns the URL; the settings
		// service is expected to give every webhook a secret.
		return "", notify.Permanent(errors.New("webhook: no signing secret configured"))
	}
	wh, err := standardwebhooks.NewWebhook(m.Target.Secret)
	if err != nil {
		return "", notify.Permanent(errors.New("webhook: the signing secret is not whsec_ followed by base64"))
	}
	if m.DeliveryID == "" {
		return "", notify.Permanent(errors.New("webhook: message has no delivery id"))
	}
	ev, err := EventFor(m, c.Now())
	if err != nil {
		return "", notify.Permanent(err)
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return "", notify.Permanent(fmt.Errorf("webhook: encode event: %w", err))
	}
	sig, err := wh.Sign(m.DeliveryID, ev.Timestamp, body)
	if err != nil {
		return "", notify.Permanent(fmt.Errorf("webhook: sign: %w", err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.Target.URL, bytes.NewReader(body))
	if err != nil {
		return "", notify.Permanent(errors.New("webhook: the URL is not valid"))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(standardwebhooks.HeaderWebhookID, m.DeliveryID)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(ev.Timestamp.Unix(), 10))
	req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	resp, err := c.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("webhook: POST failed: %w", withoutURL(err))
	}
	snippet := drain(resp.Body)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return "", nil
	}
	err = fmt.Errorf("webhook: receiver answered %s%s", resp.Status, snippet)
	if Retryable(resp.StatusCode) {
		return "", err
	}
	return "", notify.Permanent(err)
}

// Retryable reports whether a non-2xx status is worth another attempt: server errors,
// and the client errors that say "not now" rather than "never" (408 Request Timeout,
// 409 Conflict, 425 Too Early, 429 Too Many Requests). 3xx is not retryable: the client
// follows no redirects, and the next attempt would be redirected again.
func Retryable(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooEarly, http.StatusTooManyRequests:
		return true
	}
	return status >= 500
}

// drain reads what is left of an answer, bounded, and closes it, so the connection goes
// back to the pool; it returns ": " and a short printable quote of the answer for an
// error message ("" when empty).
func drain(body io.ReadCloser) string {
	defer body.Close()
	head := make([]byte, maxErrorBody)
	n, _ := io.ReadFull(body, head)
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrain))
	return quote(head[:n])
}

// quote renders at most maxErrorBody bytes of an answer as one printable line for an
// error message: ": " + text, or "" when there is nothing to show.
func quote(b []byte) string {
	if len(b) > maxErrorBody {
		b = b[:maxErrorBody]
	}
	s := strings.Map(func(r rune) rune {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, string(b))
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return ""
	}
	return ": " + s
}

// withoutURL strips the request URL from a transport error (a *url.Error prints it, and
// a webhook URL may carry a token), keeping the cause so errors.Is still finds
// context.DeadlineExceeded and friends.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
