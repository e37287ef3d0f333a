package risk

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/shell"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Rule is one line a team adds to the built-in table (the policy file's `risk:`
// list): what it matches — the words a shell command starts with, a file path
// pattern, or a tool name pattern — the level it gives and the sentence people read.
// A rule only raises a level; nothing a team writes can lower what the built-in
// table found, so a typo cannot hide a `curl … | sudo bash`.
type Rule struct {
	Name  string
	Level Level
	// Reason is the sentence shown with the match ("publishes a package").
	Reason string
	// Command: a shell command whose first words are these (`npm publish`), wherever
	// it runs in the line (after `&&`, in a pipe, under `sudo`, in `bash -c`).
	Command []string
	// Path: a file written, edited or read whose path matches this pattern (path.Match
	// syntax; a pattern without a slash matches the file's name in any directory).
	Path string
	// Tool: a tool whose name matches this pattern (path.Match syntax), such as
	// `mcp__github__delete_*`.
	Tool string
}

// Code is the reason code a rule's match carries: "policy:<name>".
func (r Rule) Code() string { return "policy:" + r.Name }

// Check reports what is wrong with r, naming the field, so the policy file is refused
// at start-up rather than matching nothing.
func (r Rule) Check() error {
	if strings.TrimSpace(r.Name) == "" {
		return errors.New("a risk rule needs a name")
	}
	if _, ok := levelOf(string(r.Level)); !ok || r.Level == Low {
		return fmt.Errorf("risk rule %q: level must be medium, high or critical", r.Name)
	}
	if strings.TrimSpace(r.Reason) == "" {
		return fmt.Errorf("risk rule %q: reason is required (people read it beside the match)", r.Name)
	}
	n := 0
	for _, set := range []bool{len(r.Command) > 0, r.Path != "", r.Tool != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("risk rule %q: give exactly one of command, path or tool", r.Name)
	}
	for _, p := range []string{r.Path, r.Tool} {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("risk rule %q: bad pattern %q: %v", r.Name, p, err)
		}
	}
	return nil
}

// Table is the built-in rating and the rules a team added. The zero Table (or nil)
// is the built-in rating alone.
type Table struct {
	rules []Rule
}

// NewTable returns the built-in rating extended by rules, which must pass Check.
func NewTable(rules ...Rule) (*Table, error) {
	for _, r := range rules {
		if err := r.Check(); err != nil {
			return nil, err
		}
	}
	return &Table{rules: rules}, nil
}

// Assess rates c by the built-in table and then the team's rules.
func (t *Table) Assess(c Call) Assessment {
	rs := builtin(c)
	if t != nil {
		for _, r := range t.rules {
			if m, ok := r.match(c); ok {
				rs = append(rs, Reason{Code: r.Code(), Text: r.Reason, Match: clip(m), level: r.Level})
			}
		}
	}
	return assessment(rs)
}

// match returns the part of c that r matched.
func (r Rule) match(c Call) (string, bool) {
	switch {
	case r.Tool != "":
		ok, _ := path.Match(r.Tool, c.Tool)
		return c.Tool, ok && c.Tool != ""
	case r.Path != "":
		p := filePath(c)
		if p == "" {
			return "", false
		}
		subject := p
		if !strings.Contains(r.Path, "/") {
			subject = path.Base(p)
		}
		ok, _ := path.Match(r.Path, subject)
		return p, ok
	case len(r.Command) > 0 && c.Kind == models.KindShell:
		cmd, _ := c.Input["command"].(string)
		line := shell.Parse(cmd, c.Cwd)
		for _, sc := range append(append([]shell.Command(nil), line.Commands...), line.Wrappers...) {
			if startsWith(sc.Args, r.Command) {
				return sc.Text, true
			}
		}
	}
	return "", false
}

// startsWith reports whether args begin with words, the program compared by its base
// name (`/usr/bin/npm publish` is `npm publish`).
func startsWith(args, words []string) bool {
	if len(args) < len(words) {
		return false
	}
	for i, w := range words {
		a := args[i]
		if i == 0 {
			a = path.Base(a)
		}
		if a != w {
			return false
		}
	}
	return true
}

// filePath is the file a write, edit or read names.
func filePath(c Call) string {
	switch c.Kind {
	case models.KindEdit, models.KindWrite, models.KindRead:
		return str(c.Input, "file_path", "path", "notebook_path")
	}
	return ""
}
