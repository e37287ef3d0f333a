package prompt

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds on what a page renders of one request. A hook body is capped at 1 MiB, but
// even 60 KB of nesting used to render a 200 MB page (indentation grows with depth, so
// pretty-printing is quadratic): everything shown is now cut to these sizes, in time
// linear in the input, and the full request stays one click away (the raw view).
const (
	// MaxDepth is how deep nested tool input is shown; deeper values are summarised.
	MaxDepth = 8
	// MaxRendered is the most bytes of one request's details a page shows, counted
	// as escaped HTML.
	MaxRendered = 64 << 10
	// MaxString is the longest single string value shown inside tool input, in bytes.
	MaxString = 8 << 10
	// MaxText is the longest free text (a command, a plan, a detail line) shown, in bytes.
	MaxText = 32 << 10
	// MaxMessage is the longest one-line message shown, in bytes.
	MaxMessage = 2 << 10
)

// Cut returns s cut so that, escaped for HTML, it takes at most max bytes (quotes and
// angle brackets grow fivefold and would otherwise blow the page budget), on a rune
// boundary, with a marker saying how much was left out; and whether it cut.
func Cut(s string, max int) (string, bool) {
	n := htmlPrefix(s, max)
	if n == len(s) {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("… [%d more bytes cut; see the raw request]", len(s)-n), true
}

// htmlLen is the length of s once HTML-escaped (templ escapes & ' < > " as entities).
func htmlLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		n += escapeGrowth(s[i])
	}
	return n
}

// htmlPrefix is the length of the longest prefix of s whose escaped form fits in max.
func htmlPrefix(s string, max int) int {
	if len(s)*5 <= max {
		return len(s)
	}
	used := 0
	for i := 0; i < len(s); i++ {
		used += 1 + escapeGrowth(s[i])
		if used > max {
			return i
		}
	}
	return len(s)
}

func escapeGrowth(b byte) int {
	switch b {
	case '"', '\'', '&':
		return 4 // &#34; &#39; &amp;
	case '<', '>':
		return 3 // &lt; &gt;
	}
	return 0
}

// Visible makes the invisible characters of untrusted text visible. Bidirectional
// controls can make text display in another order than it runs (a command that reads
// "rm -rf ./build" can run something else) and zero-width characters can split or
// hide words, so each is replaced by a marker such as ⟨U+202E⟩ that a person sees.
// Ordinary text is returned as is, without allocating.
func Visible(s string) string {
	i := strings.IndexFunc(s, isHiddenControl)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if isHiddenControl(r) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isHiddenControl: the Unicode bidi controls (embeddings, overrides, isolates, marks),
// zero-width spaces and joiners that break words, and the byte-order mark. Zero-width
// (non-)joiners are left alone: emoji and several scripts need them.
func isHiddenControl(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F: // Arabic letter mark, LRM, RLM
		return true
	case r >= 0x202A && r <= 0x202E: // LRE, RLE, PDF, LRO, RLO
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	case r == 0x200B, r == 0x2060, r == 0xFEFF: // zero-width space, word joiner, BOM
		return true
	}
	return false
}
