package notify

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/models"
)

// maxPushSubscriptions bounds one person's subscribed browsers: each one is a push per
// prompt, and a script re-subscribing in a loop must not grow the table without end.
const maxPushSubscriptions = 20

// maxUserAgent bounds the stored User-Agent (only a device name is made from it).
const maxUserAgent = 512

// PushSubscriptionInput is a browser's PushSubscription.toJSON(), as "Notify this
// device" posts it.
type PushSubscriptionInput struct {
	Endpoint string `json:"endpoint"`
	// ExpirationTime is when the browser will renew the subscription (milliseconds
	// since the epoch; usually null). It is accepted and not kept: a renewed
	// subscription is a new endpoint, and the old one answers 410.
	ExpirationTime *float64 `json:"expirationTime,omitempty"`
	Keys           struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
	// UserAgent is the subscribing browser's User-Agent header (not part of the
	// browser's JSON), from which the device list names the device.
	UserAgent string `json:"-"`
}

// AddPushSubscription subscribes one of user's browsers to Web Push. The endpoint must
// be https (and public) unless the operator allows private URLs — it is where
// Gatehouse will send requests. Adding the same endpoint again returns the device
// already stored.
func (s *Service) AddPushSubscription(ctx context.Context, user string, in PushSubscriptionInput) (*Device, error) {
	if err := checkURL("endpoint", in.Endpoint, s.o.AllowPrivate); err != nil {
		return nil, err
	}
	p256dh, err := decodeKey(in.Keys.P256dh)
	if err != nil || len(p256dh) != 65 || p256dh[0] != 4 {
		return nil, errs.Invalid("keys.p256dh", "want the base64url of a 65-byte uncompressed P-256 public key")
	}
	if _, err := ecdh.P256().NewPublicKey(p256dh); err != nil {
		return nil, errs.Invalid("keys.p256dh", "not a point on the P-256 curve")
	}
	auth, err := decodeKey(in.Keys.Auth)
	if err != nil || len(auth) != 16 {
		return nil, errs.Invalid("keys.auth", "want the base64url of a 16-byte authentication secret")
	}
	existing, err := s.store.ListPushSubscriptions(ctx, user)
	if err != nil {
		return nil, err
	}
	known := false
	for i := range existing {
		known = known || existing[i].Endpoint == in.Endpoint
	}
	if !known && len(existing) >= maxPushSubscriptions {
		return nil, errs.Invalid("endpoint", "at most %d devices can be notified; remove one first", maxPushSubscriptions)
	}
	row := &models.PushSubscription{ID: ids.New(ids.PushSubscriptionPrefix), User: user, Endpoint: in.Endpoint,
		P256dh: base64.RawURLEncoding.EncodeToString(p256dh), Auth: base64.RawURLEncoding.EncodeToString(auth),
		UserAgent: truncateString(in.UserAgent, maxUserAgent), CreatedAt: s.o.Now()}
	if err := s.store.InsertPushSubscription(ctx, row); err != nil {
		return nil, err
	}
	if err := s.pushOnUnlessOff(ctx, user); err != nil {
		return nil, err
	}
	d := deviceOf(row)
	return &d, nil
}

// pushOnUnlessOff turns Web Push on for a person who subscribes a device and never
// chose about push: asking to notify this device means they want it. A person who
// switched push off keeps it off.
func (s *Service) pushOnUnlessOff(ctx context.Context, user string) error {
	st, err := s.stored(ctx, user)
	if err != nil || st.Push != nil {
		return err
	}
	st.Push = &PushSettings{}
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return s.store.PutSettingsDoc(ctx, user, raw, s.o.Now())
}

// RemovePushSubscription unsubscribes user's device id; false when user has no such
// device.
func (s *Service) RemovePushSubscription(ctx context.Context, user, id string) (bool, error) {
	if !strings.HasPrefix(id, ids.PushSubscriptionPrefix) || len(id) > 64 {
		return false, nil
	}
	return s.store.DeletePushSubscription(ctx, user, id)
}

// ListDevices lists user's subscribed browsers, newest first (never their keys).
func (s *Service) ListDevices(ctx context.Context, user string) ([]Device, error) {
	rows, err := s.store.ListPushSubscriptions(ctx, user)
	if err != nil {
		return nil, err
	}
	out := make([]Device, len(rows))
	for i := range rows {
		out[i] = deviceOf(&rows[i])
	}
	return out, nil
}

// VAPIDPublicKey is the application server key browsers subscribe with ("" when Web
// Push is not configured).
func (s *Service) VAPIDPublicKey() string { return s.o.VAPIDPublicKey }

// SlackConfigured reports whether the operator set up Slack, so a settings page can
// say why the Slack switch does nothing.
func (s *Service) SlackConfigured() bool { return s.o.SlackOn }

// deviceOf is how a subscription is shown: a name from its browser and the push
// service's host (which tells Apple, Google and Mozilla devices apart).
func deviceOf(p *models.PushSubscription) Device {
	host := ""
	if u, err := url.Parse(p.Endpoint); err == nil {
		host = u.Hostname()
	}
	return Device{ID: p.ID, Name: deviceName(p.UserAgent), Host: host, CreatedAt: p.CreatedAt}
}

// deviceName makes "Firefox on Android" from a User-Agent header.
func deviceName(ua string) string {
	browser := "Browser"
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"SamsungBrowser/", "Samsung Internet"}, {"Firefox/", "Firefox"},
		{"Chromium/", "Chromium"}, {"Chrome/", "Chrome"}, {"Safari/", "Safari"},
	} {
		if strings.Contains(ua, b.token) {
			browser = b.name
			break
		}
	}
	for _, o := range []struct{ token, name string }{
		{"Android", "Android"}, {"iPhone", "iPhone"}, {"iPad", "iPad"}, {"CrOS", "ChromeOS"},
		{"Mac OS X", "macOS"}, {"Windows", "Windows"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, o.token) {
			return browser + " on " + o.name
		}
	}
	return browser
}

// decodeKey decodes a subscription key: base64url as browsers send it, padded or not.
func decodeKey(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

func truncateString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
