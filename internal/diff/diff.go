// Package diff turns the file changes an agent asks to make into line-numbered views a
// person can read before approving: it computes a line diff between two texts (with
// github.com/sergi/go-diff), parses unified diffs and Codex's apply_patch format, and
// lays the lines out in blocks, folding long unchanged runs and long files so a page
// stays readable and bounded.
//
// It is pure: no HTML, no I/O. Line texts are agent input and stay raw; escaping and
// making invisible controls visible is the renderer's job.
package diff

import (
	"strings"
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Op is what happens to one line.
type Op int

// Line operations.
const (
	// Same is a line both sides share (context).
	Same Op = iota
	// Add is a line only the new text has.
	Add
	// Del is a line only the old text has.
	Del
	// Hunk starts a new fragment: a unified diff's "@@ … @@" header, an apply_patch
	// anchor, or one edit of several. Its Text is the header as shown.
	Hunk
)

// Line is one line of a diff. Old and New are its 1-based numbers on each side, 0 when
// the line is not on that side (or its position is unknown).
type Line struct {
	Op   Op
	Old  int
	New  int
	Text string
}

// Sign is the one-character marker a diff shows before a line.
func (l Line) Sign() string {
	switch l.Op {
	case Add:
		return "+"
	case Del:
		return "-"
	}
	return " "
}

// MaxInput bounds how many bytes of each side Compute diffs; a longer text is diffed
// up to a line boundary below MaxInput and the result says it was cut.
const MaxInput = 512 << 10

// computeTimeout bounds the line diff itself: past it go-diff returns a coarser (still
// correct) diff instead of searching for the smallest one.
const computeTimeout = 200 * time.Millisecond

// Compute returns the line diff of old → new, numbered from 1 on each side, and
// whether either text was longer than MaxInput (then only its head was diffed).
func Compute(old, new string) ([]Line, bool) {
	old, c1 := head(old)
	new, c2 := head(new)
	// A missing final newline is invisible in a line view: without this, "}" and
	// "}\n" would show as a removed and an added "}".
	old, new = endLine(old), endLine(new)
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = computeTimeout
	a, b, table := dmp.DiffLinesToRunes(old, new)
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(a, b, false), table)
	var out []Line
	o, n := 1, 1
	for _, d := range diffs {
		for _, text := range SplitLines(d.Text) {
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				out = append(out, Line{Op: Same, Old: o, New: n, Text: text})
				o++
				n++
			case diffmatchpatch.DiffDelete:
				out = append(out, Line{Op: Del, Old: o, Text: text})
				o++
			case diffmatchpatch.DiffInsert:
				out = append(out, Line{Op: Add, New: n, Text: text})
				n++
			}
		}
	}
	return out, c1 || c2
}

// Added is a whole new text as added lines numbered from 1 (a new file, a Write
// whose previous content is unknown), and whether it was longer than MaxInput.
func Added(text string) ([]Line, bool) {
	return whole(text, Add)
}

// Removed is a whole old text as deleted lines numbered from 1 (a deleted file).
func Removed(text string) ([]Line, bool) {
	return whole(text, Del)
}

func whole(text string, op Op) ([]Line, bool) {
	text, cut := head(text)
	lines := SplitLines(text)
	out := make([]Line, len(lines))
	for i, s := range lines {
		out[i] = Line{Op: op, Text: s}
		if op == Add {
			out[i].New = i + 1
		} else {
			out[i].Old = i + 1
		}
	}
	return out, cut
}

// SplitLines splits text into lines without their line endings; a final newline
// does not start an empty line, and an empty text has no lines.
func SplitLines(text string) []string {
	if text == "" {
		return nil
	}
	text = strings.TrimSuffix(text, "\n")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// Stat counts the added and removed lines.
func Stat(lines []Line) (added, removed int) {
	for _, l := range lines {
		switch l.Op {
		case Add:
			added++
		case Del:
			removed++
		}
	}
	return added, removed
}

// head cuts text to at most MaxInput bytes, at a line boundary when there is one.
func head(text string) (string, bool) {
	if len(text) <= MaxInput {
		return text, false
	}
	cut := text[:MaxInput]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i+1]
	}
	return cut, true
}

func endLine(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
