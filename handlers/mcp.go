package handlers

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/mcpproxy"
)

// mcpPost is the MCP proxy (§6.5): one JSON-RPC 2.0 message per POST. The answer is
// plain JSON, or an SSE stream when the proxy holds a call open with progress
// notifications (clients that cannot be sent elsewhere to approve).
func (s *Server) mcpPost(c echo.Context) error {
	ctx := c.Request().Context()
	sess, err := s.sessions.Authorize(ctx, userOf(c), c.Param("sid"), auth.Edit)
	if err != nil {
		return err
	}
	if !s.mcp.Available() {
		return errs.ErrRunnerUnavailable
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	h := c.Request().Header
	out := &mcpResponse{c: c}
	reply, err := s.mcp.Serve(ctx, mcpproxy.Request{Session: sess, User: userOf(c), Body: body,
		ProtocolHeader: h.Get("MCP-Protocol-Version"), ClientToken: h.Get("Mcp-Session-Id"), BaseURL: s.baseURL(c)}, out)
	if errors.Is(err, mcpproxy.ErrClientGone) || (err != nil && ctx.Err() != nil) {
		return nil // the client hung up; nobody reads an answer
	}
	if err != nil {
		s.log.Error("mcp request failed", "request_id", requestID(c), "session_id", sess.ID, "err", err)
		reply = mcpproxy.Reply{Status: http.StatusOK, Body: mcp.Fail(nil, mcp.Errorf(mcp.CodeApplication, "internal error"))}
	}
	return out.finish(reply)
}

// mcpDelete ends the client's MCP session: the session's upstream server processes
// are reaped (they are spawned again on the next call).
func (s *Server) mcpDelete(c echo.Context) error {
	sess, err := s.sessions.Authorize(c.Request().Context(), userOf(c), c.Param("sid"), auth.Edit)
	if err != nil {
		return err
	}
	s.mcp.EndSession(sess.ID)
	return c.NoContent(http.StatusNoContent)
}

// mcpOtherMethod answers GET (the optional server-to-client SSE stream) with 405, as
// the streamable HTTP transport allows for a server that sends no unsolicited messages.
func (s *Server) mcpOtherMethod(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderAllow, http.MethodPost)
	return echo.NewHTTPError(http.StatusMethodNotAllowed, "the MCP endpoint takes POST only")
}

// baseURL is the absolute base of links handed to MCP clients: --public-url, else the
// request's own scheme and host — taken from X-Forwarded-Proto/-Host only when a
// trusted proxy sent them (anyone else could point the links elsewhere).
func (s *Server) baseURL(c echo.Context) string {
	if s.publicURL != "" {
		return s.publicURL
	}
	r := c.Request()
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if s.ident.Trusted(r.RemoteAddr) {
		if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
			scheme = p
		}
		if fh := r.Header.Get("X-Forwarded-Host"); fh != "" && validHost(fh) {
			host = fh
		}
	}
	return scheme + "://" + host
}

// validHost accepts host[:port] with no path, user info or spaces.
func validHost(h string) bool {
	for _, r := range h {
		if r <= ' ' || r == '/' || r == '@' || r == '?' || r == '#' || r == '\\' || r > '~' {
			return false
		}
	}
	return h != ""
}

// mcpResponse writes a proxy reply: JSON, or — once the proxy sends a notification —
// an SSE stream whose last event is the JSON-RPC answer.
type mcpResponse struct {
	c      echo.Context
	stream *eventStream // nil until the first notification
}

// begin turns the response into an event stream (once).
func (m *mcpResponse) begin() {
	if m.stream == nil {
		m.stream = startEventStream(m.c)
	}
}

// Send writes one JSON-RPC message as an SSE "message" event.
func (m *mcpResponse) Send(msg any) error {
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	m.begin()
	return m.stream.send(0, "message", data)
}

// Keepalive writes an SSE comment.
func (m *mcpResponse) Keepalive() error {
	m.begin()
	return m.stream.comment("waiting for a person to decide")
}

func (m *mcpResponse) finish(r mcpproxy.Reply) error {
	if m.stream != nil {
		return m.Send(r.Body)
	}
	if r.ClientToken != "" {
		m.c.Response().Header().Set("Mcp-Session-Id", r.ClientToken)
	}
	if r.Body == nil {
		return m.c.NoContent(r.Status)
	}
	if res, ok := r.Body.(mcp.Response); ok && m.c.QueryString() == "" {
		// What c.JSON writes, without encoding the answer twice (its encoder
		// re-checks what MarshalJSON returns); ?pretty is left to c.JSON.
		data, err := res.MarshalJSON()
		if err != nil {
			return err
		}
		return m.c.JSONBlob(r.Status, append(data, '\n'))
	}
	return m.c.JSON(r.Status, r.Body)
}
