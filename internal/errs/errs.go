// Package errs defines the typed errors the domain returns. They carry no HTTP status;
// handlers.ErrorHandler maps them to the JSON envelope, a flash fragment or an error page.
package errs

import (
	"errors"
	"fmt"
)

// Sentinel errors of the domain.
var (
	ErrNotFound          = errors.New("not found")
	ErrForbidden         = errors.New("forbidden")
	ErrUnauthorized      = errors.New("unauthorized")
	ErrConflict          = errors.New("conflict")
	ErrRunnerUnavailable = errors.New("runner unavailable")
	// ErrUnavailable means the database cannot be reached right now (down, restarting,
	// failing over, or too slow to answer within the statement timeout). Nothing was
	// decided by the failed call that the caller could rely on; retrying later is safe.
	ErrUnavailable = errors.New("database unavailable")
	// ErrTooManyRequests is a per-person limit reached (429), e.g. open streams.
	ErrTooManyRequests = errors.New("too many requests")
	// ErrGone is something that existed and no longer works (410), e.g. an expired
	// action link.
	ErrGone = errors.New("gone")
	// ErrJournalClaimed says that some of the rule answers being stored from the
	// decision journal are no longer in it: another replica stored them already.
	// Nothing was written; store the ones still journaled.
	ErrJournalClaimed = errors.New("decided rows are no longer journaled")
)

// Unavailable wraps cause, a driver or network error, so that errors.Is matches both
// ErrUnavailable and cause. Its text (logged, never shown to clients) keeps the cause.
func Unavailable(cause error) error {
	if cause == nil || errors.Is(cause, ErrUnavailable) {
		return cause
	}
	return &unavailableError{cause: cause}
}

type unavailableError struct{ cause error }

func (e *unavailableError) Error() string { return "database unavailable: " + e.cause.Error() }

func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.cause} }

// TooManyRequests wraps ErrTooManyRequests with a message a client may see.
func TooManyRequests(format string, a ...any) error {
	return &Error{Kind: ErrTooManyRequests, Msg: fmt.Sprintf(format, a...)}
}

// Gone wraps ErrGone with a message a client may see.
func Gone(format string, a ...any) error {
	return &Error{Kind: ErrGone, Msg: fmt.Sprintf(format, a...)}
}

// NotFound wraps ErrNotFound with a message a client may see.
func NotFound(format string, a ...any) error {
	return &Error{Kind: ErrNotFound, Msg: fmt.Sprintf(format, a...)}
}

// Forbidden wraps ErrForbidden with a message a client may see.
func Forbidden(format string, a ...any) error {
	return &Error{Kind: ErrForbidden, Msg: fmt.Sprintf(format, a...)}
}

// Conflict wraps ErrConflict with a message a client may see.
func Conflict(format string, a ...any) error {
	return &Error{Kind: ErrConflict, Msg: fmt.Sprintf(format, a...)}
}

// Unauthorized wraps ErrUnauthorized with a message a client may see.
func Unauthorized(format string, a ...any) error {
	return &Error{Kind: ErrUnauthorized, Msg: fmt.Sprintf(format, a...)}
}

// Error is a sentinel plus a client-safe message.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Unwrap lets errors.Is match the sentinel.
func (e *Error) Unwrap() error { return e.Kind }

// InvalidInput is a malformed request (400): wrong shape, missing field, bad id.
type InvalidInput struct {
	Field string
	Msg   string
}

func (e *InvalidInput) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// Invalid returns an InvalidInput error.
func Invalid(field, format string, a ...any) error {
	return &InvalidInput{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// ValidationError is a well-formed request whose content is not acceptable (422), such
// as an ElicitationResult with an unknown action.
type ValidationError struct {
	Field string
	Msg   string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// Validation returns a ValidationError.
func Validation(field, format string, a ...any) error {
	return &ValidationError{Field: field, Msg: fmt.Sprintf(format, a...)}
}
