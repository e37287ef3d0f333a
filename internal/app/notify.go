package app

import (
	"context"
	"log/slog"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/notify"
	"github.com/gatehouse-dev/gatehouse/internal/notify/ntfy"
	"github.com/gatehouse-dev/gatehouse/internal/notify/slack"
	"github.com/gatehouse-dev/gatehouse/internal/notify/webhook"
	"github.com/gatehouse-dev/gatehouse/internal/store"
	"github.com/gatehouse-dev/gatehouse/models"
)

// newNotifier builds the notifications use case with every channel this server can
// send on, and has the core nudge it whenever a prompt it has to plan is parked or
// decided.
func newNotifier(ctx context.Context, cfg *config.Config, st *store.Store, core *elicit.Service, secret string, log *slog.Logger) (*notify.Service, error) {
	o := notify.Options{
		PublicURL: cfg.PublicURL, AllowPrivate: cfg.NotifyAllowPrivate, SendTimeout: cfg.NotifySendTimeout,
		RetryBase: cfg.NotifyRetryBase, RetryMax: cfg.NotifyRetryMax, Attempts: cfg.NotifyAttempts,
		LinkTTL: cfg.ActionLinkTTL, Secret: []byte(secret), SlackOn: cfg.SlackBotToken != "", Log: log,
		AgentName: func(ctx context.Context, id string) string {
			if a, err := st.GetAgent(ctx, id); err == nil {
				return a.Name
			}
			return ""
		},
	}
	client := notify.HTTPClient(cfg.NotifyAllowPrivate, cfg.NotifySendTimeout)
	pushCh, pushKeys, err := pushChannel(ctx, cfg, st, client, log)
	if err != nil {
		return nil, err
	}
	o.VAPIDPublicKey = pushKeys.Public
	channels := []notify.Channel{webhook.New(client), ntfy.New(client), pushCh}
	if cfg.SlackBotToken != "" {
		channels = append(channels, slack.New(cfg.SlackBotToken, cfg.SlackAPIURL))
	}
	n := notify.New(st, core, o, channels...)
	core.OnAnnounced(kickUnlessNotified(n.Kick))
	return n, nil
}

// kickUnlessNotified nudges the dispatcher for a prompt it still has to plan. A row
// stored with every notification stage done (models.NotifiedAll: a rule's answer,
// which nobody is told about) gives it nothing to do, so it is not woken for one: the
// hooks rules answer would otherwise each cost a round of its queries.
func kickUnlessNotified(kick func()) func(*models.Elicitation) {
	return func(e *models.Elicitation) {
		if e.Notified < models.NotifiedAll {
			kick()
		}
	}
}
