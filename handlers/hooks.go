package handlers

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/park"
)

// prepareFunc reads, authorizes and decodes a request about to park, from c: the
// request's own context, or its detached copy when the request is held (detach).
type prepareFunc func(c echo.Context) (*park.Job, error)

// parkHook is the one park-and-answer path of every request that waits for a person:
// agent hooks and policy evaluations, through the park use case (internal/park). A
// caller who may not park (auth.Level.CanPark) gets the "no verdict" answer at once, as
// does a wait that ends in a timeout or shutdown; each hook protocol's "no verdict" is
// an empty 200 — the agent then falls back to its own prompt. A client that hung up
// gets nothing: its prompt stays pending for the grace period so a retry can re-attach.
//
// A request that parks is held (internal/held, hold): its connection is taken off
// net/http, answered when the verdict comes, and closed. When every slot to prepare is
// taken — a burst — a request is held before it even waits for one (holdHook), so the
// queue behind the database costs no net/http buffers either. Otherwise it prepares on
// net/http, and an answer given at once (a rule, a decided retry, an ALLOW) keeps the
// connection.
func (s *Server) parkHook(c echo.Context, prepare prepareFunc) error {
	p, ok, err := s.park.TryPark(c.Request().Context(), s.prepareWith(c, prepare))
	if !ok {
		if s.holdHook(c, prepare) {
			return nil
		}
		p, err = s.park.Park(c.Request().Context(), s.prepareWith(c, prepare))
	}
	return s.parkPrepared(c, p, err)
}

// prepareWith is prepare for the park use case: it also says who parks and with which
// token (a hooks-only token reads only what it parked).
func (s *Server) prepareWith(c echo.Context, prepare prepareFunc) park.Prepare {
	return func() (*park.Job, error) {
		j, err := prepare(c)
		if j != nil {
			j.TokenID, j.Person = tokenIDOf(c), userOf(c)
		}
		return j, err
	}
}

// parkPrepared answers a request prepared on net/http: at once, or — once it waits on
// a prompt — held when it can be (hold), else in its handler.
func (s *Server) parkPrepared(c echo.Context, p park.Parked, err error) error {
	if errors.Is(err, elicit.ErrClientGone) {
		return nil
	}
	if err != nil {
		return err
	}
	if body, ok := p.Immediate(); ok {
		return c.JSON(http.StatusOK, body)
	}
	if !p.Waiting() {
		return reply(c, p.NoVerdict())
	}
	if !p.Ended() && s.hold(c, p) {
		return nil
	}
	v, body, err := p.Await(c.Request().Context())
	defer v.Answered() // after the answer below is out
	if errors.Is(err, elicit.ErrClientGone) {
		return nil
	}
	if err != nil {
		return err
	}
	return reply(c, body)
}

// reply sends an answer at once: body as JSON, nil the empty "no verdict" 200.
func reply(c echo.Context, body any) error {
	if body == nil {
		return c.NoContent(http.StatusOK)
	}
	return answerNow(c, body)
}

// answerNow sends a parked request's answer and flushes it, so the agent has it before
// the request's bookkeeping (the access log) runs: net/http would otherwise hold the
// whole response until the handler chain returns.
func answerNow(c echo.Context, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(b)))
	c.Response().WriteHeader(http.StatusOK)
	if _, err := c.Response().Write(b); err != nil {
		return nil // the agent hung up; nobody is left to tell
	}
	c.Response().Flush()
	return nil
}
