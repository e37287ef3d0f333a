package views

import "time"

// RulesPage is /rules: the rules a person may see, and the form that makes one.
type RulesPage struct {
	Chrome Chrome
	CSRF   string
	Rules  []RuleRow
	// Form is the create form's values (kept when a submission is refused).
	Form RuleForm
	// CanGlobal offers the "everywhere" scope: only admins make global rules.
	CanGlobal bool
	// Now is when the page is rendered, for "in 23 h" beside each date.
	Now time.Time
}

// RuleRow is one rule in the list.
type RuleRow struct {
	ID        string
	Effect    string
	Tool      string
	MatchKind string
	Pattern   string
	// Scope describes where the rule applies, for people ("session tree conv_…").
	Scope       string
	Timeout     string
	OnTimeout   string
	State       string
	CreatedBy   string
	Created     time.Time
	Expires     *time.Time
	FireCount   int64
	LastFired   *time.Time
	RevokeURL   string
	CanRevoke   bool
	RevokedBy   string
	RevokedTime *time.Time
}

// RuleForm is the create form on /rules.
type RuleForm struct {
	Effect, Tool, MatchKind, Pattern, Argument, ScopeKind, ScopeValue, Expires, Timeout, OnTimeout string
}

// RuleOffer is the approval page's "approve and make a rule…" control, pre-filled from
// the prompt: the tool and the exact target (the command, the file path).
type RuleOffer struct {
	Action  string
	Tool    string
	Pattern string
	// Cwd is the agent's working directory ("" hides the directory scope).
	Cwd string
	// CanGlobal offers the "everywhere" scope (admins only).
	CanGlobal bool
}
