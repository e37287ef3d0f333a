package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shells are the command names whose -c script is read as the commands it runs, and
// the language each is parsed in.
var shells = map[string]syntax.LangVariant{
	"bash": syntax.LangBash, "sh": syntax.LangPOSIX, "dash": syntax.LangPOSIX,
	"ash": syntax.LangPOSIX, "zsh": syntax.LangZsh, "ksh": syntax.LangMirBSDKorn,
	"mksh": syntax.LangMirBSDKorn,
}

// runners run the command given in their arguments (`sudo bash -c …`). The script they
// pass to a shell is read for what it runs, but the runner stays a command of its own:
// it changes who or how the inner command runs, so a rule must allow it as written.
var runners = map[string]bool{
	"env": true, "sudo": true, "doas": true, "exec": true, "command": true, "builtin": true,
	"nohup": true, "nice": true, "time": true, "timeout": true, "stdbuf": true,
	"setsid": true, "xargs": true, "ionice": true, "chrt": true, "taskset": true,
	"unbuffer": true, "su": true, "runuser": true, "flock": true, "watch": true,
	// zsh's precommand modifiers: `noglob rm -rf ~` runs rm.
	"noglob": true, "nocorrect": true, "-": true,
}

// IsRunner reports whether a command named name runs the command in its arguments
// (sudo, env, nohup, timeout, xargs, …): a deny rule matches through it, and the risk
// rating reads through it.
func IsRunner(name string) bool { return runners[baseName(name)] }

// runs reads what a command runs in turn. It reports true when the command is a
// wrapper (`bash -c 'x'`, `eval 'x'`) that the commands of its script replace; a
// wrapper with leading assignments (BASH_ENV=… bash -c) or options this reader does
// not know stays a command of its own as well.
func (w *walker) runs(cmd Command, args []word, hasAssigns bool, redirs []*syntax.Redirect) bool {
	if !args[0].static() {
		return false
	}
	name := baseName(cmd.Args[0])
	switch {
	case name == "eval" && len(args) > 1:
		w.eval(args[1:])
		return !hasAssigns
	case shells[name] != 0:
		switch w.shellScript(name, args[1:], redirs) {
		case wrapperReplaced:
			return !hasAssigns
		}
		return false
	case name == "trap":
		w.trap(args[1:])
	case runners[name]:
		// su, runuser and flock run their -c command with a shell.
		if name == "su" || name == "runuser" || name == "flock" {
			for i := 1; i+1 < len(args); i++ {
				if v := args[i].value(); args[i].static() && (v == "-c" || v == "--command") {
					w.shellScript("sh", args[i:], nil)
					return false
				}
			}
		}
		// Find the shell or eval the runner starts, and read its script.
		for i := 1; i < len(args); i++ {
			if !args[i].static() {
				continue
			}
			inner := baseName(args[i].value())
			if inner == "eval" && i+1 < len(args) {
				w.eval(args[i+1:])
				break
			}
			if shells[inner] != 0 {
				w.shellScript(inner, args[i+1:], nil)
				break
			}
		}
	}
	return false
}

// wrapperKind is what shellScript found.
type wrapperKind int

const (
	notWrapper      wrapperKind = iota // no script read (a script file, stdin)
	wrapperReplaced                    // a -c script read; its commands stand for it
	wrapperKept                        // a script read, but the shell's options matter too
)

// shellScript reads `sh [options] -c SCRIPT [name [args…]]`, and a here-document or
// here-string fed to a shell with no script operand.
func (w *walker) shellScript(name string, args []word, redirs []*syntax.Redirect) wrapperKind {
	lang := shells[name]
	cflag, sflag, safe := false, false, true
	i := 0
options:
	for ; i < len(args); i++ {
		if !args[i].static() {
			break
		}
		a := args[i].value()
		switch {
		case a == "--" || a == "-":
			i++
			break options
		case strings.HasPrefix(a, "--"):
			switch a {
			case "--login", "--norc", "--noprofile", "--posix", "--verbose", "--noediting":
			case "--rcfile", "--init-file":
				safe = false
				i++
			default:
				safe = false
			}
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			for _, ch := range a[1:] {
				switch ch {
				case 'c':
					cflag = true
				case 's':
					sflag, safe = true, false // the script from stdin, operands as $1…
				case 'o', 'O':
					i++ // the option's name
				case 'e', 'u', 'x', 'v', 'l', 'f', 'n':
					// Exit on error, unset variables, tracing, login profile, no glob,
					// no execution: none changes what the script runs.
				default:
					safe = false
				}
			}
		default:
			break options
		}
	}
	if !cflag {
		if i < len(args) && !sflag {
			return notWrapper // a script file: its text is not here
		}
		for _, r := range redirs {
			if r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc {
				w.stdinScript(name, lang, r)
			}
		}
		return notWrapper
	}
	if i >= len(args) {
		return notWrapper // `bash -c` with no script fails; it runs nothing
	}
	script := args[i]
	if !script.static() {
		w.st.unseen(name + " -c with a non-literal script")
		return wrapperKept
	}
	w.inner(script.value(), lang, name+" -c")
	if !safe {
		return wrapperKept
	}
	return wrapperReplaced
}

// stdinScript reads a literal here-document or here-string given to a shell as the
// script it runs.
func (w *walker) stdinScript(name string, lang syntax.LangVariant, r *syntax.Redirect) {
	body := r.Hdoc
	if r.Op == syntax.WordHdoc {
		body = r.Word
	}
	if body == nil {
		return
	}
	v := analyze(w.src, body, ctxArg)
	if r.Op != syntax.WordHdoc {
		// A here-document body is not subject to globbing or tilde expansion.
		v.glob, v.tilde = false, false
	}
	if !v.literal || v.glob || v.tilde {
		w.st.unseen(name + " reading a non-literal script")
		return
	}
	w.inner(v.value(), lang, name+" <<")
}

// eval reads `eval ARGS…`: the arguments joined by spaces are parsed again.
func (w *walker) eval(args []word) {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		if !a.static() {
			w.st.unseen("eval with a non-literal script")
			return
		}
		parts = append(parts, a.value())
	}
	w.inner(strings.Join(parts, " "), w.lang, "eval")
}

// trap reads the command string of `trap 'cmd' SIGNAL…`, which runs later in this
// shell.
func (w *walker) trap(args []word) {
	for i, a := range args {
		if !a.static() {
			w.st.unseen("trap with a non-literal command")
			return
		}
		v := a.value()
		if v == "--" {
			continue
		}
		if strings.HasPrefix(v, "-") && i == 0 {
			if v == "-p" || v == "-l" {
				return
			}
			continue
		}
		if len(args) > i+1 && v != "" && v != "-" {
			w.inner(v, w.lang, "trap")
		}
		return
	}
}

// inner parses a script given as a string and walks it as part of this line.
func (w *walker) inner(script string, lang syntax.LangVariant, shell string) {
	if w.level+1 >= maxScripts {
		w.st.unseen("too deeply nested")
		return
	}
	c := &walker{st: w.st, lang: lang, level: w.level + 1, depth: w.depth}
	c.script(script, shell)
}
