package mcpproxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/elicit"
	"github.com/gatehouse-dev/gatehouse/internal/park"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/models"
)

// stateMargin is how long a requestState stays valid after its prompt's deadline.
const stateMargin = time.Hour

// channel is how a client is asked for an approval.
type channel int

const (
	// askMissing: the client declared no input kind we could use (-32021).
	askMissing channel = iota
	// askInputURL / askInputForm: a multi round-trip input_required result.
	askInputURL
	askInputForm
	// askURLError: -32042 URLElicitationRequiredError, then the client retries.
	askURLError
	// askHold: the call is held open (SSE, progress) until a person decides.
	askHold
)

// channelFor picks the way to ask client c. Clients on 2026-07-28 get input_required
// in a mode they declared (URL preferred in url mode); older clients never see
// input_required: those that declared URL mode get -32042, the rest a held call.
func (p *Proxy) channelFor(c mcp.Client) channel {
	if !c.MultiRoundTrip() {
		if c.Elicitation != nil && c.Elicitation.URL {
			return askURLError
		}
		return askHold
	}
	e := c.Elicitation
	switch {
	case e == nil: // the bare client never said: the configured mode (§6.6)
		if p.o.Mode == mcp.ModeURL {
			return askInputURL
		}
		return askInputForm
	case e.URL && (p.o.Mode == mcp.ModeURL || !e.Form):
		return askInputURL
	case e.Form:
		return askInputForm
	}
	return askMissing
}

// callTool runs a tool through the policies: DENY is a JSON-RPC error, ASK asks a
// person (the way the client's revision allows), and only a call a person accepted —
// by the server's own record — runs, once.
func (p *Proxy) callTool(ctx context.Context, req Request, c mcp.Client, params []byte, st Stream) (map[string]any, *mcp.Error, error) {
	call, rpcErr := mcp.ParseToolCall(params)
	if rpcErr != nil {
		return nil, rpcErr, nil
	}
	ev := p.callEvent(ctx, req, call)
	res := p.policies.EvaluateContext(ctx, ev)
	if res.Action == policy.Deny {
		return nil, p.policyDenied(req, call, res), nil
	}
	if call.RequestState != "" {
		return p.resume(ctx, req, c, call)
	}
	if res.Action == policy.Ask {
		return p.ask(ctx, req, c, call, ev, res, st)
	}
	return p.run(ctx, req, call)
}

