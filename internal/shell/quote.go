package shell

import (
	"strconv"
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
		b.WriteString(quoteLit(s.text, i == 0, len(w.segs) == 1, ctx))
	}
	return b.String()
}

// quoteLit quotes literal text when it needs it. start says the text begins the word,
// whole that it is all of it: a leading # or ~, an assignment-looking or reserved first
// word, only mean something there.
func quoteLit(s string, start, whole bool, ctx wordCtx) string {
	if s == "" {
		return "''"
	}
	if !needsQuote(s, start, whole, ctx) {
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
	if q, err := syntax.Quote(s, syntax.LangBash); err == nil {
		return q
	}
	// Only a NUL byte gets here: no shell word holds one, but the text must still be
	// unambiguous.
	return "$" + strconv.Quote(s)
}

// needsQuote reports whether the shell would read s other than as the literal text.
func needsQuote(s string, start, whole bool, ctx wordCtx) bool {
	if start && (s[0] == '#' || s[0] == '~') {
		return true
	}
	if ctx == ctxCmdName && start {
		if whole && syntax.IsKeyword(s) {
			return true
		}
		if looksLikeAssign(s) {
			return true
		}
	}
	for _, r := range s {
		switch r {
		case ';', '"', '\'', '(', ')', '$', '|', '&', '>', '<', '`', '\\',
			' ', '\t', '\r', '\n', '\v', '\f',
			'*', '?', '[', '{', '}':
			return true
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

// looksLikeAssign reports whether s starts like NAME= or NAME+=, which the shell would
// take for an assignment in the command-name position.
func looksLikeAssign(s string) bool {
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || i > 0 && s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i == 0 || i >= len(s) {
		return false
	}
	return s[i] == '=' || s[i] == '+' && i+1 < len(s) && s[i+1] == '='
}
