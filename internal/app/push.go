package app

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/notify/push"
	"github.com/gatehouse-dev/gatehouse/internal/store"
)

// pushChannel builds the Web Push channel with the server's VAPID keys, generated on
// the first start and kept in the database (every replica and restart must sign with
// the key browsers subscribed with).
func pushChannel(ctx context.Context, cfg *config.Config, st *store.Store, client *http.Client, log *slog.Logger) (*push.Channel, push.Keys, error) {
	keys, err := push.EnsureKeys(ctx, st)
	if err != nil {
		return nil, push.Keys{}, err
	}
	log.Debug("web push ready", "vapid_public_key", keys.Public)
	return push.New(keys, pushSubscriber(cfg.PublicURL), client), keys, nil
}

// pushSubscriber is the contact push services see in the VAPID token: the public URL
// when it is https (RFC 8292 asks for an https or mailto URI), else a placeholder
// address on the server's host name.
func pushSubscriber(publicURL string) string {
	if strings.HasPrefix(publicURL, "https://") {
		return publicURL
	}
	host := "localhost"
	if u, err := url.Parse(publicURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return "gatehouse@" + host
}
