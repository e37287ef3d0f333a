package prompt

import (
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/models"
)

// Headline is the approval page's heading in plain words: who asks, what they want
// to do, and the thing itself ("Claude Code wants to run" + `curl … | sudo bash`).
// It is worded by the tool's kind, never by a vendor's tool name, so a new agent's
// tools read the same as Claude Code's.
type Headline struct {
	// Lead is the sentence before the target ("Claude Code wants to edit").
	Lead string
	// Target is the command, path, URL or tool, shown as code; empty when the
	// sentence is whole ("Claude Code asks you 2 questions").
	Target string
}

// MaxTarget is the most characters of a target the heading shows; the page below
// shows the whole thing.
const MaxTarget = 80

// Headline words the prompt's heading. ok is false for prompts that are not a tool
// call (an MCP form or URL request), whose own message is their heading.
func (p *Prompt) Headline() (h Headline, ok bool) {
	who := p.Vendor
	if who == "" {
		who = "The agent"
	}
	t := p.Tool
	if t == nil {
		t = &Tool{}
	}
	switch {
	case p.Kind == KindQuestion || p.ToolKind == models.KindQuestion:
		n := len(p.Questions)
		if n == 0 {
			n = len(t.Questions)
		}
		if n == 1 {
			return Headline{Lead: who + " asks you a question"}, true
		}
		return Headline{Lead: who + " asks you " + strconv.Itoa(n) + " questions"}, true
	case p.Kind == KindPlan || p.ToolKind == models.KindPlan:
		return Headline{Lead: who + " has a plan for you to review"}, true
	case p.Kind == KindForm || p.Kind == KindURL:
		return Headline{}, false
	}
	switch p.ToolKind {
	case models.KindShell:
		cmd := t.Command
		for _, d := range p.Details {
			if cmd == "" && d.TestID == "command" {
				cmd = d.Value
			}
		}
		if cmd == "" {
			return Headline{Lead: who + " wants to run a command"}, true
		}
		return Headline{Lead: who + " wants to run", Target: short(cmd)}, true
	case models.KindEdit, models.KindWrite:
		verb := " wants to edit"
		if p.ToolKind == models.KindWrite {
			verb = " wants to write"
		}
		if len(t.Files) == 0 {
			return Headline{Lead: who + verb + " a file"}, true
		}
		target := short(t.Files[0].Path)
		if n := len(t.Files) - 1; n > 0 {
			target += " (+" + strconv.Itoa(n) + " more)"
		}
		return Headline{Lead: who + verb, Target: target}, true
	case models.KindFetch:
		if t.URL != "" {
			return Headline{Lead: who + " wants to fetch", Target: short(t.URL)}, true
		}
		return Headline{Lead: who + " wants to fetch a web page"}, true
	case models.KindRead:
		for _, f := range t.Fields {
			if !f.Block && f.Value != "" {
				return Headline{Lead: who + " wants to read", Target: short(f.Value)}, true
			}
		}
		return Headline{Lead: who + " wants to read a file"}, true
	case models.KindMCP:
		name := p.ToolName
		if p.ServerName != "" && name != "" {
			name = p.ServerName + " › " + name
		}
		return Headline{Lead: who + " wants to use the MCP tool", Target: short(name)}, name != ""
	}
	if p.ToolName != "" {
		return Headline{Lead: who + " wants to use", Target: short(p.ToolName)}, true
	}
	return Headline{}, false
}

// short is the first line of s within MaxTarget characters, marked with … when cut.
func short(s string) string {
	s = strings.TrimSpace(s)
	cut := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, cut = strings.TrimSpace(s[:i]), true
	}
	if r := []rune(s); len(r) > MaxTarget {
		s, cut = string(r[:MaxTarget-1]), true
	}
	if cut {
		s += " …"
	}
	return Visible(s)
}

// RememberChosen reports whether a suggestion is chosen (after a failed submit), so
// the collapsed remember box opens to show it.
func (p *Prompt) RememberChosen() bool {
	for _, s := range p.Suggestions {
		if s.Selected {
			return true
		}
	}
	return false
}
