package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/held"
	"github.com/gatehouse-dev/gatehouse/internal/park"
)

// A held request waits off net/http (internal/held): its connection is taken over, so
// while it waits — for a person, or in a burst for its turn to prepare — it keeps none
// of net/http's buffers or goroutines. Holding requests only once prepared left a
// burst's memory where it was: most of a burst waits for its turn at the database
// first (park.DefaultSlots). A held request's access log line is written
// when its answer is sent.

// holdHook holds a request before it is prepared (parkHook: when every slot is
// taken); prepare then runs on a detached copy of the request's context. It returns
// false when the request cannot be held (no held.Set, HTTP/2); the caller then parks
// it in its handler.
func (s *Server) holdHook(c echo.Context, prepare prepareFunc) bool {
	if s.held == nil || c.Request().ProtoMajor != 1 {
		return false
	}
	dc := s.detach(c)
	return s.holdWith(c, func(ctx context.Context, line logLine, answer func(held.Answer)) {
		dc.SetRequest(dc.Request().WithContext(ctx))
		// In line for a slot with no goroutine of its own (park.ParkThen); the answer
		// is written, or the wait registered, on the worker that prepared it.
		s.park.ParkThen(ctx, s.prepareWith(dc, prepare), func(p park.Parked, err error) {
			s.heldSafely(line, answer, func() {
				switch body, immediate := p.Immediate(); {
				case err != nil:
					answer(s.heldError(err, line))
				case immediate:
					answer(heldJSON(body))
				case !p.Waiting():
					answer(heldJSON(p.NoVerdict()))
				default:
					s.heldAwait(ctx, p, line, answer)
				}
			})
		})
	})
}

// hold holds a request that has parked: it waits for the verdict off net/http.
func (s *Server) hold(c echo.Context, p park.Parked) bool {
	if s.held == nil {
		return false
	}
	return s.holdWith(c, func(ctx context.Context, line logLine, answer func(held.Answer)) {
		s.heldAwait(ctx, p, line, answer)
	})
}

// holdWith holds c's request: start calls answer once, from any goroutine, with what
// to send; the request is logged (line: its log attributes) when it is sent.
func (s *Server) holdWith(c echo.Context, start func(ctx context.Context, line logLine, answer func(held.Answer))) bool {
	begun, _ := c.Get(ctxStart).(time.Time)
	line := lineOf(c).kept()
	ok := s.held.Hold(c.Response(), c.Request(), func(ctx context.Context, send func(held.Answer)) {
		answer := func(a held.Answer) {
			after := a.Sent
			a.Sent = func(err error) {
				if after != nil {
					after(err)
				}
				status := a.Status
				if err != nil || status == 0 {
					status = statusClientGone
				}
				s.logRequest(line, status, begun, false)
			}
			send(a)
		}
		s.heldSafely(line, answer, func() { start(ctx, line, answer) })
	})
	if ok {
		c.Set(ctxHeld, true)
	}
	return ok
}

// heldSafely runs work, which answers a held request; a panic in it is the request's
// 500. Off Echo, so off its Recover middleware: each goroutine a held request's work
// runs on recovers its own panics.
func (s *Server) heldSafely(line logLine, answer func(held.Answer), work func()) {
	defer func() {
		if p := recover(); p != nil {
			answer(s.heldError(fmt.Errorf("panic: %v\n%s", p, debug.Stack()), line))
		}
	}()
	work()
}

// heldAwait waits, with no goroutine, for a parked request's verdict and answers with
// it; the verdict is published once the answer is out (elicit.Ended.Answered).
func (s *Server) heldAwait(ctx context.Context, p park.Parked, line logLine, answer func(held.Answer)) {
	p.Then(ctx, func(v elicit.Ended, reply any, err error) {
		s.heldSafely(line, answer, func() {
			var a held.Answer
			if err != nil {
				a = s.heldError(err, line)
			} else {
				a = heldJSON(reply)
			}
			a.Sent = func(error) { v.Answered() }
			answer(a)
		})
	})
}

// heldJSON is a 200 with body as JSON; nil is the empty "no verdict" 200.
func heldJSON(body any) held.Answer {
	if body == nil {
		return held.Answer{Status: http.StatusOK}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return held.Answer{Status: http.StatusInternalServerError, ContentType: echo.MIMEApplicationJSON,
			Body: []byte(`{"error":{"code":"internal","message":"internal server error"}}`)}
	}
	return held.Answer{Status: http.StatusOK, ContentType: echo.MIMEApplicationJSON, Body: b}
}

// heldError is err's error envelope (classify); a client that hung up gets nothing.
// A 5xx is logged with the request's attributes (line), as errorHandler does.
func (s *Server) heldError(err error, line logLine) held.Answer {
	if errors.Is(err, elicit.ErrClientGone) {
		return held.Answer{}
	}
	status, code, msg := classify(err)
	if status >= 500 {
		s.log.Error("request failed", line.attrs("err", err)...)
	}
	b, _ := json.Marshal(envelope{Error: envelopeBody{Code: code, Message: msg}})
	a := held.Answer{Status: status, ContentType: echo.MIMEApplicationJSON, Body: b}
	if code == "unavailable" {
		a.Header = http.Header{"Retry-After": {retryAfterUnavailable}}
	}
	return a
}

// detach copies what prepare reads from a request's echo.Context — the request with
// its body, the route's parameters, the identity and request id the middleware set —
// into a context of its own, which outlives the handler (Echo reuses its contexts).
// Nothing is ever written to it: a held request's answer is sent by held.
func (s *Server) detach(c echo.Context) echo.Context {
	r := c.Request().Clone(context.WithoutCancel(c.Request().Context()))
	body, err := readAll(c.Request().Body)
	r.Body = replay(body, err)
	dc := s.echo.NewContext(r, discardWriter{})
	dc.SetPath(c.Path())
	dc.SetParamNames(c.ParamNames()...)
	dc.SetParamValues(c.ParamValues()...)
	for _, k := range []string{ctxUser, ctxToken, ctxRequestID, ctxStart} {
		if v := c.Get(k); v != nil {
			dc.Set(k, v)
		}
	}
	return dc
}

// discardWriter is the response of a detached context: nothing is written to it.
type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}
