package shell

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// canonical renders a word for a command's Text: literal runs are shell-quoted only
// when the shell would otherwise read them differently, active segments (globs, tilde
// prefixes, expansions) are written as they are. So `echo 'a; b'` stays one word, and
// `rm '*'` and `rm *` render differently.
func (w word) canonical(ctx wordCtx) string {
	if len(w.segs) == 0 {
		if ctx == ctxAssign {
			return ""
		}
		return "''"
	}
	var b strings.Builder
	for i, s := range w.segs {
		if s.active {
			b.WriteString(s.text)
			continue
		}
		text, pre, post := s.text, "", ""
		// A tilde prefix ends at an unquoted '/' (or, in an assignment, starts after an
		// unquoted ':'): keep those bare so the prefix still expands when read back.
		if i > 0 && strings.HasPrefix(w.segs[i-1].text, "~") &&
			(strings.HasPrefix(text, "/") || ctx == ctxAssign && strings.HasPrefix(text, ":")) {
			pre, text = text[:1], text[1:]
		}
		if ctx == ctxAssign && i+1 < len(w.segs) && strings.HasPrefix(w.segs[i+1].text, "~") && strings.HasSuffix(text, ":") {
			text, post = text[:len(text)-1], ":"
		}
		rest := ""
		for _, later := range w.segs[i+1:] {
			rest += later.text
		}
		b.WriteString(pre)
		if i == 0 && ctx == ctxCmdName && len(w.segs) > 1 && isName(text) && strings.HasPrefix(w.segs[1].text, "[") {
			// `""A[x` runs a command named A[x; written bare it would read as an
			// assignment to an array element.
			b.WriteString("'" + text + "'")
		} else if text != "" {
			b.WriteString(quoteLit(text, i == 0 && pre == "", len(w.segs) == 1, ctx, rest))
		}
		b.WriteString(post)
	}
	return b.String()
}

// quoteLit quotes literal text when it needs it. start says the text begins the word,
// whole that it is all of it: a leading # or ~, an assignment-looking or reserved first
// word, only mean something there.
func quoteLit(s string, start, whole bool, ctx wordCtx, rest string) string {
	if s == "" {
		return "''"
	}
	if !needsQuote(s, start, whole, ctx, rest) {
		return s
	}
	printable := utf8.ValidString(s)
	if printable {
		for _, r := range s {
			if !unicode.IsPrint(r) {
				printable = false
				break
			}
		}
	}
	if printable {
		if strings.Contains(s, "'") && !strings.ContainsAny(s, "$`\\\"") {
			return `"` + s + `"`
		}
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return ansiC(s)
}

// ansiC quotes s as $'…', writing every byte that is not a printable character as a
// \xHH escape, so the text reads the same in every locale.
func ansiC(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r != utf8.RuneError && unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			for _, c := range []byte(s[i : i+size]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}

// needsQuote reports whether the shell would read s other than as the literal text;
// rest is what follows s in the word (a '[' only opens a pattern when a ']' follows).
func needsQuote(s string, start, whole bool, ctx wordCtx, rest string) bool {
	if start && (s[0] == '#' || s[0] == '~') {
		return true
	}
	if ctx == ctxCmdName {
		if start && whole && (syntax.IsKeyword(s) || parserWords[s]) {
			return true
		}
		// NAME=, NAME+= or NAME[ would read as an assignment; the parser also takes
		// any `X=` followed by '[' for one, so every '=' in a command name is quoted.
		if strings.Contains(s, "=") || start && looksLikeAssign(s) {
			return true
		}
	}
	for _, r := range s {
		switch r {
		case ';', '"', '\'', '(', ')', '$', '|', '&', '>', '<', '`', '\\',
			' ', '\t', '\r', '\n', '\v', '\f',
			'*', '?', '{', '}':
			return true
		case '[':
			if strings.Contains(s, "]") || strings.Contains(rest, "]") {
				return true
			}
		case '~':
			if ctx == ctxAssign {
				return true
			}
		}
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return true
		}
	}
	return false
}

// parserWords are command names the parser reads as constructs of their own (and
// bash as declaration builtins): a quoted `""let` runs the builtin let as a plain
// command, and its text must not read back as a let clause.
var parserWords = map[string]bool{
	"let": true, "declare": true, "local": true, "export": true, "readonly": true,
	"typeset": true, "nameref": true, "elif": true,
}

// isName reports whether s is a shell variable name.
func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// looksLikeAssign reports whether s starts like NAME=, NAME+= or NAME[, which the
// shell would take for an assignment in the command-name position.
func looksLikeAssign(s string) bool {
	i := 0
	// Digits first too: the parser takes `0=x` for an assignment (bash does not).
	for i < len(s) && (s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i == 0 || i >= len(s) {
		return false
	}
	return s[i] == '=' || s[i] == '[' || s[i] == '+' && i+1 < len(s) && s[i+1] == '='
}
