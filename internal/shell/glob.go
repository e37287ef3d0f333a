package shell

import (
	"fmt"
	"regexp"
	"strings"
)

// globTok is one element of a glob: a literal character, *, ?, or a class.
type globTok struct {
	kind byte   // 'l' literal, '*', '?', '['
	text string // the literal character, or the class as a regexp
}

// globRegexp translates a shell-command glob into an anchored regular expression.
// * is any run of characters (a command's text has no other command in it, so it
// may cross spaces and slashes), ? any one character, […] a class ([!…] or [^…]
// negated), \ escapes the next character. A trailing ` *` or `:*` means the words
// before it, then optionally a space and anything: `npm run test:*` matches
// `npm run test` and `npm run test -- --watch`, never `npm run testx`.
func globRegexp(glob string) (string, error) {
	toks, err := globTokens(glob)
	if err != nil {
		return "", err
	}
	tail := ""
	if n := len(toks); n >= 2 && toks[n-1].kind == '*' && toks[n-2].kind == 'l' &&
		(toks[n-2].text == " " || toks[n-2].text == ":") {
		toks = toks[:n-2]
		tail = `(?: .*)?`
	}
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for _, t := range toks {
		switch t.kind {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '[':
			b.WriteString(t.text)
		default:
			b.WriteString(regexp.QuoteMeta(t.text))
		}
	}
	b.WriteString(tail)
	b.WriteString(`$`)
	return b.String(), nil
}

// globTokens splits a glob into tokens; the error names what does not parse.
func globTokens(glob string) ([]globTok, error) {
	var toks []globTok
	rs := []rune(glob)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			toks = append(toks, globTok{kind: '*'})
		case '?':
			toks = append(toks, globTok{kind: '?'})
		case '\\':
			if i+1 >= len(rs) {
				return nil, fmt.Errorf("glob: a trailing \\ escapes nothing")
			}
			i++
			toks = append(toks, globTok{kind: 'l', text: string(rs[i])})
		case '[':
			class, end, err := globClass(rs, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, globTok{kind: '[', text: class})
			i = end
		default:
			toks = append(toks, globTok{kind: 'l', text: string(c)})
		}
	}
	return toks, nil
}

// globClass reads the class that opens at rs[at] and returns it as a regexp class
// and the index of its closing ']'. A ']' first in the class is literal, [:alpha:]
// and the like are kept, and \ escapes the next character.
func globClass(rs []rune, at int) (string, int, error) {
	var b strings.Builder
	b.WriteByte('[')
	i := at + 1
	if i < len(rs) && (rs[i] == '!' || rs[i] == '^') {
		b.WriteByte('^')
		i++
	}
	start := i
	for ; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == ']' && i > start:
			b.WriteByte(']')
			return b.String(), i, nil
		case c == '[' && i+1 < len(rs) && rs[i+1] == ':':
			j := i + 2
			for j+1 < len(rs) && !(rs[j] == ':' && rs[j+1] == ']') {
				j++
			}
			if j+1 >= len(rs) {
				return "", 0, fmt.Errorf("glob: unterminated [: class at offset %d", i)
			}
			b.WriteString(string(rs[i : j+2]))
			i = j + 1
		case c == '\\':
			if i+1 >= len(rs) {
				return "", 0, fmt.Errorf("glob: a trailing \\ escapes nothing")
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case c == '[' || c == ']' || c == '^':
			b.WriteString(`\` + string(c))
		default:
			b.WriteRune(c)
		}
	}
	return "", 0, fmt.Errorf("glob: unterminated character class starting at offset %d", at)
}
