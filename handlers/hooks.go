package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
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
	// answer turns a verdict into the body the agent reads; by is who gave it (a deny
	// without feedback names them: models.DeniedMessage).
	answer func(r elicit.Result, by string) any
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

// prepareFunc reads, authorizes and decodes a request about to park, from c: the
// request's own context, or its detached copy when the request is held (detach).
type prepareFunc func(c echo.Context) (*hookPark, error)

// parkHook is the one park-and-answer path of every request that waits for a person:
// agent hooks (Claude Code, Codex) and policy evaluations. A caller who may not park
// (auth.Level.CanPark) gets the "no verdict" answer at once, as does a wait that ends
// in a timeout or shutdown; each hook protocol's "no verdict" is an empty 200 — the
// agent then falls back to its own prompt. A client that hung up gets nothing: its
// prompt stays pending for the grace period so a retry can re-attach.
//
// A request that parks is held (internal/held, hold): its connection is taken off
// net/http, answered when the verdict comes, and closed. When every slot to prepare is
// taken — a burst — a request is held before it even waits for one (holdHook), so the
// queue behind the database costs no net/http buffers either. Otherwise it prepares on
// net/http, and an answer given at once (a rule, a decided retry, an ALLOW) keeps the
// connection.
func (s *Server) parkHook(c echo.Context, prepare prepareFunc) error {
	var p parked
	var err error
	select {
	case s.preparing <- struct{}{}:
		p, err = s.prepareInSlot(c, prepare)
	default:
		if s.holdHook(c, prepare) {
			return nil
		}
		p, err = s.prepared(c, prepare)
	}
	return s.parkPrepared(c, p, err)
}

// parked is a request prepared to park: answered at once (h.immediate, or no waiter:
// "no verdict"), or waiting on w.
type parked struct {
	h *hookPark
	w *elicit.Waiter
}

// prepared waits for a slot to prepare (at most prepareSlots at once), then runs
// prepareInSlot. It returns elicit.ErrClientGone when the client left while waiting:
// nothing was parked.
func (s *Server) prepared(c echo.Context, prepare prepareFunc) (parked, error) {
	select {
	case s.preparing <- struct{}{}:
	case <-c.Request().Context().Done():
		return parked{}, elicit.ErrClientGone
	}
	return s.prepareInSlot(c, prepare)
}

// prepareInSlot runs prepare, the rules and attaching the prompt on a short-lived
// goroutine, which gives back the caller's slot; the caller's goroutine — which then
// waits — keeps the small stack it has (see elicit.Waiter).
func (s *Server) prepareInSlot(c echo.Context, prepare prepareFunc) (parked, error) {
	type ready struct {
		p   parked
		err error
	}
	ch := make(chan ready, 1)
	go func() {
		defer func() { <-s.preparing }()
		defer func() {
			// A goroutine of its own is beyond Echo's Recover: a panic is the request's 500.
			if p := recover(); p != nil {
				ch <- ready{err: fmt.Errorf("panic while preparing a park: %v\n%s", p, debug.Stack())}
			}
		}()
		h, err := prepare(c)
		if err != nil || h.immediate != nil || !h.level.CanPark() {
			ch <- ready{parked{h: h}, err}
			return
		}
		h.prompt.TokenID = tokenIDOf(c) // a hooks-only token reads only what it parked
		if answered, err := s.applyRules(c, h); err != nil || answered {
			ch <- ready{parked{h: h}, err}
			return
		}
		// The wait is the caller's: one of their parked requests, at most
		// --max-parked-per-person (429 beyond; answers given at once above never count).
		h.prompt.Person = userOf(c)
		w, err := s.elicit.Attach(c.Request().Context(), h.prompt)
		// The prompt is stored and published now, the rules applied; the wait needs
		// neither (a parked request keeps only how to answer).
		h.prompt, h.subject = elicit.Prompt{}, nil
		ch <- ready{parked{h: h, w: w}, err}
	}()
	r := <-ch
	return r.p, r.err
}

// parkPrepared answers a request prepared on net/http: at once, or — once it waits on
// a prompt — held when it can be (hold), else in its handler.
func (s *Server) parkPrepared(c echo.Context, p parked, err error) error {
	if errors.Is(err, elicit.ErrClientGone) {
		return nil
	}
	if err != nil {
		return err
	}
	if p.h.immediate != nil {
		return c.JSON(http.StatusOK, p.h.immediate)
	}
	if p.w == nil {
		return reply(c, p.h.noVerdict)
	}
	if !p.w.Ended() && s.hold(c, p) {
		return nil
	}
	v, body, err := p.h.await(c.Request().Context(), p.w)
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

// await waits for the prompt's verdict and returns the answer in the agent's protocol
// (nil: the empty "no verdict" 200). The caller calls v.Answered once it is out.
func (h *hookPark) await(ctx context.Context, w *elicit.Waiter) (v elicit.Verdict, reply any, err error) {
	v, err = w.WaitToAnswer(ctx)
	if err != nil {
		return v, nil, err
	}
	if v.Status == models.StatusExpired {
		if h.onTimeout != nil {
			return v, h.answer(*h.onTimeout, ""), nil
		}
		if h.ownWait && h.timedOut != nil {
			return v, h.timedOut, nil
		}
	}
	if !v.Decided() {
		return v, h.noVerdict, nil
	}
	return v, h.answer(v.Result, resolvedBy(v.Row)), nil
}

// resolvedBy is who decided a row ("" when it does not say).
func resolvedBy(row *models.Elicitation) string {
	if row == nil || row.ResolvedBy == nil {
		return ""
	}
	return *row.ResolvedBy
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
			h.immediate = h.answer(applied.Verdict.Result, resolvedBy(applied.Verdict.Row))
		}
		return true, nil
	}
	h.prompt, h.onTimeout, h.ownWait = applied.Prompt, applied.OnTimeout, true
	return false, nil
}
