package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/park"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/models"
)

// A client that declares the Tasks extension on a call that needs approval gets a task
// instead of today's answers (input_required with requestState, -32042, a held call).
// The task's id is the id of the call's prompt, and where the task stands is read from
// two rows on every request — the prompt (pending, decided how) and the task (the call
// itself, the client's answer, the outcome) — so any replica, and this one after a
// restart, answers tasks/get alike. An accepted call runs when the client next asks
// about its task, exactly once: the run is claimed by a conditional update first.

// TaskStore keeps MCP tasks (internal/store).
type TaskStore interface {
	InsertMCPTask(ctx context.Context, t *models.MCPTask) error
	GetMCPTask(ctx context.Context, id string) (*models.MCPTask, error)
	AnswerMCPTask(ctx context.Context, id string, at time.Time) error
	ClaimMCPTask(ctx context.Context, id string, at time.Time, out *models.TaskOutcome) (bool, error)
	FinishMCPTask(ctx context.Context, id string, at time.Time, out models.TaskOutcome) error
}

// maxTaskID bounds a task id worth looking up (prompt ids are far shorter).
const maxTaskID = 128

// askAsTask handles a policy ASK for a client that declared the Tasks extension on
// this call. A Gatehouse rule may still answer at once (the call's result, no task);
// otherwise the call's prompt — found again when the same person makes the same call
// while it is pending — is held by a task: input_required carrying the approval
// request in a mode the client declared, or working while the person decides in
// Gatehouse (the tool-approval extension, or a client that declared no elicitation).
func (p *Proxy) askAsTask(ctx context.Context, req Request, c mcp.Client, call mcp.ToolCall, ev policy.Event, res policy.Result, meta mcp.RequestMeta) (map[string]any, *mcp.Error, error) {
	mode, how := models.TaskModeOutOfBand, p.channelFor(c)
	if !meta.ToolApproval && (how == askInputURL || how == askInputForm) {
		mode = models.TaskModeInput
	}
	urlMode := how == askInputURL || (mode == models.TaskModeOutOfBand && p.o.Mode == mcp.ModeURL)
	prompt := elicit.Prompt{Session: req.Session, Origin: models.OriginPolicy, Person: req.User, URLMode: urlMode,
		// Tasks get a call key of their own (naming the person), so only this person's
		// same call finds this prompt again, and always as its task.
		CallKey: callKey(req.Session.ID, call.Name, call, "task\x00"+req.User+"\x00"+meta.ToolUseID),
		Params:  policy.PromptParams(ev, res, urlMode)}
	// A decline is final for its task: the same call made after it is a new request
	// with a task of its own, so no declined prompt is looked for.
	asked, err := p.park.Ask(ctx, park.Call{Prompt: prompt, Tool: call.Name, Args: call.ArgumentsMap(), Hints: ev.Hints,
		DeclinedSince: p.o.Now().UTC().Add(24 * time.Hour)})
	switch {
	case errors.Is(err, elicit.ErrClientGone):
		return nil, nil, ErrClientGone
	case err != nil:
		return nil, nil, err
	}
	row := asked.Row
	task, err := p.o.Tasks.GetMCPTask(ctx, row.ID)
	if errors.Is(err, errs.ErrNotFound) {
		if row.ResolvedVia != nil && *row.ResolvedVia == models.ViaRule {
			return p.settle(ctx, req, call, askInputURL, row) // a rule answered: no task
		}
		task, err = p.createTask(ctx, req, call, mode, row)
	}
	if err != nil {
		return nil, nil, err
	}
	view, err := p.taskView(ctx, req, task, row)
	if err != nil {
		return nil, nil, err
	}
	return mcp.CreateTaskResult(view), nil, nil
}

// createTask records the task holding call, whose prompt is row. It lives as long as
// the prompt may wait plus --mcp-approval-ttl for the client to come back for the
// outcome. Two identical calls racing record one task.
func (p *Proxy) createTask(ctx context.Context, req Request, call mcp.ToolCall, mode string, row *models.Elicitation) (*models.MCPTask, error) {
	now := p.o.Now().UTC().Truncate(time.Microsecond)
	t := &models.MCPTask{ID: row.ID, SessionID: req.Session.ID, Person: req.User, Tool: call.Name, Arguments: string(call.Arguments),
		Mode: mode, CreatedAt: row.CreatedAt.UTC().Truncate(time.Microsecond), UpdatedAt: now,
		ExpiresAt: row.ExpiresAt.Add(p.o.ApprovalTTL).UTC().Truncate(time.Microsecond)}
	err := p.o.Tasks.InsertMCPTask(ctx, t)
	if errors.Is(err, errs.ErrConflict) {
		return p.o.Tasks.GetMCPTask(ctx, row.ID)
	}
	return t, err
}

