package handlers

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/models"
)

// maxInputRequests bounds how many prompts one runner input_required round may park.
const maxInputRequests = 16

// mcpToolsCall runs a tool through the policies and the runner:
//  1. DENY → a JSON-RPC error; ASK → a prompt is parked and the client gets an MRTR
//     input_required result at once (it retries with the signed requestState);
//  2. a retry carrying requestState runs only when the server's own row says a person
//     accepted that very call;
//  3. the runner executes; if its MCP server needs input, one prompt per request is
//     parked, the answers are sent back once, and the output is returned.
func (s *Server) mcpToolsCall(ctx context.Context, sess *models.Session, user string, msg mcp.Message) (mcp.Response, error) {
	call, rpcErr := mcp.ParseToolCall(msg.Params)
	if rpcErr != nil {
		return mcp.Fail(msg.ID, rpcErr), nil
	}
	ev := policyEvent(sess, user, policy.PhaseToolCall, call.Name,
		map[string]any{"name": call.Name, "arguments": call.ArgumentsMap()}, nil)
	res := s.policies.Evaluate(ev)
	if res.Action == policy.Deny {
		return mcp.Fail(msg.ID, mcp.Errorf(mcp.CodeApplication, "Denied by policy: %s", res.Reason)), nil
	}
	if call.RequestState != "" {
		rpcErr, err := s.checkMCPApproval(ctx, sess, call)
		if err != nil {
			return mcp.Response{}, err
		}
		if rpcErr != nil {
			return mcp.Fail(msg.ID, rpcErr), nil
		}
	} else if res.Action == policy.Ask {
		return s.askMCPApproval(ctx, sess, msg, call, ev, res)
	}
	return s.runMCPTool(ctx, sess, msg, call)
}

// askMCPApproval parks the policy prompt without waiting and hands the client an
// input_required result whose requestState binds session, prompt, tool, arguments
// and expiry under the server's MAC.
func (s *Server) askMCPApproval(ctx context.Context, sess *models.Session, msg mcp.Message, call mcp.ToolCall,
	ev policy.Event, res policy.Result) (mcp.Response, error) {
	mode := s.mode
	if mode == mcp.ModeURL && mcp.URLElicitationDeclined(call.Params) {
		// The client said it cannot open URLs: ask in form mode (the person still
		// decides in Gatehouse; the client's own answer is never trusted).
		mode = mcp.ModeForm
	}
	row, err := s.elicit.Open(ctx, elicit.Prompt{Session: sess, Origin: models.OriginPolicy,
		Params: policyPromptParams(ev, res, mode), URLMode: mode == mcp.ModeURL})
	if err != nil {
		return mcp.Response{}, err
	}
	state := s.state.Sign(mcp.State{SessionID: sess.ID, ElicitationID: row.ID, Tool: call.Name,
		ArgsHash: mcp.ArgumentsHash(call.Arguments), Expires: row.ExpiresAt.Unix()})
	return mcp.InputRequiredResponse(msg.ID, mcp.InputRequired{ElicitationID: row.ID, Message: res.Reason,
		RequestState: state, SessionID: sess.ID, Mode: mode}), nil
}

