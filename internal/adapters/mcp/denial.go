package mcp

// Meta keys of an authorization denial. The structured authorization denials extension
// (io.modelcontextprotocol/structured-authorization-denials) puts its envelope under
// MetaAuthorization in the _meta of the result that expresses the denial; Gatehouse
// adds MetaDecision beside it, because the envelope says whether and how a denial can
// be remedied but not who or what decided, nor why.
const (
	MetaAuthorization = "io.modelcontextprotocol/authorization"
	MetaDecision      = "dev.gatehouse/decision"
	// ExtensionAuthorizationDenials is the extension's identifier, advertised in
	// server/discover.
	ExtensionAuthorizationDenials = "io.modelcontextprotocol/structured-authorization-denials"
)

// Remediation postures of a denial envelope.
const (
	// RemediationAvailable: a way forward exists (a hint may describe it).
	RemediationAvailable = "available"
	// RemediationUnavailable: nothing can change the answer; the client must not retry
	// the call unchanged.
	RemediationUnavailable = "unavailable"
)

// Who or what decided a denial (Denial.DecidedBy names the person or rule).
const (
	DecidedByPerson  = "person"
	DecidedByClient  = "mcp_client"
	DecidedByRule    = "rule"
	DecidedByPolicy  = "policy"
	DecidedByTimeout = "timeout"
)

// Denial describes why a tool call did not run: the envelope's posture, plus
// Gatehouse's account of the decision.
type Denial struct {
	// Remediation is RemediationAvailable or RemediationUnavailable.
	Remediation string
	// ContextID is the authorizationContextId: an opaque handle (the prompt's id, or a
	// fresh id for a policy DENY) that the client echoes on a retry and a person can
	// quote; it authorizes nothing.
	ContextID string
	// HintURL, with Remediation available, is a "url" remediation hint: the page
	// where the way forward is (the rules page, for a rule's deny).
	HintURL string
	// HintTask, with Remediation available, is a "task" hint: the call is held by a
	// task while someone decides out of band.
	HintTask bool
	// Kind is who or what decided: DecidedByPerson, DecidedByClient, DecidedByRule,
	// DecidedByPolicy or DecidedByTimeout.
	Kind string
	// DecidedBy names the deciding person, rule or policy ("" when nobody decided).
	DecidedBy string
	// Reason is the reason given (a person's feedback, a policy's reason), if any.
	Reason string
	// URL is the Gatehouse page that records the decision (the approval page, or the
	// rules page for a rule's deny); "" when there is none (a policy DENY).
	URL string
}

// Envelope is the extension's authorization denial envelope. Hints appear only when
// a remediation is available, as the extension requires.
func (d Denial) Envelope() map[string]any {
	env := map[string]any{"reason": "insufficient_authorization", "remediation": d.Remediation}
	if d.ContextID != "" {
		env["authorizationContextId"] = d.ContextID
	}
	if d.Remediation == RemediationAvailable {
		var hints []any
		if d.HintURL != "" {
			hints = append(hints, map[string]any{"type": "url", "url": d.HintURL})
		}
		if d.HintTask {
			hints = append(hints, map[string]any{"type": "task"})
		}
		if len(hints) > 0 {
			env["remediationHints"] = hints
		}
	}
	return env
}

// Decision is Gatehouse's account of the denial (MetaDecision).
func (d Denial) Decision() map[string]any {
	out := map[string]any{"kind": d.Kind}
	if d.DecidedBy != "" {
		out["decidedBy"] = d.DecidedBy
	}
	if d.Reason != "" {
		out["reason"] = d.Reason
	}
	if d.URL != "" {
		out["url"] = d.URL
	}
	return out
}

// Meta is the _meta object of a result (or the data._meta of an error) that expresses
// the denial.
func (d Denial) Meta() map[string]any {
	return map[string]any{MetaAuthorization: d.Envelope(), MetaDecision: d.Decision()}
}

// DeniedResult is a CallToolResult with isError: text tells the client's model that
// the tool did not run and why; _meta carries the denial for the client itself.
func DeniedResult(text string, d Denial) map[string]any {
	r := TextResult(text, true)
	r["_meta"] = d.Meta()
	return r
}

// DeniedError is a JSON-RPC error for a denial (a policy DENY) whose data carries the
// same _meta as a denied result.
func DeniedError(message string, d Denial) *Error {
	return &Error{Code: CodeApplication, Message: message, Data: map[string]any{"_meta": d.Meta()}}
}
