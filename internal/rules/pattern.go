package rules

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Match kinds: how a rule's pattern is compared with a request's target (see Target;
// shell commands are compared one simple command at a time, see internal/shell).
const (
	// MatchExact: the target equals the pattern, byte for byte.
	MatchExact = "exact"
	// MatchPrefix: the target starts with the pattern, at a boundary: whole words for
	// a command ("npm run" matches "npm run build", never "npm runx"), whole path
	// segments for a file ("/repo/src" matches "/repo/src/a.go", never "/repo/srcx"),
	// and scheme, host and whole path segments for a URL.
	MatchPrefix = "prefix"
	// MatchGlob: a glob over the whole target: * is any run of characters except "/",
	// ** any run including "/", ? one character except "/", [abc] / [a-z] / [!a] a
	// character class, and \ escapes the next character. "/repo/src/**" matches every
	// file under /repo/src. For a command, * is any run of characters and a trailing
	// ":*" is "then any arguments", as in Claude Code: "git status:*".
	MatchGlob = "glob"
	// MatchRegex: a Go (RE2) regular expression that must match the whole target (it
	// is anchored at both ends for you).
	MatchRegex = "regex"
)

// MaxPattern bounds a pattern's length.
const MaxPattern = 4096

// matcher reports whether a target matches a compiled pattern.
type matcher func(target string) bool

// compile turns a kind and pattern into a matcher; the error says why the pattern does
// not compile, for the person who wrote it.
func compile(kind, pattern string) (matcher, error) {
	switch kind {
	case MatchExact:
		return func(t string) bool { return t == pattern }, nil
	case MatchPrefix:
		return func(t string) bool { return strings.HasPrefix(t, pattern) }, nil
	case MatchGlob:
		expr, err := globRegexp(pattern)
		if err != nil {
			return nil, err
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, err
		}
		return re.MatchString, nil
	case MatchRegex:
		re, err := regexp.Compile(`^(?:` + pattern + `)$`)
		if err != nil {
			return nil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
		return re.MatchString, nil
	}
	return nil, fmt.Errorf("unknown match kind %q", kind)
}

// globRegexp translates a glob (see MatchGlob) into an anchored regular expression.
func globRegexp(glob string) (string, error) {
	var b strings.Builder
	b.WriteString(`^`)
	rs := []rune(glob)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch c {
		case '*':
			if i+1 < len(rs) && rs[i+1] == '*' {
				b.WriteString(`.*`)
				i++
			} else {
				b.WriteString(`[^/]*`)
			}
		case '?':
			b.WriteString(`[^/]`)
		case '\\':
			if i+1 >= len(rs) {
				return "", fmt.Errorf("trailing \\ escapes nothing")
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case '[':
			end := -1
			for j := i + 1; j < len(rs); j++ {
				if rs[j] == ']' && j > i+1 && !(j == i+2 && rs[i+1] == '!') {
					end = j
					break
				}
			}
			if end < 0 {
				return "", fmt.Errorf("unterminated character class starting at offset %d", i)
			}
			class := string(rs[i+1 : end])
			neg := strings.HasPrefix(class, "!")
			class = strings.TrimPrefix(class, "!")
			class = strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`, `^`, `\^`).Replace(class)
			if neg {
				b.WriteString(`[^` + class + `]`)
			} else {
				b.WriteString(`[` + class + `]`)
			}
			i = end
		case ']':
			return "", fmt.Errorf("] without [ at offset %d", i)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`$`)
	return b.String(), nil
}

// underDir reports whether dir (absolute, cleaned) is root or lies below it.
func underDir(dir, root string) bool {
	if dir == "" || !strings.HasPrefix(dir, "/") {
		return false
	}
	dir = path.Clean(dir)
	return dir == root || root == "/" || strings.HasPrefix(dir, root+"/")
}
