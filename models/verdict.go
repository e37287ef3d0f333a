package models

import "strings"

// Verdict is the answer to a prompt — a person's, a rule's or a timeout's — from the
// approval form (prompt.Submit) and the resolve API through elicit.Resolve to every
// agent's answer. It is an MCP ElicitationResult: an action (accept, decline, cancel)
// and the form's content (feedback, remember, answers). Who gave it is not part of
// it; where an answer needs the name (DenyReason) it is passed beside it.
type Verdict struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Actions of a verdict.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// ContentAutomatic marks verdict content that Gatehouse itself wrote (a rule's answer,
// a timeout's), so its feedback is passed on as the reason rather than reported as a
// person's decline.
const ContentAutomatic = "gatehouse_automatic"

// Accepted reports whether the verdict lets the request go ahead.
func (v Verdict) Accepted() bool { return v.Action == ActionAccept }

// Bool reads a boolean flag from content (true only for JSON true).
func (v Verdict) Bool(key string) bool {
	b, ok := v.Content[key].(bool)
	return ok && b
}

// String reads a string from content ("" when it is not one).
func (v Verdict) String(key string) string {
	s, _ := v.Content[key].(string)
	return s
}

// Feedback is the reason given with the verdict, trimmed ("" when none).
func (v Verdict) Feedback() string { return strings.TrimSpace(v.String("feedback")) }

// DenyReason is what a deny tells the agent: the feedback given with it, or else
// DeniedMessage(by) naming who denied.
func (v Verdict) DenyReason(by string) string {
	if fb := v.Feedback(); fb != "" {
		return fb
	}
	return DeniedMessage(by)
}

// DeniedMessage is the reason an agent is given for a deny when the person who denied
// gave none (SPEC §6.1): "Denied by <person> in Gatehouse." — every deny carries one,
// as newer agents refuse a deny without a message and the model should know who said
// no and where. person "" (nobody recorded) gives "Denied in Gatehouse."
func DeniedMessage(person string) string {
	if person == "" {
		return "Denied in Gatehouse."
	}
	return "Denied by " + person + " in Gatehouse."
}
