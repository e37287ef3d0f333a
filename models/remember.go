package models

import (
	"encoding/json"
	"math"
	"strconv"
)

// RememberKey is the verdict content key that asks the agent to keep the grant
// ("approve and remember"). Its value is one of:
//
//	true                                   the first suggestion, exactly as shown (none when none is offered)
//	false                                  nothing is remembered
//	{"suggestion": N}                      suggestion N, exactly as shown
//	{"suggestion": N, "ruleContent": "…"}  suggestion N with its rule's content edited
//	{"suggestion": N, "ruleContent": […]}  the same for a suggestion of several rules, one string per rule
//
// The suggestions are the ones the prompt offers, in order: Claude Code's
// permission_suggestions as it sent them, Codex's acceptForSession and its
// proposedExecpolicyAmendment. An edit may only narrow what was suggested; the
// adapters check that before anything reaches the agent.
const RememberKey = "remember"

// Remember is a verdict's parsed "remember" choice.
type Remember struct {
	// Suggestion is the index of the chosen suggestion in the prompt's list.
	Suggestion int
	// RuleContent, when not nil, holds the edited rule content, one entry per rule of
	// the chosen suggestion, in order. Nil means the suggestion as shown.
	RuleContent []string
}

// FieldError is a bad value in a verdict's content, named by its path
// (content.remember.ruleContent). The domain maps it onto a client error.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// RememberOf reads content["remember"]. ok is false when nothing is to be remembered
// (absent or false). A value of another shape is a *FieldError: content comes from
// clients, and a choice that cannot be read must never turn into "remember something".
// Numbers may be json.Number (a parsed verdict), float64 (generic JSON) or int.
func RememberOf(content map[string]any) (r Remember, ok bool, err error) {
	v, present := content[RememberKey]
	if !present || v == nil {
		return r, false, nil
	}
	const field = "content." + RememberKey
	switch t := v.(type) {
	case bool:
		return r, t, nil
	case map[string]any:
		for k := range t {
			if k != "suggestion" && k != "ruleContent" {
				return r, false, &FieldError{field + "." + k, "is not a remember field (want suggestion and ruleContent)"}
			}
		}
		n, good := index(t["suggestion"])
		if !good {
			return r, false, &FieldError{field + ".suggestion", "must be the index (0, 1, …) of one of the offered suggestions"}
		}
		r.Suggestion = n
		switch rc := t["ruleContent"].(type) {
		case nil:
			if _, has := t["ruleContent"]; has {
				return r, false, &FieldError{field + ".ruleContent", "must be a string or a list of strings"}
			}
		case string:
			r.RuleContent = []string{rc}
		case []string:
			r.RuleContent = append([]string{}, rc...)
		case []any:
			r.RuleContent = make([]string, 0, len(rc))
			for _, item := range rc {
				s, isStr := item.(string)
				if !isStr {
					return r, false, &FieldError{field + ".ruleContent", "must be a string or a list of strings"}
				}
				r.RuleContent = append(r.RuleContent, s)
			}
		default:
			return r, false, &FieldError{field + ".ruleContent", "must be a string or a list of strings"}
		}
		if r.RuleContent != nil && len(r.RuleContent) == 0 {
			return r, false, &FieldError{field + ".ruleContent", "must not be an empty list"}
		}
		return r, true, nil
	}
	return r, false, &FieldError{field, `must be true, false or {"suggestion": N, "ruleContent"?: "…"}`}
}

// Value is the content value that asks for r: {"suggestion": N} plus ruleContent (a
// string for one rule, a list for several) when edited.
func (r Remember) Value() map[string]any {
	out := map[string]any{"suggestion": r.Suggestion}
	switch len(r.RuleContent) {
	case 0:
	case 1:
		out["ruleContent"] = r.RuleContent[0]
	default:
		out["ruleContent"] = append([]string{}, r.RuleContent...)
	}
	return out
}

// index reads a small non-negative integer.
func index(v any) (int, bool) {
	var f float64
	switch t := v.(type) {
	case int:
		return t, t >= 0
	case json.Number:
		n, err := strconv.Atoi(t.String())
		return n, err == nil && n >= 0
	case float64:
		f = t
	default:
		return 0, false
	}
	if f < 0 || f != math.Trunc(f) || f > 1e6 {
		return 0, false
	}
	return int(f), true
}
