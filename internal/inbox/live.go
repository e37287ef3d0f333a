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
	svc   *Service
	user  string
	roots map[string]bool
}

// Follow subscribes to the events of the trees user's inbox lists. Cancel the
// subscription when done.
func (s *Service) Follow(ctx context.Context, user string, bus Subscriber, buffer int) (*Follower, error) {
	roots, err := s.Roots(ctx, user)
	if err != nil {
		return nil, err
	}
	return &Follower{Subscription: bus.SubscribeMany(roots, buffer), svc: s, user: user, roots: setOf(roots)}, nil
}

// Refresh re-reads which trees the inbox lists and moves the subscription onto them,
// keeping its channel (nothing published on a tree still listed is missed). It returns
// the trees it added: what was published on them before now was not received, so a
// follower that must miss nothing reads their pending prompts after Refresh.
func (f *Follower) Refresh(ctx context.Context) (added []string, err error) {
	roots, err := f.svc.Roots(ctx, f.user)
	if err != nil {
		return nil, err
	}
	f.Retarget(roots)
	for _, r := range roots {
		if !f.roots[r] {
			added = append(added, r)
		}
	}
	f.roots = setOf(roots)
	return added, nil
}

// Follows reports whether the tree rooted at root is one the follower listens on now.
// A delivery from a tree dropped by the last Refresh (a grant removed) may still be
// queued on C: check it before passing an event on. Call it from the goroutine that
// calls Refresh.
func (f *Follower) Follows(root string) bool { return f.roots[root] }

func setOf(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}
