package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/views"
)

// envelope is the JSON error body every /v1 error uses.
type envelope struct {
	Error envelopeBody `json:"error"`
}

type envelopeBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// classify maps an error to its status, envelope code and client-safe message.
// Unknown errors are a 500 whose text never reaches the client.
func classify(err error) (int, string, string) {
	var he *echo.HTTPError
	var inv *errs.InvalidInput
	var val *errs.ValidationError
	switch {
	case errors.As(err, &inv):
		return http.StatusBadRequest, "invalid_input", inv.Error()
	case errors.As(err, &val):
		return http.StatusUnprocessableEntity, "validation_failed", val.Error()
	case errors.Is(err, errs.ErrNotFound):
		return http.StatusNotFound, "not_found", err.Error()
	case errors.Is(err, errs.ErrForbidden):
		return http.StatusForbidden, "forbidden", err.Error()
	case errors.Is(err, errs.ErrUnauthorized):
		return http.StatusUnauthorized, "unauthorized", err.Error()
	case errors.Is(err, errs.ErrConflict):
		return http.StatusConflict, "conflict", err.Error()
	case errors.Is(err, errs.ErrGone):
		return http.StatusGone, "gone", err.Error()
	case errors.Is(err, errs.ErrUnavailable):
		return http.StatusServiceUnavailable, "unavailable", "the database is unavailable; retry shortly"
	case errors.Is(err, errs.ErrTooManyRequests):
		return http.StatusTooManyRequests, "too_many_requests", err.Error()
	case errors.Is(err, errs.ErrRunnerUnavailable):
		return http.StatusServiceUnavailable, "runner_unavailable", "no MCP runner is configured"
	case errors.As(err, &he):
		msg := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && he.Code < 500 {
			msg = m
		}
		return he.Code, codeFor(he.Code), msg
	}
	return http.StatusInternalServerError, "internal", "internal server error"
}

func codeFor(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_input"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusConflict:
		return "conflict"
	case http.StatusRequestTimeout:
		return "request_timeout"
	case http.StatusRequestEntityTooLarge:
		return "payload_too_large"
	case http.StatusUnsupportedMediaType:
		return "unsupported_media_type"
	case http.StatusUnprocessableEntity:
		return "validation_failed"
	case http.StatusTooManyRequests:
		return "too_many_requests"
	case http.StatusServiceUnavailable:
		return "runner_unavailable"
	}
	if status >= 500 {
		return "internal"
	}
	return "invalid_input"
}

// retryAfterUnavailable is the Retry-After of a 503 for a database outage, in seconds.
const retryAfterUnavailable = "2"

// errorHandler is Echo's single HTTPErrorHandler: the JSON envelope for the API, a
// plain error page for browser routes. The real error of a 5xx is logged with the
// request id, never shown.
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, code, msg := classify(err)
	if code == "unavailable" {
		// A database outage is usually over within seconds (a restart, a failover).
		c.Response().Header().Set("Retry-After", retryAfterUnavailable)
	}
	if status >= 500 {
		s.log.Error("request failed", "request_id", requestID(c), "method", c.Request().Method,
			"path", logPath(c.Request()), "err", err)
	}
	var werr error
	switch {
	case c.Request().Method == http.MethodHead:
		werr = c.NoContent(status)
	case s.isPage(c):
		werr = s.renderErrorPage(c, status, msg)
	default:
		werr = c.JSON(status, envelope{Error: envelopeBody{Code: code, Message: msg}})
	}
	if werr != nil {
		s.log.Warn("write error response", "err", werr, "request_id", requestID(c))
	}
}

// isPage reports whether the request is for a browser page rather than the JSON API.
func (s *Server) isPage(c echo.Context) bool {
	p := c.Request().URL.Path
	if strings.HasPrefix(p, "/act/") && wantsJSON(c) { // the service worker's action posts
		return false
	}
	return !strings.HasPrefix(p, "/v1/") && p != "/healthz" && p != "/readyz" && p != "/metrics"
}

// renderErrorPage shows the error page for browser routes, or — for htmx requests,
// which swap fragments — a flash notice retargeted into the page's flash slot.
func (s *Server) renderErrorPage(c echo.Context, status int, msg string) error {
	setPageHeaders(c.Response().Header())
	heading, text := errorText(status, msg)
	if status == http.StatusUnauthorized && s.oidc != nil {
		heading, text = "Sign in again", "Your Gatehouse sign-in has ended. Open the page again to sign in."
	}
	if isHTMX(c) {
		c.Response().Header().Set("HX-Retarget", "#flash")
		c.Response().Header().Set("HX-Reswap", "innerHTML")
		return s.render(c, status, views.Flash(text))
	}
	page := views.ErrorPage{Status: status, Heading: heading, Message: text}
	page.Chrome = views.Chrome{Title: heading, User: userOf(c), Assets: s.assets}
	if page.Chrome.User == auth.LocalUser {
		page.Chrome.User = ""
	}
	return s.render(c, status, views.Error(page))
}

// errorText words an error for a person. Not-found hides whether the thing exists;
// server errors never show their cause.
func errorText(status int, msg string) (string, string) {
	switch {
	case status == http.StatusUnauthorized:
		return "Sign in through your proxy",
			"Gatehouse knows who you are from the sign-in proxy in front of it. Sign in through your proxy, then open this page again."
	case status == http.StatusForbidden:
		return "Not allowed", msg
	case status == http.StatusNotFound:
		return "Nothing here", "There is nothing at this address, or you do not have access to it."
	case status >= 500:
		return "Something went wrong", "Gatehouse could not finish this request. Try again in a moment."
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return http.StatusText(status), msg
}

// bad is shorthand for a 400 with a message.
func bad(field, format string, a ...any) error { return errs.Invalid(field, format, a...) }