// checkMCPApproval decides whether a retry's requestState authorizes the call. It
// answers a JSON-RPC error for every reason not to run the tool: a state we did not
// sign or that expired, one issued to another session or for another call, a prompt
// that is not this session's policy approval, and any prompt a person has not accepted.
func (s *Server) checkMCPApproval(ctx context.Context, sess *models.Session, call mcp.ToolCall) (*mcp.Error, error) {
	reject := func(reason, eid string, format string, a ...any) *mcp.Error {
		s.log.Warn("mcp retry refused", "session_id", sess.ID, "elicitation_id", eid, "tool", call.Name, "reason", reason)
		return mcp.Errorf(mcp.CodeApplication, format, a...)
	}
	st, err := s.state.Verify(call.RequestState, time.Now())
	if err != nil {
		return reject("bad_state", "", "requestState rejected: %v", err), nil
	}
	if st.SessionID != sess.ID {
		return reject("other_session", st.ElicitationID, "requestState rejected: it was issued for another session"), nil
	}
	if st.Tool != call.Name || st.ArgsHash != mcp.ArgumentsHash(call.Arguments) {
		return reject("other_call", st.ElicitationID, "requestState rejected: it was issued for a different tool call"), nil
	}
	switch call.ClientAction(st.ElicitationID) {
	case elicit.ActionDecline:
		return reject("client_declined", st.ElicitationID, "Denied by policy: the approval request was declined by the client"), nil
	case elicit.ActionCancel:
		return reject("client_cancelled", st.ElicitationID, "Denied by policy: the approval request was cancelled by the client"), nil
	}
	row, err := s.elicit.Get(ctx, st.ElicitationID)
	if errors.Is(err, errs.ErrNotFound) || (err == nil && (row.SessionID != sess.ID || row.Origin != models.OriginPolicy)) {
		return reject("unknown_prompt", st.ElicitationID, "requestState rejected: it names no approval of this session"), nil
	}
	if err != nil {
		return nil, err
	}
	switch {
	case row.Status == models.StatusPending:
		return reject("pending", row.ID, "Approval is still pending: a person must approve it in Gatehouse (%s) before the call is retried",
			mcp.ApprovePath(sess.ID, row.ID)), nil
	case row.Status == models.StatusResolved && row.Action != nil && *row.Action == elicit.ActionAccept:
		// One approval, one call: a replayed requestState finds the approval spent.
		fresh, err := s.elicit.Consume(ctx, sess.ID, row.ID)
		if err != nil {
			return nil, err
		}
		if !fresh {
			return reject("replayed", row.ID, "requestState rejected: this approval was already used for a call; ask again"), nil
		}
		return nil, nil
	case row.Status == models.StatusResolved && row.Action != nil && *row.Action == elicit.ActionDecline:
		return reject("declined", row.ID, "Denied by policy: %s", reasonDeclined), nil
	default:
		return reject("not_granted", row.ID, "Denied by policy: %s", reasonNotGranted), nil
	}
}

// runMCPTool executes the call through the runner, with at most one input round.
func (s *Server) runMCPTool(ctx context.Context, sess *models.Session, msg mcp.Message, call mcp.ToolCall) (mcp.Response, error) {
	raw, err := s.runner.Execute(ctx, sess.ID, "tools/call", mcp.ExecuteParams(call.Name, call.Arguments))
	if err != nil {
		return s.runnerFailure(msg, sess, err)
	}
	ans := mcp.ParseRunnerToolAnswer(raw)
	if ans.InputRequired != nil {
		responses, rpcErr, err := s.gatherMCPInput(ctx, sess, call.Name, ans.InputRequired)
		if err != nil {
			return mcp.Response{}, err
		}
		if rpcErr != nil {
			return mcp.Fail(msg.ID, rpcErr), nil
		}
		raw, err = s.runner.Execute(ctx, sess.ID, "tools/call",
			mcp.RetryParams(call.Name, call.Arguments, responses, ans.InputRequired.RequestState))
		if err != nil {
			return s.runnerFailure(msg, sess, err)
		}
		ans = mcp.ParseRunnerToolAnswer(raw)
		if ans.InputRequired != nil {
			return mcp.Fail(msg.ID, mcp.Errorf(mcp.CodeApplication,
				"the MCP server asked for input a second time; Gatehouse answers one round of input per call")), nil
		}
	}
	if ans.Err != nil {
		return mcp.Fail(msg.ID, ans.Err), nil
	}
	return mcp.Result(msg.ID, ans.Result), nil
}

// gatherMCPInput parks one prompt per input request (mirrored to ancestors like every
// prompt), waits for all of them up to --mcp-input-timeout, and turns each verdict
// into an ElicitResult; no verdict is a decline.
func (s *Server) gatherMCPInput(ctx context.Context, sess *models.Session, tool string, ir *mcp.RunnerInputRequired) (map[string]mcp.InputResponse, *mcp.Error, error) {
	keys := ir.Keys()
	if len(keys) > maxInputRequests {
		return nil, mcp.Errorf(mcp.CodeApplication, "the MCP server asked for %d inputs at once (at most %d)", len(keys), maxInputRequests), nil
	}
	rows := make([]*models.Elicitation, len(keys))
	for i, k := range keys {
		row, err := s.elicit.Open(ctx, elicit.Prompt{Session: sess, Origin: models.OriginMCPInput,
			Params: mcp.InputPromptParams(k, tool, ir.Requests[k]), Timeout: s.mcpInput})
		if err != nil {
			return nil, nil, err
		}
		rows[i] = row
	}
	out := make(map[string]mcp.InputResponse, len(keys))
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := s.elicit.Await(ctx, rows[i])
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			resp := mcp.InputResponse{Action: elicit.ActionDecline}
			if v.Decided() {
				resp = mcp.InputResponse{Action: v.Result.Action, Content: v.Result.Content}
			}
			out[k] = resp
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, nil, firstErr
	}
	return out, nil, nil
}
