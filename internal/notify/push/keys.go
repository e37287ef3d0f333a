package push

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	webpush "github.com/SherClockHolmes/webpush-go"
)

// vapidSettingKey is the settings row holding the server's VAPID key pair.
const vapidSettingKey = "vapid_keys"

// SettingStore keeps server-wide settings; internal/store's EnsureSetting stores value
// only when key has none and returns what is stored.
type SettingStore interface {
	EnsureSetting(ctx context.Context, key, value string) (string, error)
}

// EnsureKeys returns the server's VAPID keys, generating them on the first start.
// Browsers bind a subscription to the key it was made with, so the pair must survive
// restarts and be the same on every replica: both halves live in one settings row,
// and EnsureSetting makes replicas starting at once agree on whichever pair landed
// first (two rows could pair one replica's public key with another's private key).
func EnsureKeys(ctx context.Context, st SettingStore) (Keys, error) {
	priv, pub, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		return Keys{}, fmt.Errorf("generate VAPID keys: %w", err)
	}
	offered, err := json.Marshal(Keys{Public: pub, Private: priv})
	if err != nil {
		return Keys{}, err
	}
	stored, err := st.EnsureSetting(ctx, vapidSettingKey, string(offered))
	if err != nil {
		return Keys{}, fmt.Errorf("VAPID keys: %w", err)
	}
	var k Keys
	if err := json.Unmarshal([]byte(stored), &k); err != nil {
		return Keys{}, fmt.Errorf("VAPID keys in the database (settings %q) do not decode: %w", vapidSettingKey, err)
	}
	if raw, err := base64.RawURLEncoding.DecodeString(k.Public); err != nil || len(raw) != 65 || raw[0] != 4 {
		return Keys{}, fmt.Errorf("VAPID public key in the database (settings %q) is not a P-256 point", vapidSettingKey)
	}
	if raw, err := base64.RawURLEncoding.DecodeString(k.Private); err != nil || len(raw) != 32 {
		return Keys{}, fmt.Errorf("VAPID private key in the database (settings %q) is not 32 bytes", vapidSettingKey)
	}
	return k, nil
}
