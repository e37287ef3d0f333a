package notify

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Store is the persistence notifications need (internal/store implements it).
type Store interface {
	GetSettingsDoc(ctx context.Context, user string) ([]byte, error)
	PutSettingsDoc(ctx context.Context, user string, doc []byte, at time.Time) error

	InsertPushSubscription(ctx context.Context, p *models.PushSubscription) error
	ListPushSubscriptions(ctx context.Context, user string) ([]models.PushSubscription, error)
	DeletePushSubscription(ctx context.Context, user, id string) (bool, error)
}

// Options configure the Service.
type Options struct {
	// PublicURL is the absolute base of links in messages.
	PublicURL string
	// AllowPrivate lets person-supplied URLs be http:// and private hosts.
	AllowPrivate bool
	// SendTimeout bounds one delivery attempt.
	SendTimeout time.Duration
	// RetryBase, RetryMax and Attempts shape retries.
	RetryBase, RetryMax time.Duration
	Attempts            int
	// LinkTTL bounds an action link's life.
	LinkTTL time.Duration
	// Secret keys action links (the server's session secret).
	Secret []byte
	// VAPIDPublicKey is the Web Push application server key shown to browsers.
	VAPIDPublicKey string
	// SlackOn reports that the operator configured Slack.
	SlackOn bool
	Now     func() time.Time
	Log     *slog.Logger
}

// Service is the notifications use case: settings, planning, delivery, action links.
type Service struct {
	store    Store
	o        Options
	channels map[string]Channel
	log      *slog.Logger
}

// New builds the service with the channels that are configured.
func New(st Store, o Options, channels ...Channel) *Service {
	if o.Now == nil {
		o.Now = func() time.Time { return time.Now().UTC() }
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	s := &Service{store: st, o: o, channels: map[string]Channel{}, log: o.Log}
	for _, c := range channels {
		s.channels[c.Name()] = c
	}
	return s
}
