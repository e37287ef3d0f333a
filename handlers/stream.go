package handlers

import (
	"context"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/stream"
	"github.com/gatehouse-dev/gatehouse/models"
)

// heartbeatEvery is how often an idle stream gets a heartbeat.
const heartbeatEvery = 15 * time.Second

// streamBuffer is how many events a subscriber may fall behind before it is dropped.
const streamBuffer = 256

// openSessionStream opens a live view of the session in the path for its reader: the
// stream counts against their cap of open streams (Release it), the grant is re-checked
// whenever it may have changed, and the subscription to the session's events (Cancel
// it) starts before anything is written.
func (s *Server) openSessionStream(c echo.Context) (*models.Session, *liveAccess, *stream.Subscription, error) {
	sess, err := s.sessions.Authorize(c.Request().Context(), userOf(c), c.Param("sid"), auth.Read)
	if err != nil {
		return nil, nil, nil, err
	}
	access, err := s.openStream(c, sess.RootID, func(ctx context.Context) error {
		_, err := s.sessions.Authorize(ctx, userOf(c), sess.ID, auth.Read)
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return sess, access, s.bus.Subscribe(sess.ID, streamBuffer), nil
}

// streamSession serves a session's live event stream (SSE). The subscriber is
// registered before the first frame — the heartbeat — is written, so a client that has
// seen the heartbeat will see everything published after it. The stream counts against
// the caller's cap of open streams, and ends as soon as their grant on the tree no
// longer allows reading it, or the credential it was opened with ends: an API token
// revoked (on any replica) or expired, a browser signed out.
func (s *Server) streamSession(c echo.Context) error {
	sess, access, sub, err := s.openSessionStream(c)
	if err != nil {
		return err
	}
	defer access.Release()
	ctx := access.Context() // ends at shutdown too: the stream closes, its client reconnects
	defer sub.Cancel()

	w := startEventStream(c)

	// What the client missed comes first: logged events after Last-Event-ID when they
	// are still retained, otherwise (or with ?replay=pending) the pending prompts.
	replayed := map[string]bool{}
	var sentUpTo int64
	resumed := false
	last, hasLast := lastEventID(c)
	if hasLast {
		evs, retained, err := s.bus.Resume(ctx, sess.ID, last)
		if err != nil {
			// Going on from the head would skip what the client missed: end the stream
			// instead, and it reconnects with the same Last-Event-ID (a pooled
			// connection the database dropped in a restart fails like this once).
			s.log.Warn("resume stream", "session_id", sess.ID, "err", err)
			return nil
		}
		if retained {
			for _, ev := range evs {
				if err := w.busEvent(ev); err != nil {
					return nil
				}
				sentUpTo = ev.Seq
			}
			if sentUpTo == 0 {
				sentUpTo = last
			}
			resumed = true
		}
	}
	if !resumed {
		// Live tail from here: what was published before this subscription is not news.
		head, err := s.bus.Head(ctx, sess.ID)
		if err != nil {
			s.log.Warn("stream head", "session_id", sess.ID, "err", err)
		}
		sentUpTo = head
	}
	if !resumed && (c.QueryParam("replay") == "pending" || hasLast) {
		pending, rows, err := s.elicit.PendingFor(ctx, sess)
		if err != nil {
			return nil // headers are sent; the client reconnects
		}
		for i, ev := range pending {
			if err := w.sendJSON(elicit.EventRequest, ev); err != nil {
				return nil
			}
			replayed[rows[i].ID] = true
		}
	}
	if err := w.sendJSON(elicit.EventHeartbeat, map[string]any{"type": elicit.EventHeartbeat, "session_id": sess.ID}); err != nil {
		return nil
	}
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case d, ok := <-sub.C:
			if !ok {
				return nil // dropped for falling behind; the client reconnects
			}
			if d.Event.Seq != 0 && d.Event.Seq <= sentUpTo {
				continue // already sent by the resume
			}
			if d.Event.Type == elicit.EventRequest && replayed[d.Event.ElicitationID] {
				continue // already sent by the replay
			}
			if err := access.RecheckIfChanged(ctx); err != nil {
				return nil // a change noted before this event came: it is not sent
			}
			if err := w.busEvent(d.Event); err != nil {
				return nil
			}
		case <-access.Changed():
			// The caller's grant changed or a credential of theirs ended (on any
			// replica), or this one ran out: nothing more is sent unless the stream's
			// credential still holds and they may still read the session.
			if err := access.Recheck(ctx); err != nil {
				return nil
			}
		case <-tick.C:
			// Notes can be lost with a database connection: re-check on every
			// heartbeat too.
			if err := access.Recheck(ctx); err != nil {
				return nil
			}
			if err := w.sendJSON(elicit.EventHeartbeat, map[string]any{"type": elicit.EventHeartbeat, "session_id": sess.ID}); err != nil {
				return nil
			}
		}
	}
}

// lastEventID reads the resume point: the Last-Event-ID header browsers send on
// reconnect, or a last_event_id query parameter for clients that cannot set headers.
func lastEventID(c echo.Context) (int64, bool) {
	v := c.Request().Header.Get("Last-Event-ID")
	if v == "" {
		v = c.QueryParam("last_event_id")
	}
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && n >= 0
}