// serveTask answers tasks/get, tasks/update and tasks/cancel. Only a request that
// declares the Tasks extension may use them, and only on a task of its own session
// and person, before the task expired; anything else is refused and runs nothing.
func (p *Proxy) serveTask(ctx context.Context, req Request, method string, params json.RawMessage) (map[string]any, *mcp.Error, error) {
	if !mcp.ParseRequestMeta(params).Tasks {
		return nil, mcp.MissingTasksCapabilityError(), nil
	}
	tp, rpcErr := mcp.ParseTaskParams(method, params)
	if rpcErr != nil {
		return nil, rpcErr, nil
	}
	task, row, rpcErr, err := p.findTask(ctx, req, tp.TaskID)
	if rpcErr != nil || err != nil {
		return nil, rpcErr, err
	}
	switch method {
	case "tasks/update":
		err = p.updateTask(ctx, req, task, row, tp.InputResponses)
	case "tasks/cancel":
		err = p.cancelTask(ctx, req, task, row)
	default:
		view, err := p.taskView(ctx, req, task, row)
		if err != nil {
			return nil, nil, err
		}
		return mcp.GetTaskResult(view), nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return map[string]any{"resultType": "complete"}, nil, nil
}

// findTask loads task id and its prompt as the caller may see them: a task of another
// session or person is not found, like one that never existed; one past its time to
// live has expired.
func (p *Proxy) findTask(ctx context.Context, req Request, id string) (*models.MCPTask, *models.Elicitation, *mcp.Error, error) {
	if len(id) > maxTaskID {
		return nil, nil, mcp.TaskNotFoundError(), nil
	}
	task, err := p.o.Tasks.GetMCPTask(ctx, id)
	if errors.Is(err, errs.ErrNotFound) {
		return nil, nil, mcp.TaskNotFoundError(), nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if task.SessionID != req.Session.ID || task.Person != req.User {
		p.refused(req, id, task.Tool, "other_task")
		return nil, nil, mcp.TaskNotFoundError(), nil
	}
	if !p.o.Now().Before(task.ExpiresAt) {
		return nil, nil, mcp.TaskExpiredError(), nil
	}
	row, err := p.elicit.GetInSession(ctx, req.Session.ID, id)
	if errors.Is(err, errs.ErrNotFound) {
		return nil, nil, mcp.TaskNotFoundError(), nil
	}
	return task, row, nil, err
}

// updateTask takes the client's answer to the task's approval request, while it is
// outstanding. "decline" (or a form whose approved is false) is the verdict, given at
// the client; "accept" of a URL request only means the link was opened, and "cancel"
// that nothing was chosen: either way the request is answered and the task works on
// while the person decides in Gatehouse. Answers to anything else are ignored.
func (p *Proxy) updateTask(ctx context.Context, req Request, task *models.MCPTask, row *models.Elicitation, responses map[string]json.RawMessage) error {
	raw, ok := responses[task.ID]
	if !ok || task.Mode != models.TaskModeInput || task.AnsweredAt != nil || !row.IsPending() {
		return nil
	}
	if saidNo(raw) {
		p.refused(req, row.ID, task.Tool, "client_declined")
		if _, err := p.elicit.Resolve(ctx, req.Session.ID, row.ID, models.Verdict{Action: models.ActionDecline}, req.User, models.ViaMCPClient); err != nil {
			return err
		}
	}
	return p.o.Tasks.AnswerMCPTask(ctx, task.ID, p.o.Now())
}

// cancelTask withdraws the task's prompt (a person no longer sees it) and cancels the
// task — also when the call was approved but has not begun to run; once it runs, the
// cancel comes too late and the task completes as it would have.
func (p *Proxy) cancelTask(ctx context.Context, req Request, task *models.MCPTask, row *models.Elicitation) error {
	if row.IsPending() {
		out, err := p.elicit.Resolve(ctx, req.Session.ID, row.ID, models.Verdict{Action: models.ActionCancel}, req.User, models.ViaMCPClient)
		if err != nil {
			return err
		}
		if out.Row != nil {
			row = out.Row
		} else if row, err = p.elicit.Get(ctx, row.ID); err != nil {
			return err
		}
	}
	withdrawn := row.Action != nil && *row.Action == models.ActionCancel && row.ResolvedVia != nil && *row.ResolvedVia == models.ViaMCPClient
	if !withdrawn && !accepted(row) {
		return nil // already ended (declined, expired): the task completed
	}
	won, err := p.o.Tasks.ClaimMCPTask(ctx, task.ID, p.o.Now(), &models.TaskOutcome{Outcome: models.TaskCancelled})
	if err != nil || !won || !accepted(row) {
		return err
	}
	// The approval is spent on nothing, so no later call can use it.
	_, err = p.elicit.Consume(ctx, req.Session.ID, row.ID)
	return err
}

// taskView is the task as it stands, running its call first when a person accepted it
// and nobody has yet.
func (p *Proxy) taskView(ctx context.Context, req Request, task *models.MCPTask, row *models.Elicitation) (mcp.Task, error) {
	if task.ClaimedAt == nil && accepted(row) {
		var err error
		if task, err = p.runTask(ctx, req, task, row); err != nil {
			return mcp.Task{}, err
		}
	}
	v := mcp.Task{ID: task.ID, CreatedAt: task.CreatedAt, UpdatedAt: task.UpdatedAt, TTL: task.ExpiresAt.Sub(task.CreatedAt),
		PollInterval: p.o.TaskPollInterval}
	if row.ResolvedAt != nil && row.ResolvedAt.After(v.UpdatedAt) {
		v.UpdatedAt = *row.ResolvedAt
	}
	switch {
	case task.Outcome != nil:
		v.Status = *task.Outcome
		switch v.Status {
		case models.TaskCompleted:
			_ = json.Unmarshal([]byte(deref(task.Result)), &v.Result)
		case models.TaskFailed:
			v.Error = json.RawMessage(deref(task.Result))
		}
	case task.ClaimedAt != nil:
		v.Status, v.StatusMessage = mcp.TaskWorking, "Approved in Gatehouse; "+task.Tool+" is running."
	case row.IsPending():
		p.waitingView(req, task, row, &v)
	case row.Status == models.StatusResolved && row.Action != nil && *row.Action == models.ActionDecline:
		v.Status, v.Result = mcp.TaskCompleted, declinedResult(req, row)
		dispose(task, v.Result, mcp.DispositionDenied)
	default:
		v.Status, v.Result = mcp.TaskCompleted, notDecidedResult(req, row)
		dispose(task, v.Result, mcp.DispositionDenied)
	}
	if v.Result != nil {
		v.Result["resultType"] = "complete" // what the call would have answered
	}
	return v, nil
}

// waitingView is a task whose prompt is pending: input_required while the client has
// the approval request to answer, else working. Either way its _meta repeats the
// authorization denial (a client that comes back with only the task id learns why it
// waits): a remedy is under way, at the approval page or out of band.
func (p *Proxy) waitingView(req Request, task *models.MCPTask, row *models.Elicitation, v *mcp.Task) {
	link := req.BaseURL + mcp.ApprovePath(req.Session.ID, row.ID)
	d := mcp.Denial{Remediation: mcp.RemediationAvailable, ContextID: row.ID}
	if task.Mode == models.TaskModeInput && task.AnsweredAt == nil {
		a := mcp.Approval{ElicitationID: row.ID, Message: promptMessage(row)}
		if row.DecodeParams().Mode == mcp.ModeURL {
			a.URL, d.HintURL = link, link
		}
		v.Status, v.InputRequests = mcp.TaskInputRequired, mcp.ApprovalInputRequests(a)
	} else {
		v.Status, d.HintTask = mcp.TaskWorking, true
		v.StatusMessage = "Waiting for a person to approve " + task.Tool + " in Gatehouse: " + link
	}
	v.Meta = map[string]any{mcp.MetaAuthorization: d.Envelope()}
	if task.Mode == models.TaskModeOutOfBand {
		v.Meta[mcp.MetaModelImmediateResponse] = "This call is waiting for a person's approval in Gatehouse. It has not run, and it may still be declined; check the task again later."
	}
}

// dispose marks the result of an approval task (out of band) with whether the tool
// ran (mcp.MetaDisposition); the result's text says so for every client.
func dispose(task *models.MCPTask, result map[string]any, disposition string) {
	if task.Mode != models.TaskModeOutOfBand || result == nil {
		return
	}
	meta, _ := result["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		result["_meta"] = meta
	}
	meta[mcp.MetaDisposition] = disposition
}
