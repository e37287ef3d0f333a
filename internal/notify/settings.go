package notify

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
)

// Settings is one person's notification settings: the document of GET/PUT
// /v1/me/notifications and /settings/notifications (SPEC §11 fixes the webhook part).
// A channel is on when its object is present and not "enabled": false.
type Settings struct {
	// DelaySeconds: notify only about prompts still pending this long (0: at once), so a
	// person at the terminal is not paged for what they answer there.
	DelaySeconds int `json:"delay_seconds"`
	// ReminderSeconds: remind this long before a still-pending prompt expires (0: never).
	ReminderSeconds int `json:"reminder_seconds"`
	// QuietHours hold "created" and reminder notifications until they end.
	QuietHours *QuietHours      `json:"quiet_hours,omitempty"`
	Push       *PushSettings    `json:"push,omitempty"`
	Ntfy       *NtfySettings    `json:"ntfy,omitempty"`
	Slack      *SlackSettings   `json:"slack,omitempty"`
	Webhook    *WebhookSettings `json:"webhook,omitempty"`
}

// QuietHours is a daily window, "HH:MM" to "HH:MM" in TimeZone (an IANA name; "" is
// UTC). A window whose end is before its start runs over midnight.
type QuietHours struct {
	Start    string `json:"start"`
	End      string `json:"end"`
	TimeZone string `json:"time_zone,omitempty"`
}

// PushSettings turns Web Push on for every device the person subscribed. Devices are
// read-only here (they are added with POST /v1/me/push-subscriptions from a browser).
type PushSettings struct {
	Enabled *bool    `json:"enabled,omitempty"`
	Devices []Device `json:"devices,omitempty"`
	// VAPIDPublicKey is the server's application server key (read-only).
	VAPIDPublicKey string `json:"vapid_public_key,omitempty"`
}

// Device is one subscribed browser, as shown back (never its keys).
type Device struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Host      string    `json:"host"`
	CreatedAt time.Time `json:"created_at"`
}

// NtfySettings sends to one ntfy topic (any ntfy server), with an access token.
type NtfySettings struct {
	Enabled *bool  `json:"enabled,omitempty"`
	URL     string `json:"url"`
	Token   string `json:"token,omitempty"`
}

// SlackSettings sends a direct message from the operator's Slack app to the Slack
// user with the person's e-mail.
type SlackSettings struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// WebhookSettings posts signed Standard Webhooks events to URL.
type WebhookSettings struct {
	Enabled *bool  `json:"enabled,omitempty"`
	URL     string `json:"url"`
	Secret  string `json:"secret,omitempty"`
}

// on reports whether a channel object is present and enabled.
func on(present bool, enabled *bool) bool { return present && (enabled == nil || *enabled) }

// PushOn, NtfyOn, SlackOn and WebhookOn report which channels are on.
func (s *Settings) PushOn() bool    { return s.Push != nil && on(true, s.Push.Enabled) }
func (s *Settings) NtfyOn() bool    { return s.Ntfy != nil && on(true, s.Ntfy.Enabled) }
func (s *Settings) SlackOn() bool   { return s.Slack != nil && on(true, s.Slack.Enabled) }
func (s *Settings) WebhookOn() bool { return s.Webhook != nil && on(true, s.Webhook.Enabled) }

// Bounds of the settings document.
const (
	maxDelay        = 24 * 60 * 60
	maxReminder     = 24 * 60 * 60
	maxSettingsURL  = 2048
	maxSecretLength = 512
)

// ParseSettings decodes and checks a settings document. Unknown fields and bad values
// are errors naming the field (a 400).
func ParseSettings(raw []byte) (*Settings, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	var s Settings
	if err := dec.Decode(&s); err != nil {
		return nil, errs.Invalid("body", "not a notification settings document: %v", err)
	}
	if dec.More() {
		return nil, errs.Invalid("body", "one JSON document expected")
	}
	return &s, nil
}

