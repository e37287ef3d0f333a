package handlers

import (
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
)

// heartbeatEvery is how often an idle stream gets a heartbeat.
const heartbeatEvery = 15 * time.Second

// streamBuffer is how many events a subscriber may fall behind before it is dropped.
const streamBuffer = 256

// streamSession serves a session's live event stream (SSE). The subscriber is
// registered before the first frame — the heartbeat — is written, so a client that has
// seen the heartbeat will see everything published after it.
func (s *Server) streamSession(c echo.Context) error {
	ctx := c.Request().Context()
	sess, err := s.sessions.Authorize(ctx, userOf(c), c.Param("sid"), auth.Read)
	if err != nil {
		return err
	}
	sub := s.bus.Subscribe(sess.ID, streamBuffer)
	defer sub.Cancel()

	w := c.Response()
	h := w.Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Connection", "keep-alive")
	// Streams live long; only this response is exempt from the server's write timeout.
	_ = http.NewResponseController(w.Writer).SetWriteDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)

	replayed := map[string]bool{}
	if c.QueryParam("replay") == "pending" {
		pending, rows, err := s.elicit.PendingFor(ctx, sess)
		if err != nil {
			return nil // headers are sent; the client reconnects
		}
		for i, ev := range pending {
			if err := writeJSONFrame(w, elicit.EventRequest, ev); err != nil {
				return nil
			}
			replayed[rows[i].ID] = true
		}
	}
	if err := writeHeartbeat(w, sess.ID); err != nil {
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
			if d.Event.Type == elicit.EventRequest && replayed[d.Event.ElicitationID] {
				continue // already sent by the replay
			}
			if err := writeFrame(w, d.Event.Type, d.Event.Data); err != nil {
				return nil
			}
		case <-tick.C:
			if err := writeHeartbeat(w, sess.ID); err != nil {
				return nil
			}
		}
	}
}

func writeHeartbeat(w *echo.Response, sid string) error {
	return writeJSONFrame(w, elicit.EventHeartbeat, map[string]any{"type": elicit.EventHeartbeat, "session_id": sid})
}

func writeJSONFrame(w *echo.Response, typ string, v any) error {
	data, err := jsonMarshal(v)
	if err != nil {
		return err
	}
	return writeFrame(w, typ, data)
}

// writeFrame writes one SSE frame and flushes it. JSON data has no raw newlines, so one
// data line suffices.
func writeFrame(w *echo.Response, typ string, data []byte) error {
	if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data); err != nil {
		return err
	}
	return http.NewResponseController(w.Writer).Flush()
}
