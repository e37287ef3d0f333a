package shell

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Limits that keep static reading bounded whatever the input.
const (
	// MaxSource is the longest command line read in full; a longer one is unseen (and
	// only its first MaxSource bytes are read, so a deny still sees what it can).
	MaxSource = 64 << 10
	// maxNesting bounds brackets and compound commands inside one another: the parser
	// slows down sharply on deep nesting, and no real command line needs more.
	maxNesting = 100
	// maxScripts bounds `bash -c` and `eval` scripts inside one another.
	maxScripts = 4
	// maxBraceWords bounds the words brace expansion may produce in one line.
	maxBraceWords = 1024
	// maxUnseen bounds the reasons kept (the first ones say enough).
	maxUnseen = 32
)

// Command is one simple command a shell would run.
type Command struct {
	// Assigns are the leading assignments as literal text, "FOO=1".
	Assigns []string
	// Args are the words after quote removal (an expansion is left as written).
	Args []string
	// Text is the canonical text: assigns then args, space-joined, each word
	// shell-quoted only when needed, so `echo 'a; b'` stays one word and the text
	// cannot be read as more than one command.
	Text string
	// words are the canonical words Text joins, which prefix patterns compare.
	words []string
}

// Line is a command line as a shell sees it.
type Line struct {
	// Source is the text that was read.
	Source string
	// Commands are every simple command the shell would run, in source order: from
	// lists, pipes, subshells, blocks, function bodies, $(…), backticks, <(…), and from
	// the literal scripts of `bash -c`, `sh -c`, `zsh -c`, `dash -c` and `eval`.
	Commands []Command
	// Wrappers are the `bash -c …` and `eval …` commands themselves, replaced in
	// Commands by what they run.
	Wrappers []Command
	// Unseen names, briefly, each thing that cannot be read statically and may hide a
	// command: an expansion, a redirection out of the project, input that does not
	// parse. A rule never allows a line with anything unseen.
	Unseen []string
}

// Parse reads src as bash would, without running or expanding anything. dir is the
// project directory (the agent's working directory, absolute, or ""): an output
// redirection to a literal file outside it is unseen; /dev/null, /dev/stdout,
// /dev/stderr and descriptor duplications (2>&1) are fine; with dir "" every other
// output redirection to a file is unseen.
func Parse(src, dir string) *Line {
	return remembered(src, dir, true)
}

// parse is Parse; unwrap false leaves `bash -c` and `eval` as plain commands, which is
// how a pattern's own text is read.
func parse(src, dir string, unwrap bool) *Line {
	st := &state{line: &Line{Source: src}, dir: cleanDir(dir), unwrap: unwrap, seen: map[string]bool{}}
	text := src
	if len(text) > MaxSource {
		st.unseen(fmt.Sprintf("over-long input (%d bytes, more than %d)", len(src), MaxSource))
		text = text[:MaxSource]
	}
	if strings.Contains(text, "\x00") {
		// Bash drops NUL bytes from what it reads, so "r\x00m" runs rm: read it so.
		st.unseen("a NUL byte in the command")
		text = strings.ReplaceAll(text, "\x00", "")
	}
	w := &walker{st: st, lang: syntax.LangBash}
	w.script(text, "")
	st.finish()
	return st.line
}

// state is what one Parse collects, shared by the walkers of nested scripts.
type state struct {
	line       *Line
	dir        string
	unwrap     bool
	seen       map[string]bool
	braceWords int
	// changedDir: a cd, pushd or popd runs somewhere in the line, so a relative
	// redirection target may not be where it reads.
	changedDir bool
	relative   []string // relative redirection targets judged inside the project
}

func (st *state) unseen(reason string) {
	if st.seen[reason] {
		return
	}
	st.seen[reason] = true
	switch n := len(st.line.Unseen); {
	case n < maxUnseen:
		st.line.Unseen = append(st.line.Unseen, reason)
	case n == maxUnseen:
		st.line.Unseen = append(st.line.Unseen, "more")
	}
}

func (st *state) finish() {
	if st.changedDir {
		for _, t := range st.relative {
			st.unseen(fmt.Sprintf("redirection to %s after a change of directory", short(t)))
		}
	}
}

