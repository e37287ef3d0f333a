// Package risk rates a tool call before a person sees it: a level (low, medium, high,
// critical) and the reasons, each naming what matched. A person gives an approval a few
// seconds; the rating makes a `curl … | sudo bash` look different from `npm test`, and
// it is what keeps the riskiest calls away from one-tap answers (bulk approval,
// notification buttons). Shell commands are read through internal/shell, as a shell
// reads them, so quoting, pipes, `&&`, `$(…)` and `bash -c` hide nothing.
package risk

import (
	"github.com/gatehouse-dev/gatehouse/models"
)

// Level is how much harm a call can do.
type Level string

// The levels, lowest first.
const (
	Low      Level = "low"
	Medium   Level = "medium"
	High     Level = "high"
	Critical Level = "critical"
)

// rank orders the levels.
func (l Level) rank() int {
	switch l {
	case Medium:
		return 1
	case High:
		return 2
	case Critical:
		return 3
	}
	return 0
}

// AtLeast reports whether l is as high as min.
func (l Level) AtLeast(min Level) bool { return l.rank() >= min.rank() }

// Reason is one thing that raised the level: a stable code, a sentence for people, and
// the part of the call that matched.
type Reason struct {
	Code  string `json:"code"`
	Text  string `json:"text"`
	Match string `json:"match,omitempty"`
	level Level
}

// Assessment is a call's rating. It is stored with the prompt (params "risk") and
// shown beside params in the API.
type Assessment struct {
	Level   Level    `json:"level"`
	Reasons []Reason `json:"reasons"`
}

// MaxReasons bounds the reasons kept: the first few say enough, and a hostile command
// must not grow the stored prompt.
const MaxReasons = 8

// Call is what is rated: the tool's name, kind and input, the agent's working
// directory (the project: deleting or writing outside it is riskier) and, for an MCP
// server's tool, what the server says of it.
type Call struct {
	Tool  string
	Kind  models.ToolKind
	Input map[string]any
	Cwd   string
	// Hints are an MCP tool's annotations, when its server listed them.
	Hints *Hints
}

// Hints are the MCP tool annotations that speak of harm (ToolAnnotations in the MCP
// specification). A hint the server left out takes the specification's default:
// not read-only, and destructive.
type Hints struct {
	ReadOnly    *bool `json:"readOnlyHint,omitempty"`
	Destructive *bool `json:"destructiveHint,omitempty"`
}

// Assess rates c by the built-in table. A call of a kind it has no rules for is low.
func Assess(c Call) Assessment { return assessment(builtin(c)) }

// builtin is the built-in table's reasons for c.
func builtin(c Call) []Reason {
	switch c.Kind {
	case models.KindShell:
		cmd, _ := c.Input["command"].(string)
		return shellReasons(cmd, c.Cwd)
	case models.KindEdit, models.KindWrite:
		return fileReasons(str(c.Input, "file_path", "path", "notebook_path"), c.Cwd, true)
	case models.KindRead:
		return fileReasons(str(c.Input, "file_path", "path"), c.Cwd, false)
	}
	if c.Hints != nil {
		return hintReasons(c.Tool, *c.Hints)
	}
	return nil
}

// hintReasons rates an MCP tool by its server's own annotations: a tool that says it
// is destructive is high; one that does not say it only reads is medium (the
// specification's defaults: it may change things, destructively); a read-only tool
// adds nothing.
func hintReasons(tool string, h Hints) []Reason {
	if h.ReadOnly != nil && *h.ReadOnly {
		return nil
	}
	switch {
	case h.Destructive != nil && *h.Destructive:
		return []Reason{{Code: "destructive_tool", Text: "its server says the tool is destructive", Match: clip(tool), level: High}}
	case h.Destructive != nil:
		return []Reason{{Code: "modifying_tool", Text: "its server says the tool changes things (not read-only)", Match: clip(tool), level: Medium}}
	}
	return []Reason{{Code: "modifying_tool", Text: "its server does not say the tool only reads", Match: clip(tool), level: Medium}}
}

// assessment keeps the first MaxReasons distinct reasons; the level is the highest.
func assessment(rs []Reason) Assessment {
	a := Assessment{Level: Low, Reasons: []Reason{}}
	seen := map[string]bool{}
	for _, r := range rs {
		if r.level.rank() > a.Level.rank() {
			a.Level = r.level
		}
		key := r.Code + "\x00" + r.Match
		if seen[key] || len(a.Reasons) == MaxReasons {
			continue
		}
		seen[key] = true
		a.Reasons = append(a.Reasons, r)
	}
	return a
}

func str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// ParamKey is the prompt param the assessment is stored under.
const ParamKey = "risk"

// Of reads the assessment stored in a prompt's params (nil when it has none).
func Of(params map[string]any) *Assessment {
	m, ok := params[ParamKey].(map[string]any)
	if !ok {
		if a, ok := params[ParamKey].(Assessment); ok {
			return &a
		}
		return nil
	}
	a := &Assessment{}
	a.Level, _ = levelOf(m["level"])
	if list, ok := m["reasons"].([]any); ok {
		for _, x := range list {
			if r, ok := x.(map[string]any); ok {
				code, _ := r["code"].(string)
				text, _ := r["text"].(string)
				match, _ := r["match"].(string)
				a.Reasons = append(a.Reasons, Reason{Code: code, Text: text, Match: match})
			}
		}
	}
	return a
}

func levelOf(v any) (Level, bool) {
	s, _ := v.(string)
	switch l := Level(s); l {
	case Low, Medium, High, Critical:
		return l, true
	}
	return Low, false
}
