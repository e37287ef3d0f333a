package handlers

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
)

// streamMine serves the caller's own live stream (SSE): the prompt events of every
// session tree they can read, on one connection — what a terminal watching for
// prompts (`gatehouse watch`) follows instead of one stream per session, which would
// soon run into the per-person cap of open streams. It listens only on the roots of
// those trees (each event reaches a root once, with target_session_id when it belongs
// to a descendant). When the caller's grants change — a new session of theirs, a
// share — it moves onto the new set of trees and first sends what is already pending
// in the trees it added, since it was not listening there before. The first frame is
// a heartbeat: nothing published after it is missed. There is no resume: a client
// that reconnects re-reads what is pending (GET /v1/sessions/{id}).
func (s *Server) streamMine(c echo.Context) error {
	user := userOf(c)
	access, err := s.openStream(c, "", nil)
	if err != nil {
		return err
	}
	defer access.Release()
	ctx := access.Context() // ends at shutdown too: the stream closes, its client reconnects
	follow, err := s.inbox.Follow(ctx, user, s.bus, streamBuffer)
	if err != nil {
		return err
	}
	defer follow.Cancel()

	w := startEventStream(c)
	heartbeat := func() error {
		return w.sendJSON(elicit.EventHeartbeat, map[string]any{"type": elicit.EventHeartbeat})
	}
	// replayed holds the prompts regrant sent from a tree it added: their own request
	// event may be queued on the subscription as well (the subscription moved onto the
	// tree before its pending prompts were read), and a prompt is sent once.
	replayed := map[string]bool{}
	// regrant re-checks the credential, moves onto the caller's trees as they are now,
	// and sends the prompts pending in the trees added.
	regrant := func(ctx context.Context) error {
		if err := access.Recheck(ctx); err != nil {
			return err
		}
		added, err := follow.Refresh(ctx)
		if err != nil {
			return err
		}
		for _, root := range added {
			sess, err := s.sessions.Authorize(ctx, user, root, auth.Read)
			if err != nil {
				continue // gone again since: nothing to show
			}
			pending, _, err := s.elicit.PendingFor(ctx, sess)
			if err != nil {
				return err
			}
			for _, ev := range pending {
				if err := w.sendJSON(elicit.EventRequest, ev); err != nil {
					return err
				}
				if id, _ := ev["elicitation_id"].(string); id != "" {
					replayed[id] = true
				}
			}
		}
		return nil
	}
	if err := heartbeat(); err != nil {
		return nil
	}
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case d, ok := <-follow.C:
			if !ok {
				return nil // dropped for falling behind; the client reconnects
			}
			if d.Event.Type != elicit.EventRequest && d.Event.Type != elicit.EventResolved {
				continue
			}
			select {
			case <-access.Changed(): // noted before this event came: access first
				if err := regrant(ctx); err != nil {
					return nil
				}
			default:
			}
			if !follow.Follows(d.Session) {
				continue // queued before a grant on that tree was removed
			}
			if d.Event.Type == elicit.EventRequest && replayed[d.Event.ElicitationID] {
				delete(replayed, d.Event.ElicitationID)
				continue // sent already, from the tree's pending prompts
			}
			if err := w.send(0, d.Event.Type, d.Event.Data); err != nil {
				return nil
			}
		case <-access.Changed():
			if err := regrant(ctx); err != nil {
				return nil
			}
		case <-tick.C:
			// Notes can be lost with a database connection: re-check on every
			// heartbeat too.
			if err := regrant(ctx); err != nil {
				return nil
			}
			if err := heartbeat(); err != nil {
				return nil
			}
		}
	}
}