// walker reads one parsed script: its source (for snippets), its language, and how
// deep it stands.
type walker struct {
	st    *state
	src   string
	lang  syntax.LangVariant
	level int // scripts this one is nested in (bash -c, eval)
	depth int // compound commands and substitutions this node is nested in
}

// script parses src and walks it; shell names the `-c` that gave it ("" at the top).
func (w *walker) script(src, shell string) {
	if strings.Contains(src, "\r") {
		// Bash reads a carriage return as part of a word; the parser takes it for a
		// space, and a backslash before CR LF for a line continuation, which would join
		// the next line's command to this one. Keep the backslash escaping the CR alone.
		w.st.unseen("a carriage return in the command")
		src = strings.ReplaceAll(src, "\\\r\n", "\\\r\r\n")
	}
	if tooDeep(src) {
		w.st.unseen("too deeply nested")
		return
	}
	f, err := parseComments(src, w.lang)
	if err != nil {
		if shell == "" {
			w.st.unseen("cannot parse: " + err.Error())
		} else {
			w.st.unseen(fmt.Sprintf("cannot parse the %s script: %s", shell, err))
		}
	}
	if f == nil {
		return
	}
	c := &walker{st: w.st, src: src, lang: w.lang, level: w.level, depth: w.depth}
	c.stmts(f.Stmts)
}

// maxCommentPasses bounds the re-parses that fix comments ending in a backslash.
const maxCommentPasses = 8

// parseComments parses src as bash reads its comments. A comment runs to the end of
// its line, a backslash in it included; the parser instead takes a backslash-newline
// inside a comment for a line continuation, so `echo # x \` then `rm -rf ~` on the
// next line would read as one echo. Each such backslash is replaced by a space (it
// means nothing in a comment) and src parsed again.
func parseComments(src string, lang syntax.LangVariant) (*syntax.File, error) {
	for pass := 0; ; pass++ {
		f, err := syntax.NewParser(syntax.Variant(lang), syntax.KeepComments(true)).Parse(strings.NewReader(src), "")
		if f == nil {
			return f, err
		}
		b := []byte(src)
		fixed := false
		syntax.Walk(f, func(n syntax.Node) bool {
			c, ok := n.(*syntax.Comment)
			if !ok {
				return true
			}
			// The parser ends such a comment at the continuation, which it keeps in
			// the text as backslash-newline.
			if at := int(c.Hash.Offset()) + 1 + len(c.Text) - 2; strings.HasSuffix(c.Text, "\\\n") &&
				at >= 0 && at+1 < len(b) && b[at] == '\\' && b[at+1] == '\n' {
				b[at] = ' '
				fixed = true
			}
			return true
		})
		if !fixed {
			return f, err
		}
		if pass == maxCommentPasses {
			return f, errors.New("too many comments ending in a backslash")
		}
		src = string(b)
	}
}

// tooDeep reports parentheses and braces nested deeper than maxNesting, counted by a
// rough scan that knows quotes but does not parse, so that pathological input is
// refused before the parser (which slows down sharply on deep nesting) sees it.
func tooDeep(src string) bool {
	type open struct {
		quoted bool // inside double quotes
		closer byte
	}
	stack := []open{{}}
	for i := 0; i < len(src); i++ {
		top := stack[len(stack)-1]
		c := src[i]
		switch {
		case c == '\\':
			i++
		case top.quoted && c == '"':
			stack = stack[:len(stack)-1]
		case top.quoted && c == '$' && i+1 < len(src) && (src[i+1] == '(' || src[i+1] == '{'):
			i++
			stack = append(stack, open{closer: map[byte]byte{'(': ')', '{': '}'}[src[i]]})
		case top.quoted:
		case c == '\'':
			if j := strings.IndexByte(src[i+1:], '\''); j >= 0 {
				i += j + 1
			} else {
				i = len(src)
			}
		case c == '"':
			stack = append(stack, open{quoted: true, closer: '"'})
		case c == '(':
			stack = append(stack, open{closer: ')'})
		case c == '{':
			stack = append(stack, open{closer: '}'})
		case (c == ')' || c == '}') && top.closer == c && len(stack) > 1:
			stack = stack[:len(stack)-1]
		}
		if len(stack) > maxNesting {
			return true
		}
	}
	return false
}

// nest runs fn one level deeper, or reports the line too deep.
func (w *walker) nest(fn func()) {
	if w.depth >= maxNesting {
		w.st.unseen("too deeply nested")
		return
	}
	w.depth++
	fn()
	w.depth--
}

