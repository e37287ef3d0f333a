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

// DecidedQuery selects decided prompts for the history, newest decision first. Every
// set field must match.
type DecidedQuery struct {
	// RootIDs keeps prompts whose session belongs to one of these trees; nil means
	// every tree, empty means none.
	RootIDs []string
	// Agent keeps prompts whose session runs under this agent, named by id or name.
	Agent string
	// Status keeps prompts that ended so (resolved, expired, abandoned); Action, with
	// it, those resolved with this verdict action.
	Status, Action string
	// Risk keeps prompts rated at this level (params.risk.level).
	Risk string
	// Before, when set, keeps prompts decided before this position in the order
	// (keyset paging).
	Before *DecidedCursor
	// Limit bounds the answer.
	Limit int
}

// DecidedCursor is a position in the history's order: a decision time and the id that
// breaks ties between prompts decided in the same instant.
type DecidedCursor struct {
	At time.Time
	ID string
}
