// Package ntfy delivers notifications to a person's ntfy topic (any ntfy server), with
// Approve and Reject buttons that post the signed action links straight from the
// phone, so a prompt can be answered without opening Gatehouse.
//
// Messages are published as JSON to the server's root (docs.ntfy.sh/publish, "Publish
// as JSON"): header-style publishing would need every untrusted string squeezed into
// HTTP header syntax, JSON carries it as is. Markdown is always off: titles and details
// come from agents and tools, and must show as the text they are.
//
// The outcome replaces the question on the phone: every message about one prompt for
// one person carries the same sequence_id, which ntfy 2.16 and later use to update a
// notification in place. Older servers ignore the field and show the outcome as a
// follow-up notification with the same title, which is still right.
package ntfy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
)

// maxDrain bounds how much of an answer is read so the connection can be reused.
const maxDrain = 64 << 10

// maxErrorBody bounds how much of an answer an error quotes.
const maxErrorBody = 200

// maxMessage keeps the body under ntfy's default message limit (4,096 bytes), past
// which ntfy turns the message into an attachment.
const maxMessage = 3500

// Priorities (ntfy: 1 min … 3 default … 5 max).
const (
	priorityLow  = 2
	priorityHigh = 4
)

// Publish is the JSON ntfy accepts at its root.
type Publish struct {
	Topic    string   `json:"topic"`
	Title    string   `json:"title,omitempty"`
	Message  string   `json:"message"`
	Priority int      `json:"priority,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	// Click opens the approval page when the notification itself is tapped.
	Click   string   `json:"click,omitempty"`
	Actions []Action `json:"actions,omitempty"`
	// Markdown is always false and always sent: the text is untrusted.
	Markdown bool `json:"markdown"`
	// SequenceID ties every message about one prompt for one person together, so the
	// outcome replaces the question (ntfy ≥ 2.16).
	SequenceID string `json:"sequence_id,omitempty"`
}

// Action is an ntfy action button: "view" opens URL; "http" makes the request
// itself from the phone (Method, Headers, Body) and, with Clear, dismisses the
// notification when it succeeds.
type Action struct {
	Action  string            `json:"action"`
	Label   string            `json:"label"`
	URL     string            `json:"url"`
	Method  string            `json:"method,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	Clear   bool              `json:"clear,omitempty"`
}

// Channel publishes to each person's ntfy topic.
type Channel struct {
	client *http.Client
}

// New returns the ntfy channel sending with client, which should be
// notify.HTTPClient (it refuses private addresses and never follows redirects).
func New(client *http.Client) *Channel { return &Channel{client: client} }

// Name is notify.ChannelNtfy.
func (c *Channel) Name() string { return notify.ChannelNtfy }

// Send publishes m to the topic m.Target.URL names, with m.Target.Token as a bearer
// token when set. 2xx is delivered; 401 and 403 are Permanent (the token is wrong or
// lacks write access, and will until the person changes it); other 4xx but 408, 409,
// 425 and 429 are Permanent; 5xx, those four, timeouts and connection errors are
// retryable. Errors never carry the token or the URL.
func (c *Channel) Send(ctx context.Context, m *notify.Message) (string, error) {
	root, topic, err := SplitTopicURL(m.Target.URL)
	if err != nil {
		return "", notify.Permanent(err)
	}
	p, err := PublishFor(m, topic)
	if err != nil {
		return "", notify.Permanent(err)
	}
	body, err := json.Marshal(p)
	if err != nil {
		return "", notify.Permanent(fmt.Errorf("ntfy: encode message: %w", err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, root, bytes.NewReader(body))
	if err != nil {
		return "", notify.Permanent(errors.New("ntfy: the topic URL is not valid"))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Gatehouse-ntfy/1")
	if m.Target.Token != "" {
		req.Header.Set("Authorization", "Bearer "+m.Target.Token)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // a *url.Error prints the URL
		}
		return "", fmt.Errorf("ntfy: publish failed: %w", err)
	}
	snippet := drain(resp.Body)
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		return "", nil
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		if m.Target.Token == "" {
			return "", notify.Permanent(fmt.Errorf("ntfy answered %s: the topic needs an access token%s", resp.Status, snippet))
		}
		return "", notify.Permanent(fmt.Errorf("ntfy rejected the token (%s)%s", resp.Status, snippet))
	case s >= 500 || s == http.StatusRequestTimeout || s == http.StatusConflict ||
		s == http.StatusTooEarly || s == http.StatusTooManyRequests:
		return "", fmt.Errorf("ntfy answered %s%s", resp.Status, snippet)
	default:
		return "", notify.Permanent(fmt.Errorf("ntfy answered %s%s", resp.Status, snippet))
	}
}

// SplitTopicURL splits a topic URL (https://ntfy.example/topic) into the server's root,
// where JSON is published (https://ntfy.example/), and the topic. A server under a
// path (https://example/ntfy/topic) keeps it (https://example/ntfy/).
func SplitTopicURL(raw string) (root, topic string, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", "", errors.New("ntfy: the topic URL is not an absolute http(s) URL")
	}
	path := strings.TrimSuffix(u.Path, "/")
	i := strings.LastIndexByte(path, '/')
	topic = path[i+1:]
	if topic == "" {
		return "", "", errors.New("ntfy: the topic URL names no topic")
	}
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: path[:i+1]}
	return r.String(), topic, nil
}

