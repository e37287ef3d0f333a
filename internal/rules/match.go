package rules

import (
	"fmt"
	"path"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/shell"
)

// ruleMatcher is a rule's pattern compiled for its tool's kind.
type ruleMatcher struct {
	kind     Kind
	field    string
	argument string
	// text compares a file path, a canonical URL, an argument or the input's JSON.
	text  matcher
	url   *urlPrefix
	shell *shell.Pattern
}

// compileRule compiles a rule of tool with match kind and pattern (and, for KindTool,
// the argument it compares). The error is for the person who wrote the rule.
func compileRule(tool, kind, pattern, argument string) (*ruleMatcher, error) {
	k, field := KindOf(tool)
	m := &ruleMatcher{kind: k, field: field, argument: argument}
	if argument != "" && k != KindTool {
		return nil, fmt.Errorf("match.argument applies to MCP and other tools; a %s rule compares %s", tool, field)
	}
	var err error
	switch k {
	case KindShell:
		m.shell, err = shell.CompilePattern(kind, pattern)
	case KindFile:
		m.text, err = compileFile(kind, pattern)
	case KindFetch:
		if kind == MatchPrefix {
			m.url, err = compileURLPrefix(pattern)
			break
		}
		if kind == MatchExact {
			u, ok := canonicalURL(pattern)
			if !ok {
				return nil, fmt.Errorf("is not an http(s) URL with a host")
			}
			pattern = u.String()
		}
		m.text, err = compile(kind, pattern)
	default:
		m.text, err = compile(kind, pattern)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// compileFile compiles a pattern over an absolute, cleaned file path. exact and prefix
// patterns are paths themselves (cleaned the same way); a prefix ends at a segment
// boundary.
func compileFile(kind, pattern string) (matcher, error) {
	switch kind {
	case MatchExact, MatchPrefix:
		if !strings.HasPrefix(pattern, "/") {
			return nil, fmt.Errorf("must be an absolute path (starting with /)")
		}
		p := path.Clean(pattern)
		if kind == MatchExact {
			return func(t string) bool { return t == p }, nil
		}
		return func(t string) bool { return underDir(t, p) }, nil
	case MatchGlob:
		if !strings.HasPrefix(pattern, "/") && !strings.HasPrefix(pattern, "**") {
			return nil, fmt.Errorf("must be an absolute path glob (starting with / or **)")
		}
	}
	return compile(kind, pattern)
}

// matches reports whether m covers subj. strict is an allow's reading (an allow rule,
// or an ask rule that allows when its wait runs out): the request must carry no second
// target the rule does not look at, a shell line must consist only of simple commands
// that match with nothing hidden, a path and a URL must have one meaning. Otherwise (a
// deny, an ask) the rule matches when any part it can see matches.
func (m *ruleMatcher) matches(subj Subject, strict bool) bool {
	if strict && subj.Kind != "" && KindOfTool(subj.Kind) != m.kind {
		// The agent says the tool does something else than the rule's tool name
		// does: an allow never vouches for it (a deny still looks).
		return false
	}
	in := subj.Input
	switch m.kind {
	case KindShell:
		cmd, ok := in[m.field].(string)
		if !ok || (strict && strayTarget(in, m.field)) {
			return false
		}
		line := shell.Parse(cmd, subj.Cwd)
		if strict {
			return m.shell.Allows(line)
		}
		return m.shell.Denies(line)
	case KindFile:
		raw, ok := in[m.field].(string)
		if !ok || (strict && strayTarget(in, m.field)) {
			return false
		}
		p, ok := absPath(raw, subj.Cwd)
		if !ok {
			if strict {
				return false
			}
			p = path.Clean(raw)
		}
		return m.text(p)
	case KindFetch:
		raw, ok := in[m.field].(string)
		if !ok || (strict && strayTarget(in, m.field)) {
			return false
		}
		u, ok := canonicalURL(raw)
		if !ok {
			return !strict && m.text != nil && m.text(raw)
		}
		if m.url != nil {
			return m.url.match(u)
		}
		return m.text(u.String())
	}
	if m.argument != "" {
		v, ok := in[m.argument].(string)
		return ok && !(strict && strayTarget(in, m.argument)) && m.text(v)
	}
	return m.text(canonicalJSON(in))
}

// strictReading reports whether a rule with this effect and timeout answer can let a
// request through without a person, and so must be matched strictly.
func strictReading(effect, onTimeout string) bool {
	return effect == "allow" || (effect == "ask" && onTimeout == OnTimeoutAllow)
}

// checkAllowPattern refuses a shell allow pattern that names more than one command:
// commands are matched one at a time, so "git add . && git commit" would never match
// anything; the person is told to make one rule per command.
func checkAllowPattern(tool, kind, pattern string) error {
	if k, _ := KindOf(tool); k != KindShell || kind == MatchRegex {
		return nil
	}
	line := shell.Parse(pattern, "")
	if n := len(line.Commands) + len(line.Wrappers); n > 1 {
		return fmt.Errorf("names %d commands; a shell rule matches one command at a time (every command of a line must match), so make one rule per command", n)
	}
	return nil
}
