package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// hookPark is an agent hook request ready to park: the session it parks on, the
// caller's level there, the prompt, and how to answer a verdict in the agent's protocol.
type hookPark struct {
	sess  *models.Session
	level auth.Level
	// id re-attaches to an existing prompt (Claude's _gatehouse_elicitation_id, Codex's
	// deterministic id); empty mints a fresh one.
	id     string
	origin string
	params map[string]any
	// answer turns a human verdict into the body the agent reads.
	answer func(r elicit.Result) any
	// immediate, when set, is answered at once without parking (a notification).
	immediate any
}

// parkHook is the one park-and-answer path every agent hook (Claude Code, Codex) goes
// through. Each protocol's "no verdict" is an empty 200 — the agent then falls back to
// its own prompt — and that is what a caller below edit gets at once (a reader may not
// have a person decide on their behalf), as does a wait that ends in a timeout,
// abandonment or shutdown. A client that hung up gets nothing: its prompt stays
// pending for the grace period so a retry can re-attach.
//
// prepare (authorize, read, decode) and attaching the prompt run on a short-lived
// goroutine; the request's own goroutine only waits, so its stack stays small while it
// is parked (see elicit.Waiter). prepare returns nil to answer "no verdict" at once.
func (s *Server) parkHook(c echo.Context, prepare func() (*hookPark, error)) error {
	type ready struct {
		h   *hookPark
		w   *elicit.Waiter
		err error
	}
	ch := make(chan ready, 1)
	go func() {
		h, err := prepare()
		if err != nil || h.immediate != nil || h.level < auth.Edit {
			ch <- ready{h: h, err: err}
			return
		}
		w, err := s.elicit.Attach(c.Request().Context(), elicit.Prompt{Session: h.sess, ID: h.id, Origin: h.origin, Params: h.params})
		ch <- ready{h: h, w: w, err: err}
	}()
	r := <-ch
	if r.err != nil {
		return r.err
	}
	if r.h.immediate != nil {
		return c.JSON(http.StatusOK, r.h.immediate)
	}
	if r.w == nil {
		return c.NoContent(http.StatusOK)
	}
	v, err := r.w.Wait(c.Request().Context())
	if errors.Is(err, elicit.ErrClientGone) {
		return nil
	}
	if err != nil {
		return err
	}
	if !v.Decided() {
		return c.NoContent(http.StatusOK)
	}
	return c.JSON(http.StatusOK, r.h.answer(v.Result))
}
