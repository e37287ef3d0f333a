package inbox

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/internal/stream"
)

// Subscriber is the part of the stream bus a live inbox listens on.
type Subscriber interface {
	SubscribeMany(sessions []string, buffer int) *stream.Subscription
}

// Follower is the event subscription behind one person's live inbox.
//
// It listens only on the roots of the trees the inbox lists — every prompt event is
// published on the prompt's session and each of its ancestors, the root included — so
// events in trees the person cannot decide in never reach it: however busy the server,
// a viewer's inbox costs nothing until something in their own trees happens. Which
// trees those are changes only with the person's grants; call Refresh when they change.
type Follower struct {
	*stream.Subscription
	svc  *Service
	user string
}

// Follow subscribes to the events of the trees user's inbox lists. Cancel the
// subscription when done.
func (s *Service) Follow(ctx context.Context, user string, bus Subscriber, buffer int) (*Follower, error) {
	roots, err := s.Roots(ctx, user)
	if err != nil {
		return nil, err
	}
	return &Follower{Subscription: bus.SubscribeMany(roots, buffer), svc: s, user: user}, nil
}

// Refresh re-reads which trees the inbox lists and moves the subscription onto them,
// keeping its channel (nothing published on a tree still listed is missed).
func (f *Follower) Refresh(ctx context.Context) error {
	roots, err := f.svc.Roots(ctx, f.user)
	if err != nil {
		return err
	}
	f.Retarget(roots)
	return nil
}
