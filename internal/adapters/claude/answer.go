package claude

import "strings"

// Verdict is the part of a human verdict the adapters read: the ElicitationResult's
// action and content.
type Verdict struct {
	Action  string
	Content map[string]any
}

func (v Verdict) accepted() bool { return v.Action == "accept" }

func (v Verdict) feedback() string {
	s, _ := v.Content["feedback"].(string)
	return strings.TrimSpace(s)
}

func (v Verdict) remember() bool {
	b, _ := v.Content["remember"].(bool)
	return b
}

// answers returns the content a question tool's answers are made of: everything but
// Gatehouse's own control keys.
func (v Verdict) answers() map[string]any {
	out := make(map[string]any, len(v.Content))
	for k, val := range v.Content {
		if k == "remember" || k == "feedback" {
			continue
		}
		out[k] = val
	}
	return out
}

// PermissionDecision builds the PermissionRequest hook answer for a verdict.
func (p *Payload) PermissionDecision(v Verdict) map[string]any {
	var decision map[string]any
	if v.accepted() {
		decision = map[string]any{"behavior": "allow"}
		switch p.ToolName {
		case ToolAskUserQuestion:
			if ans := v.answers(); len(ans) > 0 {
				decision["updatedInput"] = withAnswers(p.input, ans)
			}
		case ToolExitPlanMode:
		default:
			if v.remember() {
				decision["updatedPermissions"] = []any{map[string]any{
					"type": "addRules", "rules": []any{map[string]any{"toolName": p.ToolName}},
					"behavior": "allow", "destination": "session",
				}}
			}
		}
	} else {
		decision = map[string]any{"behavior": "deny"}
		if fb := v.feedback(); fb != "" {
			decision["message"] = fb
		}
	}
	return map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": EventPermissionRequest, "decision": decision,
	}}
}

// PreToolUseDecision builds the PreToolUse hook answer for a verdict.
func (p *Payload) PreToolUseDecision(v Verdict) map[string]any {
	out := map[string]any{"hookEventName": EventPreToolUse}
	if v.accepted() {
		out["permissionDecision"] = "allow"
		out["permissionDecisionReason"] = "Approved in Gatehouse"
		if p.ToolName == ToolAskUserQuestion {
			if ans := v.answers(); len(ans) > 0 {
				out["updatedInput"] = withAnswers(p.input, ans)
			}
		}
	} else {
		out["permissionDecision"] = "deny"
		reason := "Rejected in Gatehouse"
		if v.Action == "cancel" {
			reason = "Cancelled in Gatehouse"
		}
		if fb := v.feedback(); fb != "" {
			reason = fb
		}
		out["permissionDecisionReason"] = reason
	}
	return map[string]any{"hookSpecificOutput": out}
}

// ElicitationDecision builds the Elicitation hook answer for a verdict.
func ElicitationDecision(v Verdict) map[string]any {
	out := map[string]any{"hookEventName": EventElicitation, "action": v.Action}
	if v.accepted() {
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
