package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/gatehouse-dev/gatehouse/models"
)

// MaxSuggestions bounds how many permission_suggestions a prompt keeps and offers;
// Claude Code sends one to three.
const MaxSuggestions = 16

// MaxRuleContent is the longest edited rule content, in bytes.
const MaxRuleContent = 4096

// ParamSuggestions is the params key holding the permission_suggestions Claude Code
// sent with a PermissionRequest, as sent (objects only, at most MaxSuggestions).
const ParamSuggestions = "permission_suggestions"

// Suggestion types Claude Code sends (PermissionUpdate).
const (
	SuggestionAddRules       = "addRules"
	SuggestionAddDirectories = "addDirectories"
	SuggestionSetMode        = "setMode"
)

// Rule is one permission rule of a suggestion: a tool and, optionally, the content
// that narrows it (Bash(npm test), Edit(/src/**)). A rule without content covers every
// use of the tool.
type Rule struct {
	Tool       string
	Content    string
	HasContent bool
}

// SuggestionInfo is what a person needs to read about one suggestion before choosing it.
type SuggestionInfo struct {
	Type, Behavior, Destination, Mode string
	Rules                             []Rule
	Directories                       []string
	// Editable reports that the rules' contents may be edited (narrowed) before saving:
	// an addRules suggestion that allows, every rule of which has content. Narrowing a
	// deny or ask rule would allow more, so those are offered as they are.
	Editable bool
}

// decodeSuggestions keeps the object entries of permission_suggestions, as sent (a
// chosen entry is echoed byte for byte), and drops everything else: unknown shapes are
// not offered rather than refused, as Claude Code may add new ones.
func decodeSuggestions(raw json.RawMessage) []json.RawMessage {
	var list []json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &list) != nil {
		return nil
	}
	out := make([]json.RawMessage, 0, min(len(list), MaxSuggestions))
	for _, item := range list {
		item = bytes.TrimSpace(item)
		if len(item) == 0 || item[0] != '{' {
			continue
		}
		if _, err := decodeObject(item); err != nil {
			continue
		}
		out = append(out, item)
		if len(out) == MaxSuggestions {
			break
		}
	}
	return out
}

func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("not an object")
	}
	return m, nil
}

