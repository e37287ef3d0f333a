package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
)

// ErrClientGone reports that the client hung up before its answer was ready; nobody
// reads the reply.
var ErrClientGone = errors.New("mcp client went away")

// Serve answers one JSON-RPC message. Protocol errors travel in a 200 body (§6.5).
// An error return is an internal failure (or ErrClientGone), never the client's fault.
func (p *Proxy) Serve(ctx context.Context, req Request, st Stream) (Reply, error) {
	msg, rpcErr := mcp.Parse(req.Body)
	if rpcErr != nil {
		return ok(mcp.Fail(msg.ID, rpcErr)), nil
	}
	if msg.Kind != mcp.KindRequest {
		// notifications/initialized and the like; stray responses.
		return Reply{Status: http.StatusAccepted}, nil
	}
	if msg.Method == "initialize" {
		c := mcp.ClientFromInitialize(msg.Params)
		res := mcp.InitializeResult(msg.Params, mcp.ServerInfo(""))
		return Reply{Status: http.StatusOK, Body: mcp.Result(msg.ID, res),
			ClientToken: p.signer.SignClient(req.Session.ID, c, ids.New(""))}, nil
	}
	c, known := p.client(req, msg.Params)
	if !known {
		return Reply{Status: http.StatusNotFound, Body: mcp.Fail(msg.ID, mcp.Errorf(mcp.CodeInvalidRequest,
			"unknown Mcp-Session-Id: this server did not issue it (or no longer can); initialize again"))}, nil
	}
	switch msg.Method {
	case "server/discover":
		return ok(mcp.Result(msg.ID, mcp.DiscoverResult(mcp.ServerInfo(""), p.o.Tasks != nil))), nil
	case "ping":
		return ok(mcp.Result(msg.ID, mcp.Complete(c, map[string]any{}))), nil
	case "tools/list":
		res, rpcErr, err := p.listTools(ctx, req, msg.Params)
		if err != nil {
			return limited(msg.ID, err)
		}
		if rpcErr != nil {
			return ok(mcp.Fail(msg.ID, rpcErr)), nil
		}
		if c.Latest() {
			// The list is the runner's and the servers', per session: a client may
			// cache it for no time, and only for this user.
			res["ttlMs"] = 0
			res["cacheScope"] = "private"
		}
		return ok(mcp.Result(msg.ID, mcp.Complete(c, res))), nil
	case "tools/call":
		res, rpcErr, err := p.callTool(ctx, req, c, msg.Params, st)
		if err != nil {
			return limited(msg.ID, err)
		}
		if rpcErr != nil {
			return ok(mcp.Fail(msg.ID, rpcErr)), nil
		}
		if rt := res["resultType"]; rt != "input_required" && rt != "task" {
			res = mcp.Complete(c, res)
		}
		return ok(mcp.Result(msg.ID, res)), nil
	case "tasks/get", "tasks/update", "tasks/cancel":
		if p.o.Tasks == nil {
			break
		}
		res, rpcErr, err := p.serveTask(ctx, req, msg.Method, msg.Params)
		if err != nil {
			return limited(msg.ID, err)
		}
		if rpcErr != nil {
			return ok(mcp.Fail(msg.ID, rpcErr)), nil
		}
		return ok(mcp.Result(msg.ID, res)), nil
	}
	return ok(mcp.Fail(msg.ID, mcp.Errorf(mcp.CodeMethodNotFound, "method not found: %s", msg.Method))), nil
}

func ok(body mcp.Response) Reply { return Reply{Status: http.StatusOK, Body: body} }

// limited answers a per-person limit the call ran into — too many parked requests or
// upstream server processes (errs.ErrTooManyRequests) — as HTTP 429 with a JSON-RPC
// error whose message says which limit and whose data.code is "too_many_requests"
// (the code of Gatehouse's error envelope). Any other err is returned as it is.
func limited(id json.RawMessage, err error) (Reply, error) {
	if !errors.Is(err, errs.ErrTooManyRequests) {
		return Reply{}, err
	}
	return Reply{Status: http.StatusTooManyRequests, Body: mcp.Fail(id, &mcp.Error{Code: mcp.CodeApplication,
		Message: err.Error(), Data: map[string]any{"code": "too_many_requests"}})}, nil
}

// client works out who is asking: the revision from the MCP-Protocol-Version header,
// the request's _meta (2026-07-28) or the Mcp-Session-Id issued at initialize; the
// elicitation modes from the request's _meta, else from initialize. known is false for
// an Mcp-Session-Id this server cannot verify.
func (p *Proxy) client(req Request, params json.RawMessage) (c mcp.Client, known bool) {
	if req.ClientToken != "" {
		fromInit, err := p.clients.verify(p.signer, req.ClientToken, req.Session.ID)
		if err != nil {
			return mcp.Client{}, false
		}
		c = fromInit
	}
	meta := mcp.ParseRequestMeta(params)
	if req.ProtocolHeader != "" {
		c.Version = req.ProtocolHeader
	}
	if meta.Version != "" {
		c.Version = meta.Version
	}
	if meta.Elicitation != nil {
		c.Elicitation = meta.Elicitation
	}
	return c, true
}
