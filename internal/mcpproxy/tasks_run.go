package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
	"github.com/gatehouse-dev/gatehouse/models"
)

// runTask runs the call of a task a person accepted, at most once: the run is claimed
// by a conditional update, and a caller that loses the claim (another poll, on this
// replica or another) sees the task as the winner leaves it — running, then done.
func (p *Proxy) runTask(ctx context.Context, req Request, task *models.MCPTask, row *models.Elicitation) (*models.MCPTask, error) {
	won, err := p.o.Tasks.ClaimMCPTask(ctx, task.ID, p.o.Now(), nil)
	if err != nil {
		return nil, err
	}
	if won {
		// The run is the task's, not the request's: it goes on, and its outcome is
		// recorded, when the client hangs up meanwhile.
		ctx = context.WithoutCancel(ctx)
		if err := p.o.Tasks.FinishMCPTask(ctx, task.ID, p.o.Now(), p.taskOutcome(ctx, req, task, row)); err != nil {
			return nil, err
		}
	}
	return p.o.Tasks.GetMCPTask(ctx, task.ID)
}

// taskOutcome spends the approval, checks the call against the policies as they are
// now (an approval is an input to that decision, not a standing grant), and runs it.
// A refusal completes the task with an isError result; a JSON-RPC error from the run
// fails it.
func (p *Proxy) taskOutcome(ctx context.Context, req Request, task *models.MCPTask, row *models.Elicitation) models.TaskOutcome {
	call := mcp.ToolCall{Name: task.Tool, Arguments: json.RawMessage(task.Arguments), Params: json.RawMessage(`{}`)}
	fresh, err := p.elicit.Consume(ctx, req.Session.ID, row.ID)
	if err != nil {
		return p.taskFailed(req, task, err)
	}
	if !fresh {
		p.refused(req, row.ID, task.Tool, "replayed")
		d := rowDenial(req, row)
		d.Remediation = mcp.RemediationUnavailable
		return taskCompleted(task, mcp.DeniedResult("This approval was already used for a call; the tool did not run.", d), mcp.DispositionDenied)
	}
	if res := p.evaluateCall(ctx, req, call); res.Action == policy.Deny {
		msg, d := p.policyDenial(req, call, res)
		return taskCompleted(task, mcp.DeniedResult(msg+" (the tool did not run)", d), mcp.DispositionDenied)
	}
	result, rpcErr, err := p.run(ctx, req, call)
	switch {
	case err != nil:
		return p.taskFailed(req, task, err)
	case rpcErr != nil:
		raw, _ := json.Marshal(rpcErr)
		return models.TaskOutcome{Outcome: models.TaskFailed, Result: raw}
	case result["isError"] == true:
		return taskCompleted(task, result, mcp.DispositionExecutionError)
	}
	return taskCompleted(task, result, mcp.DispositionExecuted)
}

// evaluateCall is the policies' answer to call now. (The same event as a tools/call's:
// the call's name and arguments, and its server and tool when a server owns it.)
func (p *Proxy) evaluateCall(ctx context.Context, req Request, call mcp.ToolCall) policy.Result {
	return p.policies.EvaluateContext(ctx, p.callEvent(ctx, req, call))
}

// callEvent is the policy event of a tool call: its name and arguments, and — for a
// tool an upstream server owns — the server, the tool and the tool's annotations.
func (p *Proxy) callEvent(ctx context.Context, req Request, call mcp.ToolCall) policy.Event {
	data := map[string]any{"name": call.Name, "arguments": call.ArgumentsMap()}
	var hints *risk.Hints
	if p.upstreams != nil {
		if server, tool, owned := p.upstreams.Owns(call.Name); owned {
			data["server"], data["tool"] = server, tool
			hints = p.upstreams.Hints(ctx, req.Session.ID, req.User, call.Name)
		}
	}
	sess := req.Session
	ev := policy.NewEvent(policy.SessionInfo{ID: sess.ID, Depth: sess.Depth, RootID: sess.RootID},
		req.User, policy.PhaseToolCall, call.Name, data, nil)
	ev.Hints = hints
	return ev
}

func taskCompleted(task *models.MCPTask, result map[string]any, disposition string) models.TaskOutcome {
	dispose(task, result, disposition)
	raw, _ := json.Marshal(result)
	return models.TaskOutcome{Outcome: models.TaskCompleted, Result: raw}
}

// taskFailed records a run that could not produce a result: the person's limit on
// server processes, said as such; anything else as an internal error (logged, never
// shown).
func (p *Proxy) taskFailed(req Request, task *models.MCPTask, err error) models.TaskOutcome {
	e := mcp.Errorf(-32603, "internal error")
	if errors.Is(err, errs.ErrTooManyRequests) {
		e = &mcp.Error{Code: mcp.CodeApplication, Message: err.Error(), Data: map[string]any{"code": "too_many_requests"}}
	} else {
		p.o.Log.Error("mcp task failed", "session_id", req.Session.ID, "elicitation_id", task.ID, "err", err)
	}
	raw, _ := json.Marshal(e)
	return models.TaskOutcome{Outcome: models.TaskFailed, Result: raw}
}
