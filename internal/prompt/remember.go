package prompt

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/claude"
	"github.com/gatehouse-dev/gatehouse/internal/agents/codex"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Form control names of "approve and remember".
const (
	// FieldRemember is the radio naming the chosen suggestion by index.
	FieldRemember = "remember"
	// fieldRulePrefix starts the name of an editable rule's text input,
	// rule_<suggestion>_<rule>.
	fieldRulePrefix = "rule_"
)

// Suggestion is one thing "approve and remember" can keep, as the page offers it: one
// of Claude Code's permission_suggestions, Codex's session grant or proposed exec
// policy amendment, or the one grant another agent offers (models.ParamRememberSuggestion). Index is its position in the prompt's list, which is what a
// verdict's content.remember.suggestion names.
type Suggestion struct {
	Index int
	// Title says what is granted ("Always allow", "Allow access to /w/dist").
	Title string
	// Where says where and for how long the agent keeps it.
	Where string
	// Rules are the rules an addRules suggestion holds; Words the command prefix of a
	// Codex amendment.
	Rules    []SuggestionRule
	Words    string
	Selected bool
}

// SuggestionRule is one rule of a suggestion: its tool and content, editable in place
// when the suggestion may be narrowed.
type SuggestionRule struct {
	Tool string
	// Content is the rule content as suggested, or as typed before a failed submit;
	// Suggested the content as suggested.
	Content   string
	Suggested string
	Editable  bool
	// Broad marks a rule without content: it covers every use of the tool.
	Broad bool
	// Name is the form field of an editable rule.
	Name  string
	Error string
}

// ID is the rule input's element id.
func (r SuggestionRule) ID() string { return "f-" + r.Name }

// suggestionsOf lists what the prompt can remember, in the order a verdict names them.
func suggestionsOf(origin string, params map[string]any) []Suggestion {
	switch origin {
	case models.OriginClaudePermission:
		list := claude.Suggestions(params)
		out := make([]Suggestion, 0, len(list))
		for i, s := range list {
			out = append(out, claudeSuggestion(i, claude.InfoOf(s), s))
		}
		return out
	case models.OriginCodex:
		method := str(params["codex_method"])
		list := codex.Suggestions(method, params)
		if len(list) == 0 && params["allow_remember"] == true {
			list = []codex.Suggestion{{Kind: codex.SuggestSession}}
		}
		out := make([]Suggestion, 0, len(list))
		for i, s := range list {
			out = append(out, codexSuggestion(i, method, s))
		}
		return out
	}
	if s, ok := offeredSuggestion(params); ok {
		return []Suggestion{s}
	}
	return nil
}

// offeredSuggestion is the one grant an agent offers through
// models.ParamRememberSuggestion (with allow_remember), as suggestion 0.
func offeredSuggestion(params map[string]any) (Suggestion, bool) {
	m, _ := params[models.ParamRememberSuggestion].(map[string]any)
	title := strings.TrimSpace(str(m["title"]))
	if params["allow_remember"] != true || title == "" {
		return Suggestion{}, false
	}
	return Suggestion{Index: 0, Title: title, Where: strings.TrimSpace(str(m["where"]))}, true
}

func claudeSuggestion(i int, info claude.SuggestionInfo, raw map[string]any) Suggestion {
	s := Suggestion{Index: i, Where: claudeDestination(info.Destination)}
	switch info.Type {
	case claude.SuggestionAddRules, "replaceRules", "removeRules":
		verb := map[string]string{"allow": "Always allow", "deny": "Always deny", "ask": "Always ask before"}[info.Behavior]
		if verb == "" {
			verb = "Rule (" + info.Behavior + ")"
		}
		switch info.Type {
		case "replaceRules":
			verb = "Replace the rules with: " + strings.ToLower(verb[:1]) + verb[1:]
		case "removeRules":
			verb = "Remove the rules: " + strings.ToLower(verb[:1]) + verb[1:]
		}
		s.Title = verb
		for j, r := range info.Rules {
			s.Rules = append(s.Rules, SuggestionRule{Tool: r.Tool, Content: r.Content, Suggested: r.Content, Editable: info.Editable,
				Broad: !r.HasContent, Name: fmt.Sprintf("%s%d_%d", fieldRulePrefix, i, j)})
		}
	case claude.SuggestionAddDirectories:
		s.Title = "Allow access to " + strings.Join(info.Directories, ", ")
	case "removeDirectories":
		s.Title = "Remove access to " + strings.Join(info.Directories, ", ")
	case claude.SuggestionSetMode:
		s.Title = "Switch to " + info.Mode + " mode"
	default:
		js, _ := BoundedJSON(raw, MaxMessage)
		s.Title = "Permission update " + js
	}
	return s
}

func claudeDestination(d string) string {
	switch d {
	case "session":
		return "for the rest of this session"
	case "localSettings":
		return "in this project, for you (.claude/settings.local.json)"
	case "projectSettings":
		return "in this project, for everyone (.claude/settings.json)"
	case "userSettings":
		return "in every project, for you (~/.claude/settings.json)"
	case "cliArg":
		return "for this run"
	case "":
		return ""
	}
	return "saved to " + d
}