// check validates the document against the operator's rules (URLs must be https and
// public unless allowPrivate).
func (s *Settings) check(allowPrivate bool) error {
	if s.DelaySeconds < 0 || s.DelaySeconds > maxDelay {
		return errs.Invalid("delay_seconds", "must be between 0 and %d", maxDelay)
	}
	if s.ReminderSeconds < 0 || s.ReminderSeconds > maxReminder {
		return errs.Invalid("reminder_seconds", "must be between 0 and %d", maxReminder)
	}
	if q := s.QuietHours; q != nil {
		if _, err := clockOf(q.Start); err != nil {
			return errs.Invalid("quiet_hours.start", "want HH:MM (24-hour), got %q", q.Start)
		}
		if _, err := clockOf(q.End); err != nil {
			return errs.Invalid("quiet_hours.end", "want HH:MM (24-hour), got %q", q.End)
		}
		if q.Start == q.End {
			return errs.Invalid("quiet_hours.end", "must differ from start")
		}
		if _, err := time.LoadLocation(q.TimeZone); err != nil || strings.EqualFold(q.TimeZone, "local") {
			return errs.Invalid("quiet_hours.time_zone", "unknown time zone %q (want an IANA name such as Europe/Berlin)", q.TimeZone)
		}
	}
	if n := s.Ntfy; n != nil {
		if err := checkURL("ntfy.url", n.URL, allowPrivate); err != nil {
			return err
		}
		if u, _ := url.Parse(n.URL); strings.Trim(u.Path, "/") == "" || strings.Contains(strings.Trim(u.Path, "/"), "/") {
			return errs.Invalid("ntfy.url", "want the topic's URL, such as https://ntfy.sh/my-topic")
		}
		if len(n.Token) > maxSecretLength || strings.ContainsAny(n.Token, "\r\n") {
			return errs.Invalid("ntfy.token", "not a valid access token")
		}
	}
	if w := s.Webhook; w != nil {
		if err := checkURL("webhook.url", w.URL, allowPrivate); err != nil {
			return err
		}
		if w.Secret != "" && !strings.Contains(w.Secret, maskMark) {
			if err := checkWebhookSecret(w.Secret); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkURL refuses what a notification must not be sent to: anything but https (http
// too with allowPrivate), URLs with credentials, and hosts that are private, loopback
// or link-local addresses or names (checked again at send time, see Transport).
func checkURL(field, raw string, allowPrivate bool) error {
	if raw == "" {
		return errs.Invalid(field, "required")
	}
	if len(raw) > maxSettingsURL {
		return errs.Invalid(field, "longer than %d characters", maxSettingsURL)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return errs.Invalid(field, "not an absolute URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	default:
		return errs.Invalid(field, "must be https")
	}
	if u.User != nil {
		return errs.Invalid(field, "must not carry credentials")
	}
	if u.Fragment != "" {
		return errs.Invalid(field, "must not have a fragment")
	}
	if !allowPrivate && privateHost(u.Hostname()) {
		return errs.Invalid(field, "must be a public host (the operator can allow private ones with --notify-allow-private)")
	}
	return nil
}

// clockOf parses "HH:MM" into minutes after midnight.
func clockOf(s string) (int, error) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		return 0, fmt.Errorf("bad clock %q", s)
	}
	return t.Hour()*60 + t.Minute(), nil
}

// checkWebhookSecret accepts a Standard Webhooks secret: "whsec_" and base64 of 24 to
// 64 random bytes.
func checkWebhookSecret(s string) error {
	body, ok := strings.CutPrefix(s, "whsec_")
	if !ok || len(s) > maxSecretLength {
		return errs.Invalid("webhook.secret", "want a Standard Webhooks secret: whsec_ followed by base64")
	}
	raw, err := base64.StdEncoding.DecodeString(body)
	if err != nil || len(raw) < 24 || len(raw) > 64 {
		return errs.Invalid("webhook.secret", "want whsec_ followed by the base64 of 24 to 64 random bytes")
	}
	return nil
}
