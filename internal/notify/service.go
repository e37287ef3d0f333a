package notify

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/markdown"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Store is the persistence notifications need (internal/store implements it).
type Store interface {
	Unplanned(ctx context.Context, limit int) ([]models.Elicitation, error)
	ApplyOutboxPlans(ctx context.Context, announce map[string]models.OutboxPlan, decided []models.Elicitation,
		followUp func(e *models.Elicitation, have []models.Notification) models.OutboxPlan) (int, error)
	ClaimDeliveries(ctx context.Context, now, claimUntil time.Time, limit int) ([]models.Notification, error)
	FinishDeliveries(ctx context.Context, at time.Time, results []models.DeliveryResult) error
	NotificationsOf(ctx context.Context, eid string) ([]models.Notification, error)
	NotificationsOfMany(ctx context.Context, eids []string) ([]models.Notification, error)
	ElicitationsByID(ctx context.Context, ids []string) ([]models.Elicitation, error)
	SpendActionNonce(ctx context.Context, nonce string, expires time.Time) (bool, error)
	PruneActionNonces(ctx context.Context, now time.Time) error
	PruneNotifications(ctx context.Context, before time.Time) error
	EditorsOf(ctx context.Context, rootID string) ([]string, error)
	GetSession(ctx context.Context, id string) (*models.Session, error)
	GetElicitation(ctx context.Context, id string) (*models.Elicitation, error)
	GrantLevel(ctx context.Context, rootID, user string) (int, error)

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
	// AgentName names an agent by id for messages (nil: agents go unnamed).
	AgentName func(ctx context.Context, id string) string
	Now       func() time.Time
	Log       *slog.Logger
}

// Resolver decides prompts (elicit.Service): action links go through the one resolver
// every other path uses.
type Resolver interface {
	Resolve(ctx context.Context, sid, eid string, r models.Verdict, by, via string) (elicit.Outcome, error)
}

// Service is the notifications use case: settings, planning, delivery, action links.
type Service struct {
	store     Store
	o         Options
	resolver  Resolver
	channels  map[string]Channel
	links     *links
	md        *markdown.Renderer
	agentName func(ctx context.Context, id string) string
	kick      chan struct{}
	log       *slog.Logger
}

// New builds the service with the channels that are configured.
func New(st Store, r Resolver, o Options, channels ...Channel) *Service {
	if o.Now == nil {
		o.Now = func() time.Time { return time.Now().UTC() }
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = 10 * time.Second
	}
	if o.RetryBase <= 0 {
		o.RetryBase = 2 * time.Second
	}
	if o.RetryMax < o.RetryBase {
		o.RetryMax = max(o.RetryBase, 10*time.Minute)
	}
	if o.Attempts <= 0 {
		o.Attempts = 10
	}
	if o.LinkTTL <= 0 {
		o.LinkTTL = time.Hour
	}
	s := &Service{store: st, o: o, resolver: r, channels: map[string]Channel{}, log: o.Log,
		links: newLinks(o.Secret, o.LinkTTL, o.Now), md: markdown.New(), kick: make(chan struct{}, 1),
		agentName: o.AgentName}
	for _, c := range channels {
		s.channels[c.Name()] = c
	}
	return s
}

// SetPublicURL sets the base of links in messages when it is only known once the
// server listens (no --public-url). Call it before Run.
func (s *Service) SetPublicURL(base string) { s.o.PublicURL = base }
