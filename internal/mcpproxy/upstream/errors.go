package upstream

import (
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

// humanDuration prints a timeout as a person writes it: 60s, 90s, 5m, 1h.
func humanDuration(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= 2*time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d >= time.Second && d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}
