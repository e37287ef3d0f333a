package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// seg is one piece of a word after quote removal: literal text, or text the shell
// still gives a meaning to when it runs (an unquoted glob character, a tilde prefix, or
// an expansion it cannot read). Keeping the two apart is what makes a command's
// canonical text unambiguous: `rm '*'` and `rm *` are different commands.
type seg struct {
	text   string
	active bool
}

// word is a shell word as static reading sees it.
type word struct {
	segs []seg
	// literal: no expansion whose value is only known at run time (parameter, command,
	// arithmetic or process substitution, an unreadable escape).
	literal bool
	// glob: an unquoted *, ? or […] pattern (the word is a pathname expansion).
	glob bool
	// tilde: an unquoted tilde prefix (~, ~user) the shell replaces with a home directory.
	tilde bool
}

// value is the word after quote removal, expansions left as written.
func (w word) value() string {
	var b strings.Builder
	for _, s := range w.segs {
		b.WriteString(s.text)
	}
	return b.String()
}

// static reports whether the word is one fixed string: literal, no glob, no tilde.
func (w word) static() bool { return w.literal && !w.glob && !w.tilde }

// wordCtx says where a word stands, which changes what the shell expands and so what
// needs quoting in canonical text.
type wordCtx int

const (
	ctxArg     wordCtx = iota // an argument, or any other word
	ctxCmdName                // the first word of a simple command
	ctxAssign                 // the value of an assignment (a tilde after ':' expands too)
)

// analyze reads a word's parts into segments. It reports nothing: scan names what is
// unseen, once per word, before any brace expansion copies the word.
func analyze(src string, wd *syntax.Word, ctx wordCtx) word {
	w := word{literal: true}
	if wd == nil {
		return w
	}
	parts := mergeLits(wd.Parts)
	for i, part := range parts {
		switch p := part.(type) {
		case *syntax.Lit:
			w.unquotedLit(p.Value, i == 0, i == len(parts)-1, ctx)
		case *syntax.SglQuoted:
			if !p.Dollar {
				w.add(p.Value, false)
				continue
			}
			if s, ok := decodeANSIC(p.Value); ok {
				w.add(s, false)
			} else {
				w.literal = false
				w.add(snippetOf(src, p), true)
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				w.literal = false
				w.add(snippetOf(src, p), true)
				continue
			}
			var lit strings.Builder
			for _, dp := range p.Parts {
				if l, ok := dp.(*syntax.Lit); ok {
					lit.WriteString(unescapeDouble(l.Value))
					continue
				}
				// An expansion inside double quotes: the whole quoted part stays as
				// written, quotes included (they change how it expands).
				w.literal = false
			}
			if w.literal {
				w.add(lit.String(), false)
			} else {
				w.add(snippetOf(src, p), true)
			}
		case *syntax.ExtGlob:
			w.glob = true
			w.add(snippetOf(src, p), true)
		default:
			// Parameter, command, arithmetic and process substitutions, and any
			// part this package does not know: not a fixed string.
			w.literal = false
			w.add(snippetOf(src, part), true)
		}
	}
	return w
}

// add appends text to the word, joining it to the last segment of the same kind.
func (w *word) add(text string, active bool) {
	if text == "" {
		return
	}
	if n := len(w.segs); n > 0 && w.segs[n-1].active == active {
		w.segs[n-1].text += text
		return
	}
	w.segs = append(w.segs, seg{text: text, active: active})
}

// unquotedLit reads an unquoted literal: backslash escapes, glob characters and a
// leading tilde prefix. first says the literal starts the word; last, that nothing
// follows it (a tilde prefix that runs into a quoted part is not expanded).
func (w *word) unquotedLit(v string, first, last bool, ctx wordCtx) {
	i := 0
	if first {
		i = w.tildePrefix(v, 0, last, ctx)
	}
	var lit strings.Builder
	flush := func() {
		w.add(lit.String(), false)
		lit.Reset()
	}
	for ; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\':
			if i+1 < len(v) {
				i++
				if v[i] != '\n' {
					lit.WriteByte(v[i])
				}
			} else {
				lit.WriteByte('\\')
			}
		case c == '*' || c == '?':
			flush()
			w.glob = true
			w.add(string(c), true)
		case c == '(':
			// Only zsh lets an unquoted '(' into a word, as a glob group or qualifier.
			flush()
			w.glob = true
			w.add("(", true)
		case c == '[' && strings.IndexByte(v[i+1:], ']') >= 0:
			// A bracket expression. Only a plain one ([a-z], [!x]) is kept as a
			// pattern in the text; any other is written as literal text, but still
			// counts as a glob (a command name with one is unseen).
			w.glob = true
			end := i + 1 + strings.IndexByte(v[i+1:], ']')
			if plainBracket(v[i : end+1]) {
				flush()
				w.add(v[i:end+1], true)
				i = end
			} else {
				lit.WriteByte('[')
			}
		case c == ':' && ctx == ctxAssign && i+1 < len(v) && v[i+1] == '~':
			lit.WriteByte(':')
			flush()
			i = w.tildePrefix(v, i+1, last, ctx) - 1
		default:
			lit.WriteByte(c)
		}
	}
	flush()
}

