package models

import "time"

// PendingQuery narrows the pending prompts an inbox lists. Every set field must match;
// the zero value lists every pending prompt (nil RootIDs: in any tree).
type PendingQuery struct {
	// RootIDs keeps prompts whose session belongs to one of these trees.
	RootIDs []string
	// Agent keeps prompts whose session runs under this agent, named by id or name.
	Agent string
	// SessionPath keeps prompts of that session and its sub-agents (a session's Path).
	SessionPath string
	// Tool keeps prompts for this tool (params.tool_name, exactly).
	Tool string
	// CreatedBefore keeps prompts asked before this instant.
	CreatedBefore time.Time
	// Limit bounds the answer (newest first).
	Limit int
}

// RuleFilter says which rules ListRules returns: every rule (All), or those created by
// User, scoped to one of the session trees Roots, or made by one of Editors (anyone
// when AnyEditor) with an agent scope naming one of Agents, a directory scope or a
// global scope — the rules that can answer in the trees.
type RuleFilter struct {
	All                    bool
	User                   string
	Roots, Agents, Editors []string
	AnyEditor              bool
}