// PublishFor renders m for topic. Approve and Reject buttons are offered only while the
// prompt can be answered from the notification; the view button and the tap open the
// approval page in every case.
func PublishFor(m *notify.Message, topic string) (*Publish, error) {
	s := m.Prompt
	p := &Publish{
		Topic:      topic,
		Click:      m.ApproveURL,
		SequenceID: SequenceID(s.ElicitationID, m.Recipient),
	}
	if m.ApproveURL != "" {
		p.Actions = []Action{{Action: "view", Label: "Open", URL: m.ApproveURL}}
	}
	switch m.Kind {
	case notify.KindCreated, notify.KindReminder:
		p.Title = oneLine(s.Title)
		if m.Kind == notify.KindReminder {
			p.Title = "Reminder: " + p.Title
		}
		p.Message = describe(s)
		p.Priority = priorityHigh
		p.Tags = []string{"bell", "gatehouse"}
		if s.Answerable && m.AcceptURL != "" && m.DeclineURL != "" {
			p.Actions = append(p.Actions,
				Action{Action: "http", Label: "Approve", URL: m.AcceptURL, Method: http.MethodPost, Clear: true},
				Action{Action: "http", Label: "Reject", URL: m.DeclineURL, Method: http.MethodPost, Clear: true},
			)
		}
	case notify.KindTest:
		p.Title = oneLine(s.Title)
		p.Message = s.Detail
		p.Tags = []string{"white_check_mark", "gatehouse"}
	case notify.KindWaiting:
		p.Title = oneLine(s.Title)
		p.Message = describe(s)
		p.Tags = []string{"hourglass", "gatehouse"}
	case notify.KindResolved:
		o := m.Outcome
		if o == nil {
			return nil, errors.New("ntfy: resolved message without an outcome")
		}
		verdict, tag := endedOf(o)
		p.Title = verdict + ": " + oneLine(s.Title)
		p.Message = outcomeLine(verdict, o)
		p.Priority = priorityLow // it replaces the question: no need to buzz again
		p.Tags = []string{tag, "gatehouse"}
	default:
		return nil, fmt.Errorf("ntfy: unknown message kind %q", m.Kind)
	}
	if p.Message == "" {
		p.Message = p.Title // ntfy would show "triggered"
	}
	return p, nil
}

// SequenceID is the ntfy sequence id of every message about one prompt for one person
// (ntfy allows 1-64 of [-_A-Za-z0-9]). It is hashed from both so that two people
// sharing a topic do not replace each other's buttons (each carries its own links).
func SequenceID(elicitationID, recipient string) string {
	if elicitationID == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(elicitationID + "\x00" + recipient))
	return "gh-" + hex.EncodeToString(sum[:16])
}

// describe is the body of a question: the detail, where it runs, and who asks.
func describe(s notify.Summary) string {
	var b strings.Builder
	if s.Detail != "" {
		b.WriteString(s.Detail)
		if s.Cut {
			b.WriteString(" …")
		}
		b.WriteString("\n")
	}
	if s.Cwd != "" {
		b.WriteString("in " + oneLine(s.Cwd) + "\n")
	}
	who := strings.TrimSpace(strings.Join(nonEmpty(s.Vendor, s.Agent, s.SessionTitle), " · "))
	if who != "" {
		b.WriteString(oneLine(who))
	}
	return truncate(strings.TrimRight(b.String(), "\n"), maxMessage)
}

// endedOf names an outcome for a title, with the emoji tag that goes with it.
func endedOf(o *notify.Outcome) (verdict, tag string) {
	switch {
	case o.Status == "resolved" && o.Action == "accept":
		return "Approved", "white_check_mark"
	case o.Status == "resolved" && o.Action == "decline":
		return "Rejected", "x"
	case o.Status == "resolved":
		return "Cancelled", "heavy_minus_sign"
	case o.Status == "expired":
		return "Expired", "hourglass"
	case o.Status == "abandoned":
		return "Abandoned", "wastebasket"
	default:
		return "Ended", "heavy_minus_sign"
	}
}

// outcomeLine says who ended the prompt and how.
func outcomeLine(verdict string, o *notify.Outcome) string {
	line := verdict
	if o.ResolvedBy != "" {
		line += " by " + oneLine(o.ResolvedBy)
	}
	if o.ResolvedVia != "" {
		line += " via " + oneLine(o.ResolvedVia)
	}
	switch o.Status {
	case "expired":
		line += " without an answer"
	case "abandoned":
		line += ": the agent stopped waiting"
	}
	return line
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// oneLine folds control characters (newlines included) into spaces: titles are one
// line on a lock screen.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + " …"
}

// drain reads the rest of an answer (bounded) and closes it so the connection is
// reused; it returns ": " and a short printable quote for errors ("" when empty).
func drain(body io.ReadCloser) string {
	defer body.Close()
	head := make([]byte, maxErrorBody)
	n, _ := io.ReadFull(body, head)
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrain))
	s := strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, string(head[:n]))
	if s = strings.Join(strings.Fields(s), " "); s == "" {
		return ""
	}
	return ": " + s
}
