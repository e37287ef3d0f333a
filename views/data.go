// Package views holds Gatehouse's templ components: the page layout, the approval page,
// the inbox, the session page and the error page, plus the small components that double
// as SSE fragments (the decision panel, the inbox list, the session body).
//
// Views take plain data: they import no Echo, GORM or session code. The CSRF token and
// flash message come in as fields, and every piece of agent-supplied text is rendered
// through templ's escaping (plans, the one exception, arrive already sanitized).
package views

import (
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/prompt"
	"github.com/gatehouse-dev/gatehouse/internal/risk"
)

// Assets are the public URLs of the stylesheet and scripts.
type Assets struct {
	CSS, JS, HTMX, SSE string
}

// Chrome is what every page's frame needs.
type Chrome struct {
	// Title is the page title without the product name.
	Title string
	// User is the signed-in identity, shown in the header.
	User   string
	Assets Assets
	// Flash is a one-time notice carried across a redirect.
	Flash string
	// Nav names the active navigation entry ("inbox").
	Nav string
	// SignOutCSRF, when set (--auth oidc), shows a sign-out button posting this token.
	SignOutCSRF string
}

// Crumb is a link to a session.
type Crumb struct {
	ID    string
	Title string
	URL   string
}

// ApprovePage is the approval page for one prompt.
type ApprovePage struct {
	Chrome Chrome
	CSRF   string
	// Action is the form's post path; EventsURL the fragment stream the page listens
	// to; RawURL the plain-text view of everything the agent sent.
	Action    string
	EventsURL string
	RawURL    string
	ID        string
	Agent     string
	// Path runs from the root session to the session that owns the prompt.
	Path    []Crumb
	Created time.Time
	Expires time.Time
	// Prompt describes the request; nil when the id names nothing here (Missing).
	Prompt *prompt.Prompt
	// Outcome is set once the prompt is decided, expired or abandoned.
	Outcome *Outcome
	Missing bool
	// Now is when the page was rendered (for the remaining wait).
	Now time.Time
	// OnTimeout is the answer when the prompt's own wait runs out ("none", "deny",
	// "allow"), WaitSource what set that wait ("rule rule_…", "policy x"); both empty
	// for the server's default wait.
	OnTimeout  string
	WaitSource string
	// RuleOffer is the "approve and make a rule…" control; nil when the prompt has no
	// tool a rule could name.
	RuleOffer *RuleOffer
	// Deliveries are the prompt's notifications and how they went.
	Deliveries []DeliveryRow
}

// Session returns the crumb of the session that owns the prompt.
func (a ApprovePage) Session() Crumb {
	if len(a.Path) == 0 {
		return Crumb{}
	}
	return a.Path[len(a.Path)-1]
}

// Outcome is how a prompt ended.
type Outcome struct {
	// Status is resolved, expired or abandoned; Action the verdict of a resolved one.
	Status string
	Action string
	By     string
	Via    string
	At     *time.Time
	// RuleID names the Gatehouse rule that decided (Via "rule") or set the wait.
	RuleID string
}

// InboxPage lists every prompt the user may decide.
type InboxPage struct {
	Chrome Chrome
	CSRF   string
	Groups []InboxGroup
	Count  int
	// Filter narrows the list (query parameters); the live stream and bulk answers
	// keep it.
	Filter InboxFilter
	// Setup, on an empty inbox, is the command that connects each agent to this
	// server (the onboarding card).
	Setup []SetupLine
}

// SetupLine is one agent's connect command.
type SetupLine struct {
	Vendor, Command string
}

// InboxGroup is the prompts under one root session.
type InboxGroup struct {
	Root  Crumb
	Agent string
	Cards []Card
}

// Card is a pending prompt in a list.
type Card struct {
	ID         string
	ApproveURL string
	// DecideURL takes the inline approve/reject post; Next is where a post without
	// JavaScript returns to.
	DecideURL string
	Next      string
	Message   string
	Vendor    string
	Policy    string
	// Summary is a short, plain-text preview of the request.
	Summary string
	// Tool shows the request's tool call in its own terms, in place of Summary (nil
	// when the request is not a tool call).
	Tool *prompt.Tool
	// Owner is the owning session when it is a sub-agent (empty for the root itself).
	Owner   []Crumb
	Created time.Time
	// QuickApprove allows approving from the list (nothing to fill in, and the card
	// shows all of it). NeedsReview is a card with nothing to fill in whose preview is
	// cut: it offers "Open to review" instead of Approve.
	QuickApprove bool
	NeedsReview  bool
	CanDecide    bool
	// Risk is the request's rating; a high or critical card asks for a second key
	// press before the keyboard approves it (data-risky).
	Risk *risk.Assessment
	// Selectable shows the card's checkbox for a bulk answer (the inbox's bulk form).
	Selectable bool
	// Notice explains why a decision from the list was refused (shown on the card).
	Notice string
}

// SessionPage is one session, its sub-agent tree, pending prompts and recent decisions.
type SessionPage struct {
	Chrome    Chrome
	CSRF      string
	EventsURL string
	Session   Crumb
	Path      []Crumb
	Agent     string
	Kind      string
	CreatedBy string
	Created   time.Time
	Tree      []TreeNode
	Pending   []Card
	Recent    []DecisionRow
	// Deliveries are the notifications of the prompts listed.
	Deliveries []DeliveryRow
}

// TreeNode is a session in the sub-agent tree.
type TreeNode struct {
	Crumb   Crumb
	Depth   int
	Pending int
	Current bool
}

// DecisionRow is one line of a session's audit trail.
type DecisionRow struct {
	ID         string
	ApproveURL string
	Message    string
	Session    Crumb
	Outcome    Outcome
}

// ErrorPage is shown for browser requests that fail.
type ErrorPage struct {
	Chrome  Chrome
	Status  int
	Heading string
	Message string
}