// tildePrefix reads a tilde prefix starting at v[at] ('~'): the characters up to the
// first '/' (or ':' in an assignment), or the end. It returns where reading goes on.
// A prefix the shell would not expand (a quoted or odd character in it) is left to
// be read as literal text.
func (w *word) tildePrefix(v string, at int, last bool, ctx wordCtx) int {
	if at >= len(v) || v[at] != '~' {
		return at
	}
	end := at + 1
	for end < len(v) && v[end] != '/' && (v[end] != ':' || ctx != ctxAssign) {
		end++
	}
	if end == len(v) && !last {
		return at // the prefix runs on into a quoted or expanded part: no expansion
	}
	for _, c := range v[at+1 : end] {
		if !(c == '.' || c == '_' || c == '-' || c == '+' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return at
		}
	}
	w.tilde = true
	w.add(v[at:end], true)
	return end
}

// plainBracket reports a bracket expression whose set needs no quoting: [abc],
// [a-z], [!0-9].
func plainBracket(b string) bool {
	set := strings.TrimPrefix(strings.TrimPrefix(b[1:len(b)-1], "!"), "^")
	if set == "" {
		return false
	}
	for i := 0; i < len(set); i++ {
		c := set[i]
		if !(c == '-' || c == '_' || c == '.' || c == ',' || c == ':' || c == '/' || c == '+' || c == '@' || c == '%' ||
			c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// mergeLits joins adjacent unquoted literals (brace expansion splits them), so that a
// tilde prefix or an escape is read across the join.
func mergeLits(parts []syntax.WordPart) []syntax.WordPart {
	out := make([]syntax.WordPart, 0, len(parts))
	for _, p := range parts {
		l, ok := p.(*syntax.Lit)
		if ok && len(out) > 0 {
			if prev, ok := out[len(out)-1].(*syntax.Lit); ok {
				merged := *prev
				merged.Value += l.Value
				out[len(out)-1] = &merged
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// unescapeDouble removes the backslashes that escape inside double quotes: before $,
// `, ", \ and a newline (a line continuation, removed with it).
func unescapeDouble(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				i++
				b.WriteByte(v[i])
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// decodeANSIC decodes the body of a $'…' string. It reports false for an escape it
// does not read with certainty (\c, \u and \U with odd values), so such a word is not
// taken for a fixed string.
func decodeANSIC(v string) (string, bool) {
	if !strings.Contains(v, `\`) {
		return v, true
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(v) {
			b.WriteByte('\\')
			break
		}
		switch e := v[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n, j := 0, i
			for ; j < len(v) && j < i+3 && v[j] >= '0' && v[j] <= '7'; j++ {
				n = n*8 + int(v[j]-'0')
			}
			if n == 0 {
				// Bash ends the string at a NUL byte; not worth modelling.
				return "", false
			}
			b.WriteByte(byte(n))
			i = j - 1
		case 'x':
			n, j := 0, i+1
			for ; j < len(v) && j < i+3 && isHex(v[j]); j++ {
				n = n*16 + hexVal(v[j])
			}
			if j == i+1 || n == 0 {
				return "", false
			}
			b.WriteByte(byte(n))
			i = j - 1
		default:
			// \c, \u, \U and anything else: left unread.
			return "", false
		}
	}
	return b.String(), true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// snippetOf is the source text of a node, for canonical text and for reasons.
func snippetOf(src string, n syntax.Node) string {
	if n == nil {
		return ""
	}
	a, b := int(n.Pos().Offset()), int(n.End().Offset())
	if !n.Pos().IsValid() || !n.End().IsValid() || a < 0 || b > len(src) || a >= b {
		return "…"
	}
	return src[a:b]
}

// short trims a snippet for a reason: one line, at most 40 bytes.
func short(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i] + "…"
	}
	if len(s) > 40 {
		cut := 40
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
