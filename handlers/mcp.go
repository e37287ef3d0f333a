package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/runner"
	"github.com/gatehouse-dev/gatehouse/models"
)

// mcpPost is the MCP proxy (§6.5): one JSON-RPC 2.0 message per POST, answered with
// plain JSON (never SSE) and no Mcp-Session-Id — the proxy is stateless, the session
// is the Gatehouse session in the path. Protocol errors travel in a 200 body.
func (s *Server) mcpPost(c echo.Context) error {
	ctx := c.Request().Context()
	sess, err := s.sessions.Authorize(ctx, userOf(c), c.Param("sid"), auth.Edit)
	if err != nil {
		return err
	}
	if s.runner == nil {
		return errs.ErrRunnerUnavailable
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	msg, rpcErr := mcp.Parse(body)
	if rpcErr != nil {
		return c.JSON(http.StatusOK, mcp.Fail(msg.ID, rpcErr))
	}
	if msg.Kind != mcp.KindRequest {
		// Notifications (notifications/initialized, …) and stray responses.
		return c.NoContent(http.StatusAccepted)
	}
	resp, err := s.mcpDispatch(ctx, sess, userOf(c), msg)
	if errors.Is(err, elicit.ErrClientGone) || (err != nil && ctx.Err() != nil) {
		return nil // the client hung up; nobody reads an answer
	}
	if err != nil {
		s.log.Error("mcp request failed", "request_id", requestID(c), "session_id", sess.ID, "method", msg.Method, "err", err)
		resp = mcp.Fail(msg.ID, mcp.Errorf(mcp.CodeApplication, "internal error"))
	}
	return c.JSON(http.StatusOK, resp)
}

// mcpOtherMethod answers GET (the optional server-to-client SSE stream) and DELETE (end
// of an MCP session) with 405, as the streamable HTTP transport allows for a server
// that keeps no MCP sessions and sends no unsolicited messages.
func (s *Server) mcpOtherMethod(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderAllow, http.MethodPost)
	return echo.NewHTTPError(http.StatusMethodNotAllowed, "the MCP endpoint takes POST only")
}

func (s *Server) mcpDispatch(ctx context.Context, sess *models.Session, user string, msg mcp.Message) (mcp.Response, error) {
	switch msg.Method {
	case "server/discover":
		return mcp.Result(msg.ID, mcp.DiscoverResult(mcp.ServerInfo(""))), nil
	case "initialize":
		return mcp.Result(msg.ID, mcp.InitializeResult(msg.Params, mcp.ServerInfo(""))), nil
	case "ping":
		return mcp.Result(msg.ID, map[string]any{}), nil
	case "tools/list":
		return s.mcpToolsList(ctx, sess, msg)
	case "tools/call":
		return s.mcpToolsCall(ctx, sess, user, msg)
	}
	return mcp.Fail(msg.ID, mcp.Errorf(mcp.CodeMethodNotFound, "method not found: %s", msg.Method)), nil
}

// mcpToolsList answers with the runner's tool list.
func (s *Server) mcpToolsList(ctx context.Context, sess *models.Session, msg mcp.Message) (mcp.Response, error) {
	params := map[string]any{}
	var p struct {
		Cursor string `json:"cursor"`
	}
	if json.Unmarshal(msg.Params, &p) == nil && p.Cursor != "" {
		params["cursor"] = p.Cursor
	}
	raw, err := s.runner.Execute(ctx, sess.ID, "tools/list", params)
	if err != nil {
		return s.runnerFailure(msg, sess, err)
	}
	result, rpcErr := mcp.ParseRunnerToolsList(raw)
	if rpcErr != nil {
		return mcp.Fail(msg.ID, rpcErr), nil
	}
	return mcp.Result(msg.ID, result), nil
}

// runnerFailure turns a runner error into a JSON-RPC error the client may read.
func (s *Server) runnerFailure(msg mcp.Message, sess *models.Session, err error) (mcp.Response, error) {
	if errors.Is(err, context.Canceled) {
		return mcp.Response{}, elicit.ErrClientGone
	}
	var re *runner.Error
	if errors.As(err, &re) {
		s.log.Warn("runner failed", "session_id", sess.ID, "method", msg.Method, "err", err)
		return mcp.Fail(msg.ID, mcp.Errorf(mcp.CodeApplication, "%s", re.Msg)), nil
	}
	return mcp.Response{}, err
}
