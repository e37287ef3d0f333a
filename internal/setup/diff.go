package setup

import (
	"fmt"
	"strings"
)

// Diff shows what changed between old and new as one unified hunk (the changed lines
// with up to three lines of context), so the person sees what setup wrote.
func Diff(path string, old, new []byte) string {
	a, b := lines(old), lines(new)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	if pre == len(a) && pre == len(b) {
		return ""
	}
	from, ctxEnd := max(pre-3, 0), min(suf, 3)
	var s strings.Builder
	fmt.Fprintf(&s, "--- %s\n+++ %s\n", path, path)
	fmt.Fprintf(&s, "@@ -%d,%d +%d,%d @@\n", from+1, len(a)-suf+ctxEnd-from, from+1, len(b)-suf+ctxEnd-from)
	for _, l := range a[from:pre] {
		s.WriteString(" " + l + "\n")
	}
	for _, l := range a[pre : len(a)-suf] {
		s.WriteString("-" + l + "\n")
	}
	for _, l := range b[pre : len(b)-suf] {
		s.WriteString("+" + l + "\n")
	}
	for _, l := range a[len(a)-suf : len(a)-suf+ctxEnd] {
		s.WriteString(" " + l + "\n")
	}
	return s.String()
}

func lines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
