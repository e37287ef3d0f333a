package shell

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Pattern kinds, with Claude Code's meaning, applied to each simple command.
const (
	// KindExact: the command's canonical text equals the pattern's (`npm test`
	// matches `npm  test` and `npm 'test'`, never `npm test -x`).
	KindExact = "exact"
	// KindPrefix: the command's words begin with the pattern's words, whole words only
	// (`npm run` matches `npm run test`, never `npm runx`).
	KindPrefix = "prefix"
	// KindGlob: * is any run of characters within one command's text, ? one character,
	// […] a class, \ escapes; a trailing ` *` or `:*` means "then zero or more
	// arguments" (`ls *` matches `ls` and `ls -la`, not `lsof`).
	KindGlob = "glob"
	// KindRegex: a Go (RE2) regular expression over the command's text, anchored at
	// both ends.
	KindRegex = "regex"
)

// Pattern is a compiled rule pattern for shell commands.
type Pattern struct {
	kind string
	// raw is the pattern as written, trimmed (for prefix, without a trailing `:*`).
	raw string
	// canon is an exact pattern's canonical text, when it is one plain command.
	canon string
	// words are a prefix pattern's canonical words.
	words []string
	re    *regexp.Regexp
}

// CompilePattern compiles pattern of kind "exact", "prefix", "glob" or "regex"; the
// error says what is wrong, for the person who wrote it.
func CompilePattern(kind, pattern string) (*Pattern, error) {
	if len(pattern) > MaxSource {
		return nil, fmt.Errorf("pattern is longer than %d bytes", MaxSource)
	}
	if !utf8.ValidString(pattern) {
		return nil, errors.New("pattern is not valid UTF-8")
	}
	p := &Pattern{kind: kind, raw: strings.TrimSpace(pattern)}
	if p.raw == "" {
		return nil, errors.New("pattern is empty")
	}
	switch kind {
	case KindExact:
		if c, ok := plainCommand(p.raw); ok {
			p.canon = c.Text
		}
	case KindPrefix:
		p.raw = strings.TrimSpace(strings.TrimSuffix(p.raw, ":*"))
		c, ok := plainCommand(p.raw)
		if !ok {
			return nil, fmt.Errorf("a prefix pattern is the first words of one simple command, with nothing the shell expands: %q is not", p.raw)
		}
		p.words = c.words
	case KindGlob:
		expr, err := globRegexp(p.raw)
		if err != nil {
			return nil, err
		}
		if p.re, err = regexp.Compile(expr); err != nil {
			return nil, fmt.Errorf("glob: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
	case KindRegex:
		re, err := regexp.Compile(`^(?:` + pattern + `)$`)
		if err != nil {
			return nil, errors.New(strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
		p.re = re
	default:
		return nil, fmt.Errorf("unknown match kind %q (want exact, prefix, glob or regex)", kind)
	}
	return p, nil
}

// plainCommand reads a pattern's text as exactly one simple command with nothing
// unseen, and `bash -c` left as written.
func plainCommand(text string) (Command, bool) {
	l := remembered(text, "", false)
	if len(l.Commands) != 1 || len(l.Wrappers) != 0 || len(l.Unseen) != 0 {
		return Command{}, false
	}
	return l.Commands[0], true
}

// MatchCommand reports whether one simple command matches the pattern.
func (p *Pattern) MatchCommand(c Command) bool {
	switch p.kind {
	case KindExact:
		if p.canon != "" {
			return c.Text == p.canon
		}
		return c.Text == p.raw
	case KindPrefix:
		cw := c.canonicalWords()
		if len(cw) < len(p.words) {
			return false
		}
		for i, w := range p.words {
			if cw[i] != w {
				return false
			}
		}
		return true
	case KindGlob, KindRegex:
		return p.re.MatchString(c.Text)
	}
	return false
}

// canonicalWords are the words Text joins; for a Command built by hand (not by
// Parse), its assignments and quoted arguments.
func (c Command) canonicalWords() []string {
	if c.words != nil {
		return c.words
	}
	out := append([]string(nil), c.Assigns...)
	for i, a := range c.Args {
		ctx := ctxArg
		if i == 0 {
			ctx = ctxCmdName
		}
		out = append(out, quoteLit(a, true, true, ctx, ""))
	}
	return out
}

// Allows reports whether the pattern allows the whole line: at least one command,
// every command matches, and nothing is unseen.
func (p *Pattern) Allows(l *Line) bool {
	if l == nil || len(l.Commands) == 0 || len(l.Unseen) != 0 {
		return false
	}
	for _, c := range l.Commands {
		if !p.MatchCommand(c) {
			return false
		}
	}
	return true
}

// Denies reports whether the pattern denies the line: any command or wrapper
// matches, or the whole source (trimmed) matches the pattern as text — so a deny
// written for a whole pipeline (`curl * | sh`) still applies.
func (p *Pattern) Denies(l *Line) bool {
	if l == nil {
		return false
	}
	for _, c := range l.Commands {
		if p.MatchCommand(c) {
			return true
		}
	}
	for _, c := range l.Wrappers {
		if p.MatchCommand(c) {
			return true
		}
	}
	for _, c := range l.Commands {
		if p.matchesUnderRunner(c) {
			return true
		}
	}
	return p.matchText(strings.TrimSpace(l.Source))
}

// matchesUnderRunner reports whether c runs, through a runner (sudo, env, nohup,
// timeout, xargs, …), a command the pattern matches: `sudo -u root rm -rf ~` is denied by
// `rm *`. Which of the runner's words start the inner command depends on the runner's
// options, so every tail of its arguments is tried — a deny may over-match, never miss.
func (p *Pattern) matchesUnderRunner(c Command) bool {
	if len(c.Args) < 2 || !runners[baseName(c.Args[0])] {
		return false
	}
	for k := 1; k < len(c.Args); k++ {
		text, ok := Join(c.Args[k:])
		if ok && p.MatchCommand(Command{Args: c.Args[k:], Text: text}) {
			return true
		}
	}
	return false
}

// matchText matches the pattern against text taken as it is.
func (p *Pattern) matchText(s string) bool {
	switch p.kind {
	case KindExact:
		return s == p.raw || p.canon != "" && s == p.canon
	case KindPrefix:
		if !strings.HasPrefix(s, p.raw) {
			return false
		}
		rest := s[len(p.raw):]
		r, _ := utf8.DecodeRuneInString(rest)
		return rest == "" || unicode.IsSpace(r)
	case KindGlob, KindRegex:
		return p.re.MatchString(s)
	}
	return false
}
