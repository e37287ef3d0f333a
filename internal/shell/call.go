package shell

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// call reads a simple command: its assignments, its words (brace-expanded, as the
// shell would), and what it may run in turn (`bash -c`, `eval`).
func (w *walker) call(c *syntax.CallExpr, redirs []*syntax.Redirect) {
	var assigns, assignWords []string
	for _, a := range c.Assigns {
		lit, canon := w.assign(a)
		assigns = append(assigns, lit)
		assignWords = append(assignWords, canon)
	}
	var args []word
	for i, a := range c.Args {
		where := "an argument"
		if i == 0 {
			where = "the command name"
		}
		w.scan(a, where)
		args = append(args, w.fields(a, i == 0)...)
	}
	if len(args) == 0 && len(assigns) == 0 {
		return
	}
	cmd := build(assigns, assignWords, args)
	if len(args) > 0 {
		w.checkGlobs(args, cmd.Args)
		w.checkSubscripts(cmd.Args)
		w.noteDirChange(cmd.Args)
	}
	// A wrapper goes before the commands of its script, as the shell starts it first.
	nw, nc := len(w.st.line.Wrappers), len(w.st.line.Commands)
	if w.st.unwrap && len(args) > 0 && w.runs(cmd, args, len(assigns) > 0, redirs) {
		w.st.line.Wrappers = slices.Insert(w.st.line.Wrappers, nw, cmd)
		return
	}
	w.st.line.Commands = slices.Insert(w.st.line.Commands, nc, cmd)
}

// checkGlobs makes a command name the shell only knows at run time unseen: a pathname
// expansion (`/usr/bin/r?`); and in zsh any glob, since a glob qualifier (`*(e:…:)`)
// can run code.
func (w *walker) checkGlobs(args []word, text []string) {
	if args[0].glob {
		w.st.unseen("pathname expansion in the command name " + short(text[0]))
	}
	if w.lang != syntax.LangZsh {
		return
	}
	for i, a := range args {
		if a.glob {
			w.st.unseen("pathname expansion in a zsh script " + short(text[i]))
			return
		}
	}
}

// zshGlob makes a glob in a zsh script unseen wherever it is expanded — an argument,
// an assignment's value, an array element: a glob qualifier (`*(e:…:)`) runs code, and
// only zsh lets an unquoted '(' into a word (a glob group), whose text no other shell
// reads back as the same command.
func (w *walker) zshGlob(v word, text string) {
	if v.glob && w.lang == syntax.LangZsh {
		w.st.unseen("pathname expansion in a zsh script " + short(text))
	}
}

// nameBuiltins take variable names, and evaluate an array subscript in a name as
// arithmetic, which can run a command: `printf -v 'a[$(id)]' x`. The value says which
// arguments are names: "" every argument, or the option that precedes one.
var nameBuiltins = map[string]string{
	"read": "", "unset": "", "mapfile": "", "readarray": "", "getopts": "", "declare": "",
	"typeset": "", "local": "", "export": "", "readonly": "", "printf": "-v", "wait": "-p",
	"test": "-v", "[": "-v",
}

