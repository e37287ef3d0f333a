package notify

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// maskMark separates a masked secret's kept prefix and suffix: a stored secret is
// shown as "whsec_…Ab12", never in full, and sending that mask back keeps it.
const maskMark = "…"

// mask shows the start (up to and including "_") and the last 4 characters of secret.
func mask(secret string) string {
	if secret == "" {
		return ""
	}
	head := ""
	if i := strings.Index(secret, "_"); i >= 0 && i < 8 {
		head = secret[:i+1]
	}
	tail := ""
	if len(secret)-len(head) > 8 {
		tail = secret[len(secret)-4:]
	}
	return head + maskMark + tail
}

// keep returns the secret to store when a document sends in: blank or a mask keeps
// what is stored.
func keep(in, stored string) string {
	if in == "" || strings.Contains(in, maskMark) {
		return stored
	}
	return in
}

// NewWebhookSecret makes a Standard Webhooks secret: whsec_ and 32 random bytes.
func NewWebhookSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// stored reads a person's settings as stored, secrets in full (a zero document when
// none were saved).
func (s *Service) stored(ctx context.Context, user string) (*Settings, error) {
	raw, err := s.store.GetSettingsDoc(ctx, user)
	if err != nil {
		return nil, err
	}
	var st Settings
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, err
		}
	}
	return &st, nil
}

// Settings returns a person's settings as they may see them: secrets masked, Web
// Push devices and the server's VAPID key filled in.
func (s *Service) Settings(ctx context.Context, user string) (*Settings, error) {
	st, err := s.stored(ctx, user)
	if err != nil {
		return nil, err
	}
	return s.shown(ctx, user, st, "")
}

// shown masks st's secrets (except a webhook secret just generated, revealed once) and
// fills in the read-only parts.
func (s *Service) shown(ctx context.Context, user string, st *Settings, revealWebhookSecret string) (*Settings, error) {
	out := *st
	if st.Webhook != nil {
		w := *st.Webhook
		if w.Secret != revealWebhookSecret || revealWebhookSecret == "" {
			w.Secret = mask(w.Secret)
		}
		out.Webhook = &w
	}
	if st.Ntfy != nil {
		n := *st.Ntfy
		n.Token = mask(n.Token)
		out.Ntfy = &n
	}
	devices, err := s.ListDevices(ctx, user)
	if err != nil {
		return nil, err
	}
	p := PushSettings{Enabled: boolPtr(false)}
	if st.Push != nil {
		p.Enabled = st.Push.Enabled
	}
	p.Devices, p.VAPIDPublicKey = devices, s.o.VAPIDPublicKey
	out.Push = &p
	return &out, nil
}

func boolPtr(b bool) *bool { return &b }

// PutSettings replaces a person's settings. Secrets sent blank or masked keep the
// stored ones; a webhook without any secret gets a new one, shown in full in this
// answer only. Bad values are 400s naming the field.
func (s *Service) PutSettings(ctx context.Context, user string, in *Settings) (*Settings, error) {
	if err := in.check(s.o.AllowPrivate); err != nil {
		return nil, err
	}
	old, err := s.stored(ctx, user)
	if err != nil {
		return nil, err
	}
	next := *in
	if in.Push != nil { // devices and the key are not settings
		next.Push = &PushSettings{Enabled: in.Push.Enabled}
	}
	generated := ""
	if in.Webhook != nil {
		w := *in.Webhook
		var stored string
		if old.Webhook != nil {
			stored = old.Webhook.Secret
		}
		if w.Secret = keep(w.Secret, stored); w.Secret == "" {
			w.Secret = NewWebhookSecret()
			generated = w.Secret
		}
		next.Webhook = &w
	}
	if in.Ntfy != nil {
		n := *in.Ntfy
		var stored string
		if old.Ntfy != nil {
			stored = old.Ntfy.Token
		}
		n.Token = keep(n.Token, stored)
		next.Ntfy = &n
	}
	raw, err := json.Marshal(&next)
	if err != nil {
		return nil, err
	}
	if err := s.store.PutSettingsDoc(ctx, user, raw, s.o.Now()); err != nil {
		return nil, err
	}
	s.log.Info("notification settings saved", "user", user)
	return s.shown(ctx, user, &next, generated)
}
