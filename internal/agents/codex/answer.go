package codex

import (
	"encoding/json"
	"strings"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Answer builds the JSON-RPC result Codex reads for a verdict (§6.2):
//
//   - command / file change approvals: {"decision": accept | acceptForSession | decline |
//     cancel}; accept remembering suggestion 0 (content.remember true or
//     {"suggestion":0}) is acceptForSession; remembering a command's proposed exec
//     policy amendment (suggestion 1) is {"acceptWithExecpolicyAmendment":
//     {"execpolicy_amendment": <the proposed words, exactly>}};
//   - permissions: accept grants what was asked, {"permissions": <requested>, "scope":
//     "turn"} ("session" when remembered); anything else grants nothing,
//     {"permissions": {}, "scope": "turn"};
//   - requestUserInput: {"answers": {<question id>: {"answers": [...]}}} (see
//     UserInputAnswers); decline and cancel answer no question;
//   - MCP elicitation: {"action", "content", "_meta": null}; content is the verdict's
//     content for an accepted form, null otherwise;
//   - legacy execCommandApproval / applyPatchApproval: {"decision": approved |
//     approved_for_session | denied | abort}.
func (r *Request) Answer(v models.Verdict) map[string]any {
	accepted := v.Accepted()
	kept, remember := r.remembered(v)
	remember = remember && accepted
	switch r.Method {
	case MethodCommandApproval, MethodFileChangeApproval:
		if remember && kept.Kind == SuggestExecpolicy {
			return map[string]any{"decision": map[string]any{"acceptWithExecpolicyAmendment": map[string]any{
				"execpolicy_amendment": kept.Amendment}}}
		}
		d := v.Action
		if remember {
			d = "acceptForSession"
		}
		if d != "accept" && d != "acceptForSession" && d != "decline" {
			d = "cancel"
		}
		return map[string]any{"decision": d}
	case MethodExecCommand, MethodApplyPatch:
		d := "abort"
		switch {
		case remember:
			d = "approved_for_session"
		case accepted:
			d = "approved"
		case v.Action == models.ActionDecline:
			d = "denied"
		}
		return map[string]any{"decision": d}
	case MethodPermissions:
		if !accepted {
			return map[string]any{"permissions": map[string]any{}, "scope": "turn"}
		}
		scope := "turn"
		if remember {
			scope = "session"
		}
		granted, _ := r.Params["permissions"].(map[string]any)
		if granted == nil {
			granted = map[string]any{}
		}
		return map[string]any{"permissions": granted, "scope": scope}
	case MethodRequestUserInput:
		if !accepted {
			return map[string]any{"answers": map[string]any{}}
		}
		return map[string]any{"answers": UserInputAnswers(r.Params["questions"], v.Content)}
	case MethodMCPElicitation:
		out := map[string]any{"action": v.Action, "content": nil, "_meta": nil}
		if accepted && r.mcpMode() == "form" {
			content := v.Content
			if content == nil {
				content = map[string]any{}
			}
			out["content"] = content
		}
		return out
	}
	return map[string]any{}
}

// UserInputAnswers maps a verdict's content onto requestUserInput's answer object,
// {<question id>: {"answers": [...]}}.
//
// The content of a verdict is keyed the way its submitter found natural, so for each
// question the first of these keys present in content wins: the question's id (what a
// Codex-aware client sends), then its header, then its question text (what the approval
// page and Claude-style clients send). A value becomes the answer list: a string is one
// answer, a list of strings is several (multi values stay a list), a number or boolean
// is its JSON text. Empty strings and lists count as not answered; unanswered questions
// are left out, as Codex treats a missing id as "no answer". Keys matching no question
// (and Gatehouse's own remember/feedback) are ignored.
func UserInputAnswers(questions any, content map[string]any) map[string]any {
	out := map[string]any{}
	list, _ := questions.([]any)
	for _, q := range list {
		m, ok := q.(map[string]any)
		if !ok {
			continue
		}
		id := str(m["id"])
		if id == "" {
			continue
		}
		for _, key := range []string{id, str(m["header"]), str(m["question"])} {
			if key == "" || key == "remember" || key == "feedback" {
				continue
			}
			v, ok := content[key]
			if !ok {
				continue
			}
			if answers := answerList(v); len(answers) > 0 {
				out[id] = map[string]any{"answers": answers}
				break
			}
		}
	}
	return out
}

// answerList turns one content value into a list of answer strings.
func answerList(v any) []string {
	switch t := v.(type) {
	case string:
		if strings.TrimSpace(t) == "" {
			return nil
		}
		return []string{t}
	case []string:
		out := make([]string, 0, len(t))
		for _, s := range t {
			if strings.TrimSpace(s) != "" {
				out = append(out, s)
			}
		}
		return out
	case []any:
		out := make([]string, 0, len(t))
		for _, a := range t {
			if s, ok := a.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, s)
			}
		}
		return out
	case bool:
		if t {
			return []string{"true"}
		}
		return []string{"false"}
	case json.Number:
		return []string{t.String()}
	case float64:
		b, _ := json.Marshal(t)
		return []string{string(b)}
	}
	return nil
}