// checkSubscripts makes a non-numeric array subscript in a variable name given to
// such a builtin unseen.
func (w *walker) checkSubscripts(args []string) {
	opt, ok := nameBuiltins[args[0]]
	if !ok {
		return
	}
	for i, a := range args[1:] {
		if opt != "" && args[i] != opt {
			continue // args[i] is the word before a
		}
		open := strings.IndexByte(a, '[')
		if open <= 0 || !isName(a[:open]) {
			continue
		}
		close := strings.IndexByte(a[open:], ']')
		if close < 0 || !allDigits(a[open+1:open+close]) {
			w.st.unseen(fmt.Sprintf("array subscript in %s %s", args[0], short(a)))
			return
		}
	}
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// noteDirChange records a cd, pushd or popd: after one, a relative redirection target
// is no longer known to be in the project.
func (w *walker) noteDirChange(args []string) {
	name := args[0]
	if (name == "builtin" || name == "command") && len(args) > 1 {
		name = args[1]
	}
	switch name {
	case "cd", "pushd", "popd":
		w.st.changedDir = true
	}
}

// assign reads one assignment: its literal text ("FOO=1") and its canonical form.
func (w *walker) assign(a *syntax.Assign) (string, string) {
	if a.Name == nil {
		// Only declaration builtins have nameless (naked) words; see decl.
		w.st.unseen("an assignment without a name")
		return "", ""
	}
	name := a.Name.Value
	if !isName(name) {
		// The parser takes `0=x` for an assignment; bash runs a command named "0=x".
		w.st.unseen("an assignment to an invalid name " + short(name))
	}
	if a.Index != nil {
		idx := snippetOf(w.src, a.Index)
		if !allDigits(idx) {
			w.st.unseen(fmt.Sprintf("array index in an assignment %s[%s]", name, short(idx)))
		}
		w.arith(a.Index)
		name += "[" + idx + "]"
	}
	op := "="
	if a.Append {
		op = "+="
	}
	if a.Naked {
		return name, name
	}
	if a.Array != nil {
		text := snippetOf(w.src, a.Array)
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				w.st.unseen("array index in an assignment " + short(text))
				w.arith(e.Index)
			}
			w.scan(e.Value, "an assignment")
			w.zshGlob(analyze(w.src, e.Value, ctxArg), name+op+text) // elements are globbed
		}
		return name + op + text, name + op + text
	}
	w.scan(a.Value, "an assignment")
	v := analyze(w.src, a.Value, ctxAssign)
	// zsh globs an assignment's value too under GLOB_ASSIGN, which a startup file it
	// reads for `zsh -c` may set.
	w.zshGlob(v, name+op+v.value())
	return name + op + v.value(), name + op + v.canonical(ctxAssign)
}

// fields brace-expands a word, as the shell does before anything else, and reads each
// resulting word. Expansion is bounded; past the bound the word is unseen and read
// unexpanded.
func (w *walker) fields(wd *syntax.Word, first bool) []word {
	ctx := ctxArg
	if first {
		ctx = ctxCmdName
	}
	cp := *wd
	if !syntax.SplitBraces(&cp) {
		return []word{analyze(w.src, wd, ctx)}
	}
	if w.lang == syntax.LangPOSIX {
		// dash leaves braces alone, bash run as sh expands them: which one sh is
		// cannot be told from here.
		w.st.unseen("brace expansion in an sh script " + short(snippetOf(w.src, wd)))
		return []word{w.unexpanded(wd)}
	}
	nodes := 0
	if n := braceCount(&cp, &nodes); n < 0 || w.st.braceWords+n > maxBraceWords {
		w.st.unseen("brace expansion too large " + short(snippetOf(w.src, wd)))
		return []word{w.unexpanded(wd)}
	}
	var out []word
	for ew, err := range expand.BracesSeq(nil, &cp) {
		if err != nil || w.st.braceWords >= maxBraceWords {
			w.st.unseen("brace expansion too large " + short(snippetOf(w.src, wd)))
			return []word{w.unexpanded(wd)}
		}
		w.st.braceWords++
		out = append(out, analyze(w.src, ew, ctx))
		ctx = ctxArg
	}
	return out
}

// unexpanded is a word whose brace expansion was not done: known only as written.
func (w *walker) unexpanded(wd *syntax.Word) word {
	return word{segs: []seg{{text: snippetOf(w.src, wd), active: true}}}
}

// maxBraceNodes bounds the brace expressions in one word (expansion recurses on each).
const maxBraceNodes = 32

// braceCount is how many words a brace-split word expands to, or -1 past
// maxBraceWords, past maxBraceNodes expressions, or for a sequence with endpoints so
// large that counting to them could overflow. It is computed before expanding, so
// that `{1..99999999}` or a word of a thousand braces costs nothing.
func braceCount(wd *syntax.Word, nodes *int) int {
	total := 1
	for _, part := range wd.Parts {
		br, ok := part.(*syntax.BraceExp)
		if !ok {
			continue
		}
		if *nodes++; *nodes > maxBraceNodes {
			return -1
		}
		n := 0
		if br.Sequence {
			n = seqCount(br)
		} else {
			for _, e := range br.Elems {
				c := braceCount(e, nodes)
				if c < 0 {
					return -1
				}
				n += c
			}
		}
		if n < 0 || n > maxBraceWords {
			return -1
		}
		if total *= max(n, 1); total > maxBraceWords {
			return -1
		}
	}
	return total
}

