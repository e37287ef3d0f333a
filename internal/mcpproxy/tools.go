package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/auth"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/park"
	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/internal/runner"
	"github.com/gatehouse-dev/gatehouse/models"
)

// maxInputRequests bounds how many prompts one runner input_required round may park.
const maxInputRequests = 16

// listTools answers tools/list: the runner's tools, then every upstream server's.
func (p *Proxy) listTools(ctx context.Context, req Request, params json.RawMessage) (map[string]any, *mcp.Error, error) {
	res := map[string]any{"tools": []any{}}
	if p.runner != nil {
		rp := map[string]any{}
		var in struct {
			Cursor string `json:"cursor"`
		}
		if json.Unmarshal(params, &in) == nil && in.Cursor != "" {
			rp["cursor"] = in.Cursor
		}
		raw, err := p.runner.Execute(ctx, req.Session.ID, "tools/list", rp)
		if err != nil {
			rpcErr, err := p.runnerFailure(req, "tools/list", err)
			return nil, rpcErr, err
		}
		list, rpcErr := mcp.ParseRunnerToolsList(raw)
		if rpcErr != nil {
			return nil, rpcErr, nil
		}
		res = list
	}
	if p.upstreams != nil {
		tools, err := p.upstreams.Tools(ctx, req.Session.ID, req.User)
		if errors.Is(err, errs.ErrTooManyRequests) {
			return nil, nil, err // answered 429 (Serve)
		}
		if err != nil {
			return nil, mcp.Errorf(mcp.CodeApplication, "%s", err.Error()), nil
		}
		all, _ := res["tools"].([]any)
		for _, t := range tools {
			all = append(all, t)
		}
		res["tools"] = all
	}
	return res, nil, nil
}

// runnerFailure turns a runner error into a JSON-RPC error the client may read.
func (p *Proxy) runnerFailure(req Request, method string, err error) (*mcp.Error, error) {
	if errors.Is(err, context.Canceled) {
		return nil, ErrClientGone
	}
	var re *runner.Error
	if errors.As(err, &re) {
		p.o.Log.Warn("runner failed", "session_id", req.Session.ID, "method", method, "err", err)
		return mcp.Errorf(mcp.CodeApplication, "%s", re.Msg), nil
	}
	return nil, err
}

// run executes an authorized call: on its upstream server when one owns the name,
// else through the runner, with at most one round of input from a person.
func (p *Proxy) run(ctx context.Context, req Request, call mcp.ToolCall) (map[string]any, *mcp.Error, error) {
	if p.upstreams != nil {
		if _, _, owned := p.upstreams.Owns(call.Name); owned {
			raw, err := p.upstreams.Call(ctx, req.Session.ID, req.User, call.Name, call.Arguments)
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil, ErrClientGone
				}
				if errors.Is(err, errs.ErrTooManyRequests) {
					return nil, nil, err // answered 429 (Serve)
				}
				return nil, mcp.Errorf(mcp.CodeApplication, "%s", err.Error()), nil
			}
			var res map[string]any
			if err := json.Unmarshal(raw, &res); err != nil || res == nil {
				return nil, mcp.Errorf(mcp.CodeApplication, "the MCP server's result is not an object"), nil
			}
			delete(res, "resultType")
			return res, nil, nil
		}
	}
	if p.runner == nil {
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "unknown tool: %s", call.Name), nil
	}
	raw, err := p.runner.Execute(ctx, req.Session.ID, "tools/call", mcp.ExecuteParams(call.Name, call.Arguments))
	if err != nil {
		rpcErr, err := p.runnerFailure(req, "tools/call", err)
		return nil, rpcErr, err
	}
	ans := mcp.ParseRunnerToolAnswer(raw)
	if ans.InputRequired != nil {
		responses, rpcErr, err := p.gatherInput(ctx, req, call.Name, ans.InputRequired)
		if err != nil || rpcErr != nil {
			return nil, rpcErr, err
		}
		raw, err = p.runner.Execute(ctx, req.Session.ID, "tools/call",
			mcp.RetryParams(call.Name, call.Arguments, responses, ans.InputRequired.RequestState))
		if err != nil {
			rpcErr, err := p.runnerFailure(req, "tools/call", err)
			return nil, rpcErr, err
		}
		ans = mcp.ParseRunnerToolAnswer(raw)
		if ans.InputRequired != nil {
			return nil, mcp.Errorf(mcp.CodeApplication,
				"the MCP server asked for input a second time; Gatehouse answers one round of input per call"), nil
		}
	}
	if ans.Err != nil {
		return nil, ans.Err, nil
	}
	return ans.Result, nil, nil
}

// gatherInput parks one prompt per runner input request (mirrored to ancestors like
// every prompt) through the park use case, waits for all of them up to InputTimeout,
// and turns each verdict into an ElicitResult; no verdict is a decline. Each wait is
// one of the caller's parked requests: when the caller has no room for all of them,
// none waits (the prompts already opened are let go, and lapse after the disconnect
// grace).
func (p *Proxy) gatherInput(ctx context.Context, req Request, tool string, ir *mcp.RunnerInputRequired) (map[string]models.Verdict, *mcp.Error, error) {
	keys := ir.Keys()
	if len(keys) > maxInputRequests {
		return nil, mcp.Errorf(mcp.CodeApplication, "the MCP server asked for %d inputs at once (at most %d)", len(keys), maxInputRequests), nil
	}
	parked := make([]park.Parked, 0, len(keys))
	for _, k := range keys {
		params := mcp.InputPromptParams(k, tool, ir.Requests[k])
		if order := prompt.PropertyOrder(ir.Schemas[k]); len(order) > 0 {
			params[prompt.ParamPropertyOrder] = order
		}
		pk, err := p.parkInput(ctx, elicit.Prompt{Session: req.Session, Origin: models.OriginMCPInput,
			Params: params, Timeout: p.o.InputTimeout}, req.User)
		if err != nil {
			for _, pk := range parked {
				pk.Close()
			}
			if errors.Is(err, elicit.ErrClientGone) {
				return nil, nil, ErrClientGone
			}
			return nil, nil, err
		}
		parked = append(parked, pk)
	}
	out := make(map[string]models.Verdict, len(keys))
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Go(func() {
			resp, err := awaitInput(ctx, parked[i])
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			out[k] = resp
		})
	}
	wg.Wait()
	if errors.Is(firstErr, elicit.ErrClientGone) {
		return nil, nil, ErrClientGone
	}
	if firstErr != nil {
		return nil, nil, firstErr
	}
	return out, nil, nil
}

// parkInput parks a server's request for input (origin mcp_input) as one of person's
// parked requests. The MCP endpoint takes edit access, which parking needs.
func (p *Proxy) parkInput(ctx context.Context, pr elicit.Prompt, person string) (park.Parked, error) {
	return p.park.Park(ctx, func() (*park.Job, error) {
		return &park.Job{Level: auth.Edit, Prompt: pr, Person: person,
			Answer:    func(v models.Verdict, _ string) any { return v },
			NoVerdict: models.Verdict{Action: models.ActionDecline}}, nil
	})
}

// awaitInput waits for a parked input request's answer: the person's verdict, or a
// decline when none came.
func awaitInput(ctx context.Context, pk park.Parked) (models.Verdict, error) {
	if !pk.Waiting() {
		return models.Verdict{Action: models.ActionDecline}, nil
	}
	v, reply, err := pk.Await(ctx)
	v.Answered()
	if err != nil {
		return models.Verdict{}, err
	}
	resp, _ := reply.(models.Verdict)
	return resp, nil
}
