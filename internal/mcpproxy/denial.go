package mcpproxy

import (
	"encoding/json"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/adapters/mcp"
	"github.com/gatehouse-dev/gatehouse/internal/ids"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Every "no" the proxy gives a tool call carries the structured authorization denial
// (mcp.Denial): whether anything can change it, who or what decided, why, and the
// Gatehouse page that records it. The text of a denied result says the same for the
// client's model, which never sees _meta.

// policyDenied is a policy DENY: a JSON-RPC error (§6.5) whose data carries the denial.
// Nothing a person does in Gatehouse changes a policy's answer, so no remedy is on
// offer; the context id, fresh for each denial, is logged so a person quoting it can
// be told which policy refused what.
func (p *Proxy) policyDenied(req Request, call mcp.ToolCall, res policy.Result) *mcp.Error {
	msg, d := p.policyDenial(req, call, res)
	return mcp.DeniedError(msg, d)
}

// policyDenial is a policy DENY's message and denial (logged with its context id).
func (p *Proxy) policyDenial(req Request, call mcp.ToolCall, res policy.Result) (string, mcp.Denial) {
	ctxID := ids.New("authz_")
	p.o.Log.Info("mcp call denied by policy", "session_id", req.Session.ID, "tool", call.Name,
		"policy", res.Policy, "authorization_context_id", ctxID)
	return "Denied by policy: " + res.Reason, mcp.Denial{Remediation: mcp.RemediationUnavailable,
		ContextID: ctxID, Kind: mcp.DecidedByPolicy, DecidedBy: res.Policy, Reason: res.Reason}
}

// declinedResult tells the client, as a tool error its model can read, who declined
// the call and why. A person's or a client's "no" is final for this call; a rule's
// deny can be revoked on the rules page, which the denial names as its remedy.
func declinedResult(req Request, row *models.Elicitation) map[string]any {
	reason := declineReason(row.Content)
	d := rowDenial(req, row)
	d.Remediation, d.Reason = mcp.RemediationUnavailable, reason
	if row.ResolvedVia != nil && *row.ResolvedVia == models.ViaRule {
		// A rule's deny names the rule (its feedback), never a person.
		d.Kind, d.DecidedBy = mcp.DecidedByRule, deref(row.RuleID)
		d.Remediation, d.URL = mcp.RemediationAvailable, req.BaseURL+"/rules"
		d.HintURL = d.URL
		return mcp.DeniedResult(strings.TrimSpace(reason+" The tool did not run."), d)
	}
	who := "a person"
	if row.ResolvedBy != nil && *row.ResolvedBy != "" {
		who = *row.ResolvedBy
		d.DecidedBy = who
	}
	where := " in Gatehouse"
	if row.ResolvedVia != nil && *row.ResolvedVia == models.ViaMCPClient {
		where, d.Kind = " at the MCP client", mcp.DecidedByClient
	}
	text := "Declined by " + who + where + "; the tool did not run."
	if reason != "" {
		text = "Declined by " + who + where + ": " + reason + " (the tool did not run)"
	}
	return mcp.DeniedResult(text, d)
}

// clientDeclinedResult: the person at the client said no to an approval already given
// in Gatehouse; the client's "no" stands.
func clientDeclinedResult(req Request, row *models.Elicitation) map[string]any {
	d := rowDenial(req, row)
	d.Remediation, d.Kind, d.DecidedBy = mcp.RemediationUnavailable, mcp.DecidedByClient, req.User
	return mcp.DeniedResult("Declined at the MCP client; the tool did not run.", d)
}

// notDecidedResult: the approval ended without a verdict (expired, abandoned,
// cancelled); the tool did not run. Calling again asks again, so a remedy is
// available: a person deciding in time.
func notDecidedResult(req Request, row *models.Elicitation) map[string]any {
	why := "ended without a decision"
	switch {
	case row.Status == models.StatusExpired:
		why = "expired before anyone decided"
	case row.Status == models.StatusAbandoned:
		why = "was abandoned before anyone decided"
	case row.Action != nil && *row.Action == models.ActionCancel:
		why = "was cancelled"
	}
	d := rowDenial(req, row)
	d.Remediation, d.Kind = mcp.RemediationAvailable, mcp.DecidedByTimeout
	if row.Status == models.StatusResolved {
		d.Kind, d.DecidedBy = mcp.DecidedByPerson, deref(row.ResolvedBy)
	}
	return mcp.DeniedResult("No approval: the request in Gatehouse "+why+"; the tool did not run.", d)
}

// rowDenial is the denial of a call asked about in prompt row: the prompt's id is the
// context id, its approval page the record of the decision.
func rowDenial(req Request, row *models.Elicitation) mcp.Denial {
	return mcp.Denial{ContextID: row.ID, Kind: mcp.DecidedByPerson, URL: req.BaseURL + mcp.ApprovePath(req.Session.ID, row.ID)}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// declineReason reads the reason a person gave with a decline (the approval page's
// feedback, or a reason/message key from the API).
func declineReason(content json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(content, &m) != nil {
		return ""
	}
	for _, k := range []string{"feedback", "reason", "message"} {
		if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}
