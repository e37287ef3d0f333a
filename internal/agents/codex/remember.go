package codex

import (
	"fmt"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Kinds of remember suggestion Codex understands.
const (
	// SuggestSession keeps the grant for the rest of the session: acceptForSession
	// (approved_for_session in the legacy protocol; scope "session" for permissions).
	SuggestSession = "session"
	// SuggestExecpolicy adds the prefix rule Codex proposed (proposedExecpolicyAmendment)
	// to its exec policy: acceptWithExecpolicyAmendment.
	SuggestExecpolicy = "execpolicy"
)

// Suggestion is one way Codex can remember a grant, in the order the prompt offers
// them: index 0 is always SuggestSession; a command approval that carries a
// proposedExecpolicyAmendment offers it as index 1.
type Suggestion struct {
	Kind string
	// Amendment is the proposed exec policy prefix rule (command words), for
	// SuggestExecpolicy.
	Amendment []string
}

// Suggestions lists what a request of method can remember, reading its params (the
// request's own or the published ones, which copy proposedExecpolicyAmendment).
func Suggestions(method string, params map[string]any) []Suggestion {
	switch method {
	case MethodCommandApproval:
		out := []Suggestion{{Kind: SuggestSession}}
		if am := amendment(params["proposedExecpolicyAmendment"]); len(am) > 0 {
			out = append(out, Suggestion{Kind: SuggestExecpolicy, Amendment: am})
		}
		return out
	case MethodFileChangeApproval, MethodPermissions, MethodExecCommand, MethodApplyPatch:
		return []Suggestion{{Kind: SuggestSession}}
	}
	return nil
}

// ChooseSuggestion checks a remember choice against what the request offers. Codex's
// suggestions are taken as offered: an edit (ruleContent) is refused rather than
// applied, so the amendment Codex receives is exactly the one it proposed. Errors are
// *models.FieldError.
func ChooseSuggestion(method string, params map[string]any, r models.Remember) (Suggestion, error) {
	const field = "content." + models.RememberKey
	list := Suggestions(method, params)
	if len(list) == 0 {
		return Suggestion{}, &models.FieldError{Field: field, Msg: "this request offers nothing to remember"}
	}
	if r.Suggestion < 0 || r.Suggestion >= len(list) {
		return Suggestion{}, &models.FieldError{Field: field + ".suggestion",
			Msg: fmt.Sprintf("must be one of the offered suggestions, 0 to %d", len(list)-1)}
	}
	if r.RuleContent != nil {
		return Suggestion{}, &models.FieldError{Field: field + ".ruleContent",
			Msg: "Codex suggestions cannot be edited; choose one as it is"}
	}
	return list[r.Suggestion], nil
}

// amendment reads proposedExecpolicyAmendment: a non-empty list of strings, or nothing.
func amendment(v any) []string {
	var out []string
	switch t := v.(type) {
	case []string:
		out = append(out, t...)
	case []any:
		for _, item := range t {
			s, ok := item.(string)
			if !ok {
				return nil
			}
			out = append(out, s)
		}
	}
	return out
}

// remembered is the suggestion a verdict chose, when it is valid for this request.
func (r *Request) remembered(v models.Verdict) (Suggestion, bool) {
	rem, ok, err := models.RememberOf(v.Content)
	if err != nil || !ok {
		return Suggestion{}, false
	}
	s, err := ChooseSuggestion(r.Method, r.Params, rem)
	return s, err == nil
}
