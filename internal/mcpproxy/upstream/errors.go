package upstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Error is a failure of an upstream server whose Msg is safe to show an MCP client
// (it names the server and what went wrong, never Gatehouse internals). The proxy
// answers it as a JSON-RPC error so the client does not take it for tool output.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func errorf(format string, a ...any) *Error { return &Error{Msg: fmt.Sprintf(format, a...)} }

// serverAnswered reports whether err is a JSON-RPC error the server itself sent (an
// unknown tool, bad arguments): the server is healthy and its message is the answer.
func serverAnswered(err error) (*jsonrpc.Error, bool) {
	var we *jsonrpc.Error
	return we, errors.As(err, &we)
}

// timedOut reports whether ctx ended by its own deadline rather than by a caller
// cancelling its parent.
func timedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), context.DeadlineExceeded)
}

// humanDuration prints 60s as "60s" and 5m0s as "5m", as a person wrote it.
func humanDuration(d time.Duration) string {
	s := d.String()
	if len(s) > 4 && s[len(s)-4:] == "m0s" {
		s = s[:len(s)-2]
	}
	if len(s) > 4 && s[len(s)-4:] == "h0m" {
		s = s[:len(s)-2]
	}
	return s
}
