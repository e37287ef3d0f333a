package handlers

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/rules"
	"github.com/gatehouse-dev/gatehouse/models"
)

// hookPark is a request ready to park: the caller's level on the session, the prompt
// (its ID, when set, re-attaches: Claude's _gatehouse_elicitation_id, Codex's
// deterministic id), and how to answer in the agent's protocol.
type hookPark struct {
	level  auth.Level
	prompt elicit.Prompt
	// answer turns a human verdict into the body the agent reads.
	answer func(r elicit.Result) any
	// noVerdict is the body when the wait ends without a verdict; nil is an empty 200.
	noVerdict any
	// immediate, when set, is answered at once without parking.
	immediate any
	// subject, when set, is what Gatehouse rules match the request on (internal/rules):
	// a matching allow or deny rule answers at once, an ask rule sets the wait.
	subject *rules.Subject
	// onTimeout, when set, is the verdict given when the wait runs out (an ask rule's
	// on_timeout); its feedback names the timeout.
	onTimeout *elicit.Result
	// timedOut, when set, is the "no verdict" body for a wait of its own (ownWait: an
	// ask rule's) that ran out, naming the timeout; nil: noVerdict.
	timedOut any
	ownWait  bool
}

// parkHook is the one park-and-answer path of every request that waits for a person:
// agent hooks (Claude Code, Codex) and policy evaluations. A caller who may not park
// (auth.Level.CanPark) gets the "no verdict" answer at once, as does a wait that ends
// in a timeout or shutdown; each hook protocol's "no verdict" is an empty 200 — the
// agent then falls back to its own prompt. A client that hung up gets nothing: its
// prompt stays pending for the grace period so a retry can re-attach.
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
	select {
	case s.preparing <- struct{}{}:
	case <-c.Request().Context().Done():
		return nil // the client left while waiting for a slot: nothing was parked
	}
	ch := make(chan ready, 1)
	go func() {
		defer func() { <-s.preparing }()
		h, err := prepare()
		if err != nil || h.immediate != nil || !h.level.CanPark() {
			ch <- ready{h: h, err: err}
			return
		}
		if answered, err := s.applyRules(c, h); err != nil || answered {
			ch <- ready{h: h, err: err}
			return
		}
		w, err := s.elicit.Attach(c.Request().Context(), h.prompt)
		// The params are stored and published now; the wait needs none of them.
		h.prompt.Params = nil
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
		return r.h.noAnswer(c)
	}
	v, err := r.w.WaitToAnswer(c.Request().Context())
	defer v.Answered() // after the answer below is out
	if errors.Is(err, elicit.ErrClientGone) {
		return nil
	}
	if err != nil {
		return err
	}
	if v.Status == models.StatusExpired {
		if r.h.onTimeout != nil {
			return answerNow(c, r.h.answer(*r.h.onTimeout))
		}
		if r.h.ownWait && r.h.timedOut != nil {
			return answerNow(c, r.h.timedOut)
		}
	}
	if !v.Decided() {
		return r.h.noAnswer(c)
	}
	return answerNow(c, r.h.answer(v.Result))
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

// applyRules runs Gatehouse's rules on a request about to park: an allow or deny rule
// answers it at once (recorded as decided by the rule), an ask rule gives it the rule's
// wait and timeout answer. Requests without a subject (questions, forms) are left alone.
//
// answered reports that the request needs no wait: h.immediate holds the rule's
// verdict, or — when a retry found its prompt ended without one — is nil for the "no
// verdict" answer.
func (s *Server) applyRules(c echo.Context, h *hookPark) (answered bool, err error) {
	if s.rules == nil || h.subject == nil {
		return false, nil
	}
	h.subject.Session = h.prompt.Session
	applied, err := s.rules.Apply(c.Request().Context(), h.prompt, *h.subject)
	if err != nil || applied == nil {
		return false, err
	}
	if applied.Verdict != nil {
		if applied.Verdict.Decided() {
			h.immediate = h.answer(applied.Verdict.Result)
		}
		return true, nil
	}
	h.prompt, h.onTimeout, h.ownWait = applied.Prompt, applied.OnTimeout, true
	return false, nil
}

// noAnswer sends the "no verdict" answer.
func (h *hookPark) noAnswer(c echo.Context) error {
	if h.noVerdict == nil {
		return c.NoContent(http.StatusOK)
	}
	return answerNow(c, h.noVerdict)
}
