package shell

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// devOK are the device files an output redirection may name wherever the project is.
var devOK = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true}

// protected are directories inside a project that a shell redirection must not write
// unseen: a git hook or an agent's settings file runs or grants later what no person saw.
var protected = map[string]bool{".git": true, ".claude": true}

// cleanDir is the project directory, cleaned; "" when it is not absolute.
func cleanDir(dir string) string {
	if !strings.HasPrefix(dir, "/") {
		return ""
	}
	return path.Clean(dir)
}

// redirect checks one redirection: words in it are scanned like any other, and an
// output to a file must be a literal path inside the project.
func (w *walker) redirect(r *syntax.Redirect) {
	w.scan(r.Word, "a redirection")
	if r.Hdoc != nil {
		w.scan(r.Hdoc, "a here-document")
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob,
		syntax.AppClob, syntax.RdrAllClob, syntax.AppAllClob, syntax.RdrInOut:
		w.output(r.Word)
	case syntax.DplOut, syntax.DplIn:
		// 2>&1, >&-, 3<&0, 2>&1- duplicate or close descriptors; `>& file` writes a file.
		if v := analyze(w.src, r.Word, ctxArg); v.static() && isFD(v.value()) {
			return
		}
		w.output(r.Word)
	case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		// Input only: reading a file runs nothing.
	default:
		w.st.unseen(fmt.Sprintf("unknown redirection %s", r.Op))
	}
}

// isFD reports a descriptor duplication target: digits, "-", or digits then "-".
func isFD(s string) bool {
	s = strings.TrimSuffix(s, "-")
	return s == "" || allDigits(s)
}

// output checks the target of an output redirection.
func (w *walker) output(wd *syntax.Word) {
	if wd == nil {
		return
	}
	v := analyze(w.src, wd, ctxArg)
	target := v.value()
	switch {
	case v.tilde:
		w.st.unseen(fmt.Sprintf("redirection to %s outside the project", short(target)))
		return
	case !v.static():
		w.st.unseen("a non-literal redirection target " + short(snippetOf(w.src, wd)))
		return
	}
	abs := target
	if !path.IsAbs(target) {
		if w.st.dir == "" {
			w.st.unseen(fmt.Sprintf("redirection to %s with no project directory", short(target)))
			return
		}
		abs = path.Join(w.st.dir, target)
	}
	abs = path.Clean(abs)
	if devOK[abs] {
		return
	}
	dir := w.st.dir
	inside := dir != "" && (abs == dir || dir == "/" || strings.HasPrefix(abs, dir+"/"))
	if !inside || abs == "/dev" || strings.HasPrefix(abs, "/dev/") {
		w.st.unseen(fmt.Sprintf("redirection to %s outside the project", short(target)))
		return
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(abs, dir), "/")
	for _, part := range strings.Split(rel, "/") {
		if protected[part] {
			w.st.unseen(fmt.Sprintf("redirection to %s inside %s", short(target), part))
			return
		}
	}
	if !path.IsAbs(target) {
		w.st.relative = append(w.st.relative, target)
	}
}