// seqCount is how many words a {x..y[..step]} sequence yields, or -1.
func seqCount(br *syntax.BraceExp) int {
	if len(br.Elems) < 2 {
		return -1
	}
	const limit = 1 << 20
	from, err1 := strconv.Atoi(br.Elems[0].Lit())
	to, err2 := strconv.Atoi(br.Elems[1].Lit())
	if err1 != nil || err2 != nil {
		return 256 // a character range
	}
	if from < -limit || from > limit || to < -limit || to > limit {
		return -1
	}
	step := 1
	if len(br.Elems) > 2 {
		s, err := strconv.Atoi(br.Elems[2].Lit())
		if err != nil || s < -limit || s > limit {
			return -1
		}
		if s < 0 {
			s = -s
		}
		if s != 0 {
			step = s
		}
	}
	d := to - from
	if d < 0 {
		d = -d
	}
	return d/step + 1
}

// scan walks a word for what may hide a command — substitutions run commands,
// expansions have values only known at run time — and reports each; commands inside
// substitutions are collected too, so a deny sees them.
func (w *walker) scan(wd *syntax.Word, where string) {
	if wd == nil || len(wd.Parts) == 0 {
		return
	}
	if l, ok := wd.Parts[0].(*syntax.Lit); ok && w.lang == syntax.LangZsh && len(l.Value) > 1 && l.Value[0] == '=' {
		// zsh's EQUALS: `=rm` is the path of the rm command, so `=rm -rf ~` runs rm
		// under a name no rule for rm matches.
		w.st.unseen("= expansion in a zsh script " + short(snippetOf(w.src, wd)))
	}
	for _, p := range wd.Parts {
		w.scanPart(p, where)
	}
}

func (w *walker) scanPart(part syntax.WordPart, where string) {
	switch p := part.(type) {
	case *syntax.Lit:
	case *syntax.SglQuoted:
		if p.Dollar {
			if _, ok := decodeANSIC(p.Value); !ok {
				w.st.unseen("an escape this reader does not decode in " + short(snippetOf(w.src, p)))
			}
		}
	case *syntax.DblQuoted:
		if p.Dollar {
			w.st.unseen(`locale translation $"…"`)
		}
		for _, dp := range p.Parts {
			w.scanPart(dp, where)
		}
	case *syntax.ParamExp:
		w.st.unseen("parameter expansion " + short(snippetOf(w.src, p)))
		w.nest(func() { w.param(p, where) })
	case *syntax.CmdSubst:
		if p.Backquotes {
			w.st.unseen("`…` in " + where)
		} else {
			w.st.unseen("$(…) in " + where)
		}
		w.nest(func() { w.stmts(p.Stmts) })
	case *syntax.ArithmExp:
		w.st.unseen("arithmetic expansion " + short(snippetOf(w.src, p)))
		w.nest(func() { w.arith(p.X) })
	case *syntax.ProcSubst:
		w.st.unseen("process substitution " + short(snippetOf(w.src, p)))
		w.nest(func() { w.stmts(p.Stmts) })
	case *syntax.ExtGlob:
		// Harmless in bash, but zsh reads `*(…)` as a glob qualifier, which can run code.
		w.st.unseen("extended glob " + short(snippetOf(w.src, p)))
	default:
		w.st.unseen(fmt.Sprintf("unknown word part %T", part))
	}
}

// param walks the words inside a parameter expansion (${X:-$(cmd)} runs cmd).
func (w *walker) param(p *syntax.ParamExp, where string) {
	if p.NestedParam != nil {
		w.scanPart(p.NestedParam, where)
	}
	if p.Index != nil {
		w.arith(p.Index)
	}
	if p.Slice != nil {
		w.arith(p.Slice.Offset)
		w.arith(p.Slice.Length)
	}
	if p.Repl != nil {
		w.scan(p.Repl.Orig, where)
		w.scan(p.Repl.With, where)
	}
	if p.Exp != nil {
		w.scan(p.Exp.Word, where)
	}
}

