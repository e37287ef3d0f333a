package claude

import (
	"encoding/json"

	"github.com/gatehouse-dev/gatehouse/models"
)

// answers returns the content a question tool's answers are made of: everything but
// Gatehouse's own control keys.
func answers(v models.Verdict) map[string]any {
	out := make(map[string]any, len(v.Content))
	for k, val := range v.Content {
		if k == models.RememberKey || k == "feedback" {
			continue
		}
		out[k] = val
	}
	return out
}

// answerer is what the decisions below read of a payload, and nothing more: an answer
// is kept for as long as its request waits for a person, and the whole payload — its
// raw fields and decoded input, hundreds of bytes before their contents —
// would be kept with it. The input is kept only to answer a question tool.
type answerer struct {
	tool        string
	input       map[string]any
	suggestions []json.RawMessage
}

// answering is p's answerer.
func (p *Payload) answering() answerer {
	a := answerer{tool: p.ToolName, suggestions: p.suggestions}
	if p.ToolName == ToolAskUserQuestion {
		a.input = p.input
	}
	return a
}

// PermissionDecision builds the PermissionRequest hook answer for verdict v, given by by.
func (p *Payload) PermissionDecision(v models.Verdict, by string) map[string]any {
	return p.answering().permissionDecision(v, by)
}

// PreToolUseDecision builds the PreToolUse hook answer for verdict v, given by by.
func (p *Payload) PreToolUseDecision(v models.Verdict, by string) map[string]any {
	return p.answering().preToolUseDecision(v, by)
}

func (a answerer) permissionDecision(v models.Verdict, by string) map[string]any {
	var decision map[string]any
	if v.Accepted() {
		decision = map[string]any{"behavior": "allow"}
		switch a.tool {
		case ToolAskUserQuestion:
			if ans := answers(v); len(ans) > 0 {
				decision["updatedInput"] = withAnswers(a.input, ans)
			}
		case ToolExitPlanMode:
		default:
			if entry := a.rememberedPermission(v); entry != nil {
				decision["updatedPermissions"] = []any{entry}
			}
		}
	} else {
		decision = map[string]any{"behavior": "deny", "message": v.DenyReason(by)}
	}
	return map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": EventPermissionRequest, "decision": decision,
	}}
}

// rememberedPermission is the permission update a verdict's remember choice asks for:
// one of the permission_suggestions Claude Code sent, exactly as sent or narrowed by an
// edit (ChooseSuggestion), or nil.
//
// When Claude Code sent no suggestions nothing is remembered, even on request: Gatehouse
// does not make up a rule of its own. A rule without content would allow every use of
// the tool (the defect this replaces), and even an "exact" Bash(<command>) is not exact
// in Claude Code's syntax — a command holding "*" or ending in ":*" becomes a wildcard,
// and other tools have their own grammars (gitignore paths, domain:…). Claude Code
// leaves out suggestions for commands it judges unsafe to remember; Gatehouse follows.
//
// The choice was checked when the verdict was given (the approval page and the API
// refuse what ChooseSuggestion refuses); a choice that still does not fit is not
// remembered, never widened.
func (a answerer) rememberedPermission(v models.Verdict) json.RawMessage {
	r, ok, err := models.RememberOf(v.Content)
	if err != nil || !ok || len(a.suggestions) == 0 {
		return nil
	}
	entry, err := ChooseSuggestion(a.suggestions, r)
	if err != nil {
		return nil
	}
	return entry
}

func (a answerer) preToolUseDecision(v models.Verdict, by string) map[string]any {
	out := map[string]any{"hookEventName": EventPreToolUse}
	if v.Accepted() {
		out["permissionDecision"] = "allow"
		out["permissionDecisionReason"] = "Approved in Gatehouse"
		if a.tool == ToolAskUserQuestion {
			if ans := answers(v); len(ans) > 0 {
				out["updatedInput"] = withAnswers(a.input, ans)
			}
		}
	} else {
		out["permissionDecision"] = "deny"
		out["permissionDecisionReason"] = v.DenyReason(by)
	}
	return map[string]any{"hookSpecificOutput": out}
}

// ElicitationDecision builds the Elicitation hook answer for a verdict.
func ElicitationDecision(v models.Verdict) map[string]any {
	out := map[string]any{"hookEventName": EventElicitation, "action": v.Action}
	if v.Accepted() {
		content := v.Content
		if content == nil {
			content = map[string]any{}
		}
		out["content"] = content
	}
	return map[string]any{"hookSpecificOutput": out}
}

func withAnswers(input map[string]any, answers map[string]any) map[string]any {
	out := make(map[string]any, len(input)+1)
	for k, val := range input {
		out[k] = val
	}
	out["answers"] = answers
	return out
}

// DeniedDecision builds the PermissionDenied hook answer for verdict v: an approval
// lets the model retry the refused call once (its PreToolUse is then answered from
// the grant the approval recorded); anything else lets the refusal stand.
func DeniedDecision(v models.Verdict) map[string]any {
	out := map[string]any{"hookEventName": EventPermissionDenied}
	if v.Accepted() {
		out["retry"] = true
	}
	return map[string]any{"hookSpecificOutput": out}
}
