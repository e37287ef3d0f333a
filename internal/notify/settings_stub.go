package notify

// STUB (push branch): delete at merge. The lead's Service.Settings and
// Service.PutSettings replace these; they exist so the settings page and the device
// API compile and can be tested on this branch. The contract the page relies on:
// Settings returns the document with secrets masked, and PutSettings keeps a stored
// secret when it is given back masked (a GET → edit → PUT round trip loses nothing).

import (
	"context"
	"encoding/json"
)

// maskedSecret stands for a stored secret in documents shown back.
const maskedSecret = "********"

// Settings returns user's settings document with secrets masked.
func (s *Service) Settings(ctx context.Context, user string) (*Settings, error) {
	st, err := s.storedSettings(ctx, user)
	if err != nil {
		return nil, err
	}
	if st.Ntfy != nil && st.Ntfy.Token != "" {
		st.Ntfy.Token = maskedSecret
	}
	if st.Webhook != nil && st.Webhook.Secret != "" {
		st.Webhook.Secret = maskedSecret
	}
	if st.Push != nil {
		if st.Push.Devices, err = s.ListDevices(ctx, user); err != nil {
			return nil, err
		}
		st.Push.VAPIDPublicKey = s.o.VAPIDPublicKey
	}
	return st, nil
}

// PutSettings checks and stores user's document; masked secrets keep the stored ones.
func (s *Service) PutSettings(ctx context.Context, user string, in *Settings) (*Settings, error) {
	old, err := s.storedSettings(ctx, user)
	if err != nil {
		return nil, err
	}
	doc := *in
	if doc.Ntfy != nil && doc.Ntfy.Token == maskedSecret {
		n := *doc.Ntfy
		n.Token = ""
		if old.Ntfy != nil {
			n.Token = old.Ntfy.Token
		}
		doc.Ntfy = &n
	}
	if doc.Webhook != nil && doc.Webhook.Secret == maskedSecret {
		w := *doc.Webhook
		w.Secret = ""
		if old.Webhook != nil {
			w.Secret = old.Webhook.Secret
		}
		doc.Webhook = &w
	}
	if doc.Push != nil {
		p := *doc.Push
		p.Devices, p.VAPIDPublicKey = nil, ""
		doc.Push = &p
	}
	if err := doc.check(s.o.AllowPrivate); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	if err := s.store.PutSettingsDoc(ctx, user, raw, s.o.Now()); err != nil {
		return nil, err
	}
	return s.Settings(ctx, user)
}

func (s *Service) storedSettings(ctx context.Context, user string) (*Settings, error) {
	raw, err := s.store.GetSettingsDoc(ctx, user)
	if err != nil {
		return nil, err
	}
	st := &Settings{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, st); err != nil {
			return nil, err
		}
	}
	return st, nil
}
