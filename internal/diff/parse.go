package diff

import (
	"regexp"
	"strconv"
	"strings"
)

// File is the change to one file as a diff shows it.
type File struct {
	// Path is the file changed; MoveTo its new path when the change renames it.
	Path   string
	MoveTo string
	// Change names the kind of change ("add", "delete", "update", "edit", "write"…).
	Change string
	Lines  []Line
	// Relative reports that line numbers count from the start of each fragment (an
	// edit's old and new strings, an apply_patch hunk), not from the top of the file:
	// the request does not say where in the file the fragment is.
	Relative bool
	// Cut reports that the request held more than these lines (see MaxInput).
	Cut bool
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// Unified parses a unified diff (as git diff or Codex's unified_diff write it) into
// files. Lines before the first "--- "/"+++ " pair belong to a file with no path (a
// bare hunk list, as Codex sends for one file). ok is false when the text holds no
// hunk header, in which case it is not a unified diff.
func Unified(text string) (files []File, ok bool) {
	text, cut := head(text)
	var cur *File
	o, n := 0, 0
	leftOld, leftNew := 0, 0 // lines the current hunk header still promises
	start := func(path string) {
		files = append(files, File{Path: path, Change: "update"})
		cur = &files[len(files)-1]
	}
	lines := SplitLines(text)
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		inHunk := leftOld > 0 || leftNew > 0
		switch {
		case !inHunk && strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			oldPath, newPath := diffPath(l[4:]), diffPath(lines[i+1][4:])
			start(newPath)
			switch {
			case oldPath == "/dev/null":
				cur.Change = "add"
			case newPath == "/dev/null":
				cur.Path, cur.Change = oldPath, "delete"
			case oldPath != newPath && oldPath != "":
				cur.Path, cur.MoveTo = oldPath, newPath
			}
			i++
		case !inHunk && hunkHeader.MatchString(l):
			m := hunkHeader.FindStringSubmatch(l)
			o, _ = strconv.Atoi(m[1])
			n, _ = strconv.Atoi(m[3])
			leftOld, leftNew = count(m[2]), count(m[4])
			if leftOld == 0 && o == 0 {
				o = 1 // "-0,0": nothing on the old side
			}
			if leftNew == 0 && n == 0 {
				n = 1
			}
			if cur == nil {
				start("")
			}
			ok = true
			cur.Lines = append(cur.Lines, Line{Op: Hunk, Text: l})
		case cur == nil || !inHunk:
			// Text between files (git's "diff --git", "index …" lines) or around the diff.
			if strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "index ") {
				continue
			}
			if cur != nil && strings.HasPrefix(l, `\ `) {
				continue // "\ No newline at end of file"
			}
			if cur == nil {
				start("")
			}
			cur.Lines = append(cur.Lines, Line{Op: Same, Text: l})
		default:
			op, body, marker := bodyLine(l)
			if marker {
				continue // "\\ No newline at end of file"
			}
			switch op {
			case Same:
				cur.Lines = append(cur.Lines, Line{Op: Same, Old: o, New: n, Text: body})
				o, n = o+1, n+1
				leftOld, leftNew = leftOld-1, leftNew-1
			case Add:
				cur.Lines = append(cur.Lines, Line{Op: Add, New: n, Text: body})
				n++
				leftNew--
			case Del:
				cur.Lines = append(cur.Lines, Line{Op: Del, Old: o, Text: body})
				o++
				leftOld--
			}
			leftOld, leftNew = max(leftOld, 0), max(leftNew, 0)
		}
	}
	if len(files) > 0 {
		files[len(files)-1].Cut = cut
	}
	return files, ok
}

// count reads a hunk header's optional line count (absent means 1).
func count(s string) int {
	if s == "" {
		return 1
	}
	n, _ := strconv.Atoi(s)
	return n
}

// diffPath strips a "---"/"+++" line's a/ or b/ prefix and trailing timestamp.
func diffPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		return s[2:]
	}
	return s
}

// Patch markers of Codex's apply_patch format.
const (
	patchBegin  = "*** Begin Patch"
	patchEnd    = "*** End Patch"
	patchAdd    = "*** Add File: "
	patchDelete = "*** Delete File: "
	patchUpdate = "*** Update File: "
	patchMove   = "*** Move to: "
	patchEOF    = "*** End of File"
)

// IsPatch reports whether text holds an apply_patch envelope.
func IsPatch(text string) bool { return strings.Contains(text, patchBegin) }

// Patch parses Codex's apply_patch format ("*** Begin Patch" … "*** End Patch") into
// files. Added files are numbered from 1; an update's hunks carry no positions, so
// each is numbered from 1 on both sides (Relative). Text outside the envelope (a shell
// heredoc around it) is ignored. ok is false when there is no envelope.
func Patch(text string) (files []File, ok bool) {
	text, cut := head(text)
	start := strings.Index(text, patchBegin)
	if start < 0 {
		return nil, false
	}
	var cur *File
	o, n := 1, 1
	for _, l := range SplitLines(text[start+len(patchBegin):]) {
		switch {
		case strings.TrimSpace(l) == patchEnd:
			return finish(files, cut), true
		case strings.HasPrefix(l, patchAdd):
			files = append(files, File{Path: strings.TrimSpace(l[len(patchAdd):]), Change: "add"})
			cur, o, n = &files[len(files)-1], 1, 1
		case strings.HasPrefix(l, patchDelete):
			files = append(files, File{Path: strings.TrimSpace(l[len(patchDelete):]), Change: "delete"})
			cur = &files[len(files)-1]
		case strings.HasPrefix(l, patchUpdate):
			files = append(files, File{Path: strings.TrimSpace(l[len(patchUpdate):]), Change: "update", Relative: true})
			cur, o, n = &files[len(files)-1], 1, 1
		case cur == nil:
			continue
		case strings.HasPrefix(l, patchMove):
			cur.MoveTo = strings.TrimSpace(l[len(patchMove):])
		case strings.TrimSpace(l) == patchEOF:
			continue
		case strings.HasPrefix(l, "@@"):
			cur.Lines = append(cur.Lines, Line{Op: Hunk, Text: l})
			o, n = 1, 1
		case cur.Change == "add":
			cur.Lines = append(cur.Lines, Line{Op: Add, New: n, Text: strings.TrimPrefix(l, "+")})
			n++
		case cur.Change == "update":
			op, body, _ := bodyLine(l)
			switch op {
			case Same:
				cur.Lines = append(cur.Lines, Line{Op: Same, Old: o, New: n, Text: body})
				o, n = o+1, n+1
			case Add:
				cur.Lines = append(cur.Lines, Line{Op: Add, New: n, Text: body})
				n++
			case Del:
				cur.Lines = append(cur.Lines, Line{Op: Del, Old: o, Text: body})
				o++
			}
		}
	}
	return finish(files, cut), true
}

func finish(files []File, cut bool) []File {
	if cut && len(files) > 0 {
		files[len(files)-1].Cut = true
	}
	return files
}

// bodyLine splits a hunk body line into its operation (' ' same, '+' added, '-'
// removed) and text; marker reports a "\\ No newline at end of file" line.
func bodyLine(l string) (op Op, body string, marker bool) {
	if l == "" {
		return Same, "", false
	}
	switch l[0] {
	case '+':
		return Add, l[1:], false
	case '-':
		return Del, l[1:], false
	}
	return Same, l[1:], l[0] == '\\'
}