func (w *walker) stmts(list []*syntax.Stmt) {
	for _, s := range list {
		w.stmt(s)
	}
}

func (w *walker) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	for _, r := range s.Redirs {
		w.redirect(r)
	}
	w.command(s.Cmd, s.Redirs)
}

// command walks one command node. Every node kind the parser can produce is named
// here; anything else is unseen rather than skipped.
func (w *walker) command(cmd syntax.Command, redirs []*syntax.Redirect) {
	switch c := cmd.(type) {
	case nil:
		// A statement of redirections only (`> file`): they were checked.
	case *syntax.CallExpr:
		w.call(c, redirs)
	case *syntax.BinaryCmd:
		// Lists and pipes are not nesting: a long `a && b && …` is still flat.
		w.stmt(c.X)
		w.stmt(c.Y)
	case *syntax.Block:
		w.nest(func() { w.stmts(c.Stmts) })
	case *syntax.Subshell:
		w.nest(func() { w.stmts(c.Stmts) })
	case *syntax.IfClause:
		w.nest(func() {
			for ic := c; ic != nil; ic = ic.Else {
				w.stmts(ic.Cond)
				w.stmts(ic.Then)
			}
		})
	case *syntax.WhileClause:
		w.nest(func() {
			w.stmts(c.Cond)
			w.stmts(c.Do)
		})
	case *syntax.ForClause:
		w.nest(func() {
			switch l := c.Loop.(type) {
			case *syntax.WordIter:
				for _, it := range l.Items {
					w.scan(it, "a for list")
					w.zshGlob(analyze(w.src, it, ctxArg), snippetOf(w.src, it)) // its words are globbed
				}
			case *syntax.CStyleLoop:
				w.st.unseen("arithmetic for loop " + short(snippetOf(w.src, l)))
				w.arith(l.Init)
				w.arith(l.Cond)
				w.arith(l.Post)
			default:
				w.st.unseen(fmt.Sprintf("unknown loop %T", l))
			}
			w.stmts(c.Do)
		})
	case *syntax.CaseClause:
		w.nest(func() {
			w.scan(c.Word, "a case word")
			for _, it := range c.Items {
				for _, p := range it.Patterns {
					w.scan(p, "a case pattern")
				}
				w.stmts(it.Stmts)
			}
		})
	case *syntax.FuncDecl:
		// A function body runs when the function is called, possibly in this line.
		w.nest(func() { w.stmt(c.Body) })
	case *syntax.TimeClause:
		w.stmt(c.Stmt)
	case *syntax.CoprocClause:
		w.scan(c.Name, "a coproc name")
		w.nest(func() { w.stmt(c.Stmt) })
	case *syntax.DeclClause:
		w.decl(c)
	case *syntax.TestClause:
		w.test(c)
	case *syntax.ArithmCmd:
		w.st.unseen("arithmetic command " + short(snippetOf(w.src, c)))
		w.arith(c.X)
		w.add(rawCommand(snippetOf(w.src, c)))
	case *syntax.LetClause:
		w.st.unseen("let arithmetic " + short(snippetOf(w.src, c)))
		args := []string{"let"}
		for _, x := range c.Exprs {
			w.arith(x)
			args = append(args, snippetOf(w.src, x))
		}
		w.add(Command{Args: args, Text: strings.Join(args, " "), words: args})
	default:
		w.st.unseen(fmt.Sprintf("unknown shell construct %T", cmd))
	}
}

// rawCommand is a command known only by its source text.
func rawCommand(text string) Command {
	return Command{Args: []string{text}, Text: text, words: []string{text}}
}

// add appends a command to the line.
func (w *walker) add(c Command) {
	w.st.line.Commands = append(w.st.line.Commands, c)
}

// build makes a Command from assignment and argument words.
func build(assigns []string, assignWords []string, args []word) Command {
	c := Command{Assigns: assigns}
	c.words = append(c.words, assignWords...)
	for i, a := range args {
		c.Args = append(c.Args, a.value())
		ctx := ctxArg
		if i == 0 {
			ctx = ctxCmdName
		}
		c.words = append(c.words, a.canonical(ctx))
	}
	c.Text = strings.Join(c.words, " ")
	return c
}