// Suggestions returns the suggestions a prompt's params hold.
func Suggestions(params map[string]any) []map[string]any {
	list, _ := params[ParamSuggestions].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// InfoOf reads one suggestion.
func InfoOf(s map[string]any) SuggestionInfo {
	info := SuggestionInfo{Type: str(s["type"]), Behavior: str(s["behavior"]),
		Destination: str(s["destination"]), Mode: str(s["mode"])}
	rules, _ := s["rules"].([]any)
	for _, r := range rules {
		m, _ := r.(map[string]any)
		content, has := m["ruleContent"].(string)
		info.Rules = append(info.Rules, Rule{Tool: str(m["toolName"]), Content: content, HasContent: has})
	}
	dirs, _ := s["directories"].([]any)
	for _, d := range dirs {
		info.Directories = append(info.Directories, str(d))
	}
	info.Editable = info.Type == SuggestionAddRules && info.Behavior == "allow" && len(info.Rules) > 0
	for _, r := range info.Rules {
		if !r.HasContent || r.Tool == "" {
			info.Editable = false
		}
	}
	return info
}

// ChooseSuggestion returns the permission update to echo as updatedPermissions for a
// remember choice: suggestion r.Suggestion exactly as Claude Code sent it, or — when
// r.RuleContent holds an edit — that entry with each rule's ruleContent replaced, after
// checking that every edit only narrows its rule (see CheckNarrower). Nothing else of
// the entry (type, behavior, destination, tool names) can change. Errors are
// *models.FieldError naming the content field.
func ChooseSuggestion(suggestions []json.RawMessage, r models.Remember) (json.RawMessage, error) {
	const field = "content." + models.RememberKey
	if r.Suggestion < 0 || r.Suggestion >= len(suggestions) {
		if len(suggestions) == 0 {
			return nil, &models.FieldError{Field: field, Msg: "this request offers nothing to remember"}
		}
		return nil, &models.FieldError{Field: field + ".suggestion",
			Msg: fmt.Sprintf("must be one of the offered suggestions, 0 to %d", len(suggestions)-1)}
	}
	raw := suggestions[r.Suggestion]
	if r.RuleContent == nil {
		return raw, nil
	}
	entry, err := decodeObject(raw)
	if err != nil {
		return nil, &models.FieldError{Field: field, Msg: "the suggestion cannot be read"}
	}
	info := InfoOf(entry)
	rcField := field + ".ruleContent"
	if len(r.RuleContent) != len(info.Rules) {
		return nil, &models.FieldError{Field: rcField,
			Msg: fmt.Sprintf("must hold one rule content per rule of the suggestion (%d)", len(info.Rules))}
	}
	unchanged := true
	for i, rule := range info.Rules {
		if !rule.HasContent || r.RuleContent[i] != rule.Content {
			unchanged = false
		}
	}
	if unchanged {
		return raw, nil
	}
	if !info.Editable {
		return nil, &models.FieldError{Field: rcField, Msg: "this suggestion cannot be edited; choose it as it is"}
	}
	rules, _ := entry["rules"].([]any)
	for i, rule := range info.Rules {
		f := rcField
		if len(info.Rules) > 1 {
			f = fmt.Sprintf("%s[%d]", rcField, i)
		}
		if err := CheckNarrower(rule.Tool, rule.Content, r.RuleContent[i]); err != nil {
			return nil, &models.FieldError{Field: f, Msg: err.Error()}
		}
		m := rules[i].(map[string]any) // InfoOf read it as an object with content
		m["ruleContent"] = r.RuleContent[i]
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(entry); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

// Characters an edit may not add to a rule: wildcards widen it, shell operators would
// let an exact rule cover a compound command the suggestion does not, parentheses and
// quotes could change how Claude Code reads the saved "Tool(content)" string.
const forbiddenInEdit = "*?[]{}()&|;<>`$\\\"'"

// CheckNarrower reports whether edited may replace suggested as a rule's content
// without allowing more than suggested does, in Claude Code's own rule syntax:
//
//   - unchanged is always fine;
//   - an exact rule (no trailing wildcard) cannot change: every other text matches
//     something the suggestion does not;
//   - a command prefix rule "P:*" or "P *" may become P itself, or P followed by a space
//     and more plain words, optionally still ending in ":*" or " *" (npm run deploy:* →
//     npm run deploy:prod is refused, npm run deploy --prod:* is fine);
//   - a path rule "D/**" may become a file or a directory (optionally ending in "/**")
//     inside D, without ".." segments;
//   - nothing may add wildcards, shell operators, parentheses, quotes, control
//     characters, or be empty — an empty rule content would cover every use of the tool.
//
// The error text is written for the person who typed the edit.
func CheckNarrower(tool, suggested, edited string) error {
	if edited == suggested {
		return nil
	}
	if strings.TrimSpace(edited) == "" {
		return fmt.Errorf("must not be empty: a rule without content allows every use of %s", orTool(tool))
	}
	if len(edited) > MaxRuleContent {
		return fmt.Errorf("must be at most %d bytes", MaxRuleContent)
	}
	if strings.IndexFunc(edited, unicode.IsControl) >= 0 {
		return fmt.Errorf("must be one line without control characters")
	}
	prefix, kind := prefixForm(suggested)
	if kind == "" {
		return fmt.Errorf("can only be saved as suggested (%q): it names one exact use of %s, and any other text would allow something else", suggested, orTool(tool))
	}
	literal, tail := splitWildcard(edited, kind)
	added, ok := strings.CutPrefix(literal, prefix)
	if !ok {
		return fmt.Errorf("must start with %q, as the suggestion does: an edit may only narrow it", prefix)
	}
	if strings.ContainsAny(added, forbiddenInEdit) {
		return fmt.Errorf("may add only plain words to %q, without wildcards, quotes, parentheses or shell operators", prefix)
	}
	switch kind {
	case kindCommand:
		// P itself, or P, a space and more words: never "P-other", which the prefix rule
		// does not cover when Claude Code matches on word boundaries.
		if added != "" && !strings.HasPrefix(added, " ") {
			return fmt.Errorf("must be %q or continue it after a space (%q)", prefix, prefix+" …")
		}
		if added != "" && strings.TrimSpace(added) == "" {
			return fmt.Errorf("must not end in blanks")
		}
	case kindPath:
		if added == "" && tail == "" {
			return fmt.Errorf("must name a file or directory inside %q", prefix)
		}
		for _, seg := range strings.Split(added, "/") {
			if seg == ".." || seg == "." {
				return fmt.Errorf("must not contain %q segments", seg)
			}
		}
		if strings.Contains(added, "//") {
			return fmt.Errorf("must not contain empty path segments")
		}
	}
	return nil
}

const (
	kindCommand = "command"
	kindPath    = "path"
)

// prefixForm splits a suggested rule content into its literal prefix and the kind of
// trailing wildcard: "npm run deploy:*" → ("npm run deploy", command), "src/**" →
// ("src/", path). Any other wildcard, anywhere, makes the rule exact-only ("").
func prefixForm(s string) (string, string) {
	var prefix, kind string
	switch {
	case strings.HasSuffix(s, ":*"):
		prefix, kind = strings.TrimSuffix(s, ":*"), kindCommand
	case strings.HasSuffix(s, " *"):
		prefix, kind = strings.TrimSuffix(s, " *"), kindCommand
	case strings.HasSuffix(s, "/**"):
		prefix, kind = strings.TrimSuffix(s, "**"), kindPath
	default:
		return "", ""
	}
	if strings.TrimSpace(prefix) == "" || strings.TrimSpace(prefix) == "/" || strings.ContainsAny(prefix, "*?[]{}") {
		return "", ""
	}
	return prefix, kind
}

// splitWildcard removes the one trailing wildcard an edit of this kind may keep.
func splitWildcard(e, kind string) (literal, tail string) {
	if kind == kindCommand {
		for _, t := range []string{":*", " *"} {
			if l, ok := strings.CutSuffix(e, t); ok {
				return l, t
			}
		}
		return e, ""
	}
	if l, ok := strings.CutSuffix(e, "**"); ok && strings.HasSuffix(l, "/") {
		return l, "**"
	}
	return e, ""
}

func orTool(tool string) string {
	if tool == "" {
		return "the tool"
	}
	return tool
}
