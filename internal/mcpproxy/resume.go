package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/errs"
	"github.com/gatehouse-dev/gatehouse/models"
)

// resume handles the retry of a call that carries requestState. The state is
// attacker-controlled until its MAC checks out, and even then only names the prompt:
// what the client claims in inputResponses never approves anything. A JSON-RPC error
// answers every reason not to trust the retry; a person's "no" is an isError result.
func (p *Proxy) resume(ctx context.Context, req Request, c mcp.Client, call mcp.ToolCall) (map[string]any, *mcp.Error, error) {
	sid := req.Session.ID
	reject := func(reason, eid, format string, a ...any) (map[string]any, *mcp.Error, error) {
		p.refused(req, eid, call.Name, reason)
		return nil, mcp.Errorf(mcp.CodeApplication, format, a...), nil
	}
	st, err := p.signer.Verify(call.RequestState, p.o.Now())
	if err != nil {
		return reject("bad_state", "", "requestState rejected: %v", err)
	}
	if st.SessionID != sid {
		return reject("other_session", st.ElicitationID, "requestState rejected: it was issued for another session")
	}
	if st.Tool != call.Name || st.ArgsHash != mcp.ArgumentsHash(call.Arguments) {
		return reject("other_call", st.ElicitationID, "requestState rejected: it was issued for a different tool call")
	}
	row, err := p.elicit.GetInSession(ctx, sid, st.ElicitationID)
	if errors.Is(err, errs.ErrNotFound) || (err == nil && row.Origin != models.OriginPolicy) {
		return reject("unknown_prompt", st.ElicitationID, "requestState rejected: it names no approval of this session")
	}
	if err != nil {
		return nil, nil, err
	}
	how := p.channelFor(c)
	if how != askInputForm {
		how = askInputURL
	}
	if clientDeclined(call, row.ID) && (row.IsPending() || accepted(row)) {
		// The person at the client said no there. That stands even over an approval
		// given in Gatehouse, and on a prompt still pending it is the verdict. (A "no"
		// already given in Gatehouse is reported as that person's, below.)
		p.refused(req, row.ID, call.Name, "client_declined")
		if row.IsPending() {
			out, err := p.elicit.Resolve(ctx, sid, row.ID, models.Verdict{Action: models.ActionDecline}, req.User, models.ViaMCPClient)
			if err != nil {
				return nil, nil, err
			}
			if out.Row != nil && !accepted(out.Row) {
				return p.settle(ctx, req, call, how, out.Row)
			}
		}
		return clientDeclinedResult(req, row), nil, nil
	}
	if row.IsPending() {
		// "accept" of a URL request only means the link was opened, and "cancel"
		// means nothing was chosen: the verdict is still the person's to give.
		if row, err = p.park.AwaitRetry(ctx, req.User, row.ID, p.o.RetryWait); err != nil {
			return nil, nil, err
		}
	}
	return p.settle(ctx, req, call, how, row)
}

// clientDeclined reports whether the client answered the approval request with
// decline, or with a form whose approved is false.
func clientDeclined(call mcp.ToolCall, key string) bool {
	raw, ok := call.InputResponses[key]
	return ok && saidNo(raw)
}

// saidNo reports whether an answer to an approval request is a "no": decline, or the
// form accepted with approved false.
func saidNo(raw json.RawMessage) bool {
	action, notApproved := mcp.ResponseAction(raw)
	return action == models.ActionDecline || (action == models.ActionAccept && notApproved)
}

// promptMessage is the message a prompt was published with.
func promptMessage(row *models.Elicitation) string {
	return row.DecodeParams().Message
}
