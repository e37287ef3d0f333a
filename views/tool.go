package views

import "github.com/gatehouse-dev/gatehouse/internal/diff"

// lineClass is a diff line's CSS class; a fixed name, never agent text.
func lineClass(l diff.Line) string {
	switch l.Op {
	case diff.Add:
		return "d-add"
	case diff.Del:
		return "d-del"
	}
	return "d-same"
}

// lineNo is a diff line number, blank when the line is not on that side.
func lineNo(n int) string {
	if n <= 0 {
		return ""
	}
	return itoa(n)
}