// arith walks an arithmetic expression for the words in it.
func (w *walker) arith(x syntax.ArithmExpr) {
	switch a := x.(type) {
	case nil:
	case *syntax.Word:
		w.scan(a, "an arithmetic expression")
	case *syntax.BinaryArithm:
		w.nest(func() {
			w.arith(a.X)
			w.arith(a.Y)
		})
	case *syntax.UnaryArithm:
		w.nest(func() { w.arith(a.X) })
	case *syntax.ParenArithm:
		w.nest(func() { w.arith(a.X) })
	case *syntax.FlagsArithm:
		w.nest(func() { w.arith(a.X) })
	default:
		w.st.unseen(fmt.Sprintf("unknown arithmetic %T", x))
	}
}

// decl reads a declaration builtin (export, declare, local, readonly, typeset) as a
// command of its own: `export PATH=/tmp/x` changes what later commands run.
func (w *walker) decl(d *syntax.DeclClause) {
	variant := "declare"
	if d.Variant != nil {
		variant = d.Variant.Value
	}
	args := []string{variant}
	words := []string{variant}
	for _, a := range d.Args {
		if a.Naked && a.Name == nil {
			w.scan(a.Value, "an argument")
			v := analyze(w.src, a.Value, ctxArg)
			text := v.value()
			w.zshGlob(v, text)
			if strings.HasPrefix(text, "-") || strings.HasPrefix(text, "+") {
				if variant != "export" && variant != "readonly" && strings.ContainsAny(text, "in") {
					// Integer variables evaluate what is assigned to them as arithmetic;
					// namerefs redirect later assignments.
					w.st.unseen(fmt.Sprintf("%s %s", variant, short(text)))
				}
			} else if strings.Contains(text, "=") || strings.Contains(text, "[") {
				// 'x'=4: the builtin reads an assignment the parser could not.
				w.st.unseen(fmt.Sprintf("%s of a quoted assignment %s", variant, short(text)))
			}
			args = append(args, text)
			words = append(words, v.canonical(ctxArg))
			continue
		}
		lit, canon := w.assign(a)
		args = append(args, lit)
		words = append(words, canon)
	}
	w.add(Command{Args: args, Text: strings.Join(words, " "), words: words})
}

// test reads a [[ … ]] clause as a command whose words are the expression's tokens.
func (w *walker) test(t *syntax.TestClause) {
	words := []string{"[["}
	args := []string{"[["}
	var walk func(x syntax.TestExpr)
	operand := func(x syntax.TestExpr) (string, bool) {
		wd, ok := x.(*syntax.Word)
		if !ok {
			return "", false
		}
		return analyze(w.src, wd, ctxArg).value(), true
	}
	walk = func(x syntax.TestExpr) {
		switch e := x.(type) {
		case *syntax.Word:
			w.scan(e, "a [[ test ]]")
			v := analyze(w.src, e, ctxArg)
			args = append(args, v.value())
			words = append(words, v.canonical(ctxArg))
		case *syntax.UnaryTest:
			op := e.Op.String()
			if e.Op == syntax.TsVarSet || e.Op == syntax.TsRefVar {
				if s, _ := operand(e.X); strings.Contains(s, "[") {
					w.st.unseen("array subscript in [[ " + op + " " + short(s) + " ]]")
				}
			}
			args, words = append(args, op), append(words, op)
			w.nest(func() { walk(e.X) })
		case *syntax.BinaryTest:
			switch e.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				// Operands of arithmetic comparisons are evaluated as arithmetic: a
				// variable name there is expanded recursively, subscripts included.
				for _, side := range []syntax.TestExpr{e.X, e.Y} {
					if s, ok := operand(side); !ok || !allDigits(strings.TrimPrefix(s, "-")) {
						w.st.unseen("arithmetic comparison in " + short(snippetOf(w.src, t)))
						break
					}
				}
			}
			w.nest(func() { walk(e.X) })
			op := e.Op.String()
			args, words = append(args, op), append(words, op)
			w.nest(func() { walk(e.Y) })
		case *syntax.ParenTest:
			args, words = append(args, "("), append(words, "(")
			w.nest(func() { walk(e.X) })
			args, words = append(args, ")"), append(words, ")")
		default:
			w.st.unseen(fmt.Sprintf("unknown test expression %T", x))
		}
	}
	walk(t.X)
	args, words = append(args, "]]"), append(words, "]]")
	w.add(Command{Args: args, Text: strings.Join(words, " "), words: words})
}

// baseName is a command name without its directory: /bin/bash runs bash.
func baseName(s string) string {
	if strings.Contains(s, "/") {
		return path.Base(s)
	}
	return s
}