func codexSuggestion(i int, method string, s codex.Suggestion) Suggestion {
	out := Suggestion{Index: i}
	if s.Kind == codex.SuggestExecpolicy {
		out.Title = "Always allow commands starting with"
		out.Words = strings.Join(s.Amendment, " ")
		out.Where = "added to Codex's exec policy"
		return out
	}
	out.Where = "for the rest of this session"
	switch method {
	case codex.MethodFileChangeApproval, codex.MethodApplyPatch:
		out.Title = "Allow these file changes"
	case codex.MethodPermissions:
		out.Title = "Grant these permissions"
	default:
		out.Title = "Allow this command"
	}
	return out
}

// submitRemember binds "approve and remember": the chosen suggestion (the first when
// the form names none, as content.remember:true does) and its edited rules.
func (p *Prompt) submitRemember(form url.Values) (models.Verdict, bool) {
	if len(p.Suggestions) == 0 {
		p.FormError = "This request cannot be remembered; approve it once instead."
		return models.Verdict{}, false
	}
	idx := 0
	if v := form.Get(FieldRemember); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n >= len(p.Suggestions) {
			p.FormError = "Choose one of the suggestions to remember."
			return models.Verdict{}, false
		}
		idx = n
	}
	for i := range p.Suggestions {
		s := &p.Suggestions[i]
		s.Selected = i == idx
		for j := range s.Rules {
			if r := &s.Rules[j]; r.Editable {
				if vals, ok := form[r.Name]; ok && len(vals) > 0 {
					r.Content = vals[0]
				}
			}
		}
	}
	chosen := p.Suggestions[idx]
	rem := models.Remember{Suggestion: idx}
	if chosen.Edited() {
		for _, r := range chosen.Rules {
			rem.RuleContent = append(rem.RuleContent, r.Content)
		}
	}
	content := map[string]any{models.RememberKey: rem.Value()}
	if err := p.CheckRemember(content); err != nil {
		var fe *models.FieldError
		msg := err.Error()
		if errors.As(err, &fe) {
			msg = fe.Msg
			if j, ok := ruleIndex(fe.Field, len(chosen.Rules)); ok {
				p.Suggestions[idx].Rules[j].Error = "This rule " + msg + "."
				p.FormError = "The rule to remember is wider than what was suggested; see the field marked below."
				return models.Verdict{}, false
			}
		}
		p.FormError = "This cannot be remembered: " + msg + "."
		return models.Verdict{}, false
	}
	return models.Verdict{Action: models.ActionAccept, Content: content}, true
}

// Edited reports whether the person changed a rule of the suggestion.
func (s Suggestion) Edited() bool {
	for _, r := range s.Rules {
		if r.Content != r.Suggested {
			return true
		}
	}
	return false
}

// ruleIndex maps content.remember.ruleContent (one rule) or …ruleContent[j] onto a rule.
func ruleIndex(field string, rules int) (int, bool) {
	const base = "content." + models.RememberKey + ".ruleContent"
	if field == base && rules > 0 {
		return 0, true
	}
	rest, ok := strings.CutPrefix(field, base+"[")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSuffix(rest, "]"))
	return n, err == nil && n >= 0 && n < rules
}

// CheckRemember checks a verdict's content.remember against what this prompt offers,
// the one check for every path that gives a verdict (the approval page, the resolve
// API, approval events). It returns a *models.FieldError naming the field, or nil.
//
// true and false are always acceptable: true asks for the first suggestion as shown,
// and for nothing when none is offered (a plan, a question, a Claude Code request that
// came without suggestions). An object names a suggestion, which must exist; an edit
// must only narrow it (claude.CheckNarrower); Codex suggestions cannot be edited.
func (p *Prompt) CheckRemember(content map[string]any) error {
	r, ok, err := models.RememberOf(content)
	if err != nil || !ok {
		return err
	}
	if _, isBool := content[models.RememberKey].(bool); isBool {
		return nil
	}
	field := "content." + models.RememberKey
	if len(p.Suggestions) == 0 {
		return &models.FieldError{Field: field, Msg: "this request offers nothing to remember"}
	}
	switch p.origin {
	case models.OriginClaudePermission:
		list := claude.Suggestions(p.params)
		raws := make([]json.RawMessage, 0, len(list))
		for _, s := range list {
			raw, err := json.Marshal(s)
			if err != nil {
				return &models.FieldError{Field: field, Msg: "the suggestions cannot be read"}
			}
			raws = append(raws, raw)
		}
		_, err = claude.ChooseSuggestion(raws, r)
		return err
	case models.OriginCodex:
		method := str(p.params["codex_method"])
		if len(codex.Suggestions(method, p.params)) == 0 { // allow_remember without a known method
			if r.Suggestion != 0 || r.RuleContent != nil {
				return &models.FieldError{Field: field + ".suggestion", Msg: "must be 0, the only suggestion"}
			}
			return nil
		}
		_, err = codex.ChooseSuggestion(method, p.params, r)
		return err
	}
	if _, ok := offeredSuggestion(p.params); ok {
		switch {
		case r.Suggestion != 0:
			return &models.FieldError{Field: field + ".suggestion", Msg: "must be 0, the only suggestion"}
		case r.RuleContent != nil:
			return &models.FieldError{Field: field + ".ruleContent", Msg: "this suggestion cannot be edited; choose it as it is"}
		}
		return nil
	}
	return &models.FieldError{Field: field, Msg: "this request offers nothing to remember"}
}