// callKey names one tool call of a session: tool, canonical arguments and, when the
// client sends it, Claude Code's tool-use id (the same on each of its retries).
func callKey(sid, tool string, call mcp.ToolCall, toolUseID string) string {
	h := sha256.New()
	for _, part := range []string{sid, tool, mcp.ArgumentsHash(call.Arguments), toolUseID} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ask handles a policy ASK for a call without requestState, through the park use case
// (park.Service.Ask): a Gatehouse rule may answer it, a retry of a call already asked
// about finds its prompt (by call key) instead of opening a second one, and this
// client's way of being asked decides whether the call waits (held) or comes back.
func (p *Proxy) ask(ctx context.Context, req Request, c mcp.Client, call mcp.ToolCall, ev policy.Event, res policy.Result, st Stream) (map[string]any, *mcp.Error, error) {
	meta := mcp.ParseRequestMeta(call.Params)
	if meta.Tasks && p.o.Tasks != nil {
		return p.askAsTask(ctx, req, c, call, ev, res, meta)
	}
	how := p.channelFor(c)
	prompt := elicit.Prompt{Session: req.Session, Origin: models.OriginPolicy, Person: req.User,
		CallKey: callKey(req.Session.ID, call.Name, call, meta.ToolUseID),
		Params:  policy.PromptParams(ev, res, how == askInputURL || how == askURLError || (how == askHold && p.o.Mode == mcp.ModeURL))}
	prompt.URLMode = prompt.Params["mode"] == mcp.ModeURL
	if how != askHold {
		// The client comes back for the verdict: the prompt waits for it a while.
		prompt.Timeout = p.o.ApprovalTTL
	}
	asked, err := p.park.Ask(ctx, park.Call{Prompt: prompt, Tool: call.Name, Args: call.ArgumentsMap(), Hints: ev.Hints,
		DeclinedSince: p.o.Now().UTC().Add(-p.o.ApprovalTTL), RetryWait: p.o.RetryWait,
		Hold: how == askHold, RulesOnly: how == askMissing})
	switch {
	case errors.Is(err, elicit.ErrClientGone):
		return nil, nil, ErrClientGone
	case err != nil:
		return nil, nil, err
	case asked.Waiter != nil:
		return p.hold(ctx, req, call, asked.Waiter, meta, st)
	case asked.Row == nil: // no rule answered a client that cannot be asked
		return nil, mcp.MissingCapabilityError(), nil
	}
	// An allow (a rule's, or a person's given earlier) runs the call, its approval
	// spent once; a deny is the isError "declined" result; pending asks again.
	return p.settle(ctx, req, call, how, asked.Row)
}

// settle answers from a prompt's current state: accepted runs the call (spending the
// approval), declined or undecided is an isError result, pending asks again.
func (p *Proxy) settle(ctx context.Context, req Request, call mcp.ToolCall, how channel, row *models.Elicitation) (map[string]any, *mcp.Error, error) {
	switch {
	case row.IsPending():
		return p.stillPending(req, call, how, row)
	case accepted(row):
		fresh, err := p.elicit.Consume(ctx, req.Session.ID, row.ID)
		if err != nil {
			return nil, nil, err
		}
		if !fresh {
			p.refused(req, row.ID, call.Name, "replayed")
			return nil, mcp.Errorf(mcp.CodeApplication, "requestState rejected: this approval was already used for a call; ask again"), nil
		}
		return p.run(ctx, req, call)
	case row.Status == models.StatusResolved && row.Action != nil && *row.Action == models.ActionDecline:
		return declinedResult(req, row), nil, nil
	}
	return notDecidedResult(req, row), nil, nil
}

// stillPending hands the client the approval again: input_required for 2026-07-28
// clients (with a fresh signature over the same prompt), -32042 for older ones.
func (p *Proxy) stillPending(req Request, call mcp.ToolCall, how channel, row *models.Elicitation) (map[string]any, *mcp.Error, error) {
	a := mcp.Approval{ElicitationID: row.ID, Message: promptMessage(row)}
	if how == askInputURL || how == askURLError {
		a.URL = req.BaseURL + mcp.ApprovePath(req.Session.ID, row.ID)
	}
	if how == askURLError {
		return nil, mcp.URLRequiredError(a), nil
	}
	// The state outlives its prompt by a margin, so a retry after the prompt ended is
	// told how it ended (expired, declined) rather than only that the state is stale;
	// the prompt's own record, not the state, is what authorizes a call.
	state := p.signer.Sign(mcp.State{SessionID: req.Session.ID, ElicitationID: row.ID, Tool: call.Name,
		ArgsHash: mcp.ArgumentsHash(call.Arguments), Expires: row.ExpiresAt.Add(stateMargin).Unix()})
	return mcp.InputRequiredResult(a, state), nil, nil
}

// hold keeps the call open on w, its prompt's wait, until a person decides: the client
// gets progress notifications naming the approval page (or SSE comments when it asked
// for no progress), then the tool's result or an isError result. A hang-up is a
// disconnect: the prompt stays pending for the grace period, and the same call sent
// again re-attaches to it.
func (p *Proxy) hold(ctx context.Context, req Request, call mcp.ToolCall, w *elicit.Waiter, meta mcp.RequestMeta, st Stream) (map[string]any, *mcp.Error, error) {
	type waited struct {
		v   elicit.Ended
		err error
	}
	done := make(chan waited, 1)
	go func() {
		v, err := w.Wait(ctx)
		done <- waited{v, err}
	}()
	link := req.BaseURL + mcp.ApprovePath(req.Session.ID, w.ID())
	note := "Waiting for a person to approve " + call.Name + " in Gatehouse: " + link
	sent := 0
	tell := func() {
		if meta.ProgressToken != nil {
			sent++
			_ = st.Send(mcp.Progress(meta.ProgressToken, sent, note))
		} else {
			_ = st.Keepalive()
		}
	}
	tell()
	tick := time.NewTicker(p.o.ProgressEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			tell()
		case r := <-done:
			if r.err == elicit.ErrClientGone {
				return nil, nil, ErrClientGone
			}
			if r.err != nil {
				return nil, nil, r.err
			}
			row := r.v.Row
			if row == nil {
				var err error
				if row, err = p.elicit.Get(ctx, w.ID()); err != nil {
					return nil, nil, err
				}
			}
			return p.settle(ctx, req, call, askHold, row)
		}
	}
}

func accepted(row *models.Elicitation) bool {
	return row.Status == models.StatusResolved && row.Action != nil && *row.Action == models.ActionAccept
}

// refused logs why a call did not run.
func (p *Proxy) refused(req Request, eid, tool, reason string) {
	p.o.Log.Warn("mcp call refused", "session_id", req.Session.ID, "elicitation_id", eid, "tool", tool, "reason", reason)
}
