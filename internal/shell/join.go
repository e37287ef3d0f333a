package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Join renders an argv (a program and its arguments, run without a shell) as the one
// command line a shell would read as that argv: each word quoted when it needs it. Joining
// with bare spaces would let ["bash", "-c", "git status; rm -rf ~"] read as two
// commands and ["sh", "-c", "rm -rf ~"] as a script of just "rm". ok is false when a
// word cannot be written as shell text at all (a NUL byte).
func Join(argv []string) (line string, ok bool) {
	words := make([]string, len(argv))
	for i, a := range argv {
		// A first word with "=" would read as an assignment.
		if a != "" && !strings.ContainsFunc(a, needsQuoting) && (i > 0 || !strings.Contains(a, "=")) {
			words[i] = a
			continue
		}
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			return "", false
		}
		words[i] = q
	}
	return strings.Join(words, " "), true
}

// needsQuoting reports whether r is anything but a character that means itself in
// every position of an unquoted shell word.
func needsQuoting(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("-_./:,+@%=", r)
}
