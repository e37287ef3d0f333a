package gemini

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// GatedTools is the BeforeTool matcher (a regular expression over Gemini's tool
// names): the tools that change something — shell commands, file edits and writes —
// and every MCP server's tool wait for a person; reads and searches do not.
const GatedTools = "^(run_shell_command|replace|write_file|mcp_.+)$"

// AnswerWithinMargin is how long before Gemini's hook timeout the forwarder denies:
// Gemini runs the tool when its BeforeTool hook times out, so the deny must be out
// first.
const AnswerWithinMargin = 15 * time.Second

// hookName names the installed hook in Gemini's hook listings.
const hookName = "gatehouse"

// hook is one Gemini command hook. Field order is the order printed.
type hook struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Command string `json:"command"`
	Timeout int64  `json:"timeout"` // milliseconds
}

// matcherGroup narrows hooks to the tools Matcher matches.
type matcherGroup struct {
	Matcher string `json:"matcher"`
	Hooks   []hook `json:"hooks"`
}

// Settings is the ~/.gemini/settings.json hooks snippet that sends Gemini's BeforeTool
// hook to Gatehouse through the command hook `<o.Command> hook gemini --answer-within
// …` (Gemini has command hooks only).
//
// Gemini runs the tool when the hook times out, so the hook's timeout is a little
// above the server's wait (o.HookTimeout, in milliseconds as Gemini reads it) and the
// forwarder denies AnswerWithinMargin before it: a prompt nobody answers in time is
// denied, never run. o.Matcher, when set, replaces GatedTools; o.Events plays no part
// (BeforeTool is the one event); o.Auth neither: an API token (o.TokenEnv) is how a
// command hook identifies its person.
func (a Agent) Settings(o models.SettingsOptions) (models.Settings, error) {
	argv, err := hookkit.CommandHookArgs(o.Command, a.Name(), o.URL, o.TokenEnv)
	if err != nil {
		return models.Settings{}, err
	}
	secs, capped := o.HookTimeout()
	var notes []string
	if capped {
		notes = append(notes, fmt.Sprintf("the hook timeout is capped at %s: a prompt still waiting then is denied", models.HookTimeoutMax))
	}
	within := time.Duration(secs)*time.Second - AnswerWithinMargin
	argv = append(argv, "--answer-within", within.String())
	matcher := GatedTools
	if o.Matcher != "" {
		matcher = o.Matcher
	}
	h := hook{Type: "command", Name: hookName, Command: strings.Join(argv, " "), Timeout: secs * 1000}
	out, err := json.MarshalIndent(map[string]any{"hooks": map[string]any{
		EventBeforeTool: []matcherGroup{{Matcher: matcher, Hooks: []hook{h}}},
	}}, "", "  ")
	if err != nil {
		return models.Settings{}, err // maps of strings always marshal
	}
	notes = append(notes,
		"BeforeTool makes every shell command, file edit or write and MCP tool call wait for a person, even under --yolo "+
			"(Gatehouse rules can answer routine ones); if nobody answers within the hook's --answer-within, the hook denies, "+
			"since Gemini would run the tool when the hook times out")
	if o.TokenEnv != "" {
		notes = append(notes, fmt.Sprintf("export %s=<your Gatehouse API token> in the shell you start gemini from", o.TokenEnv))
		if !strings.HasPrefix(strings.ToUpper(o.TokenEnv), "GEMINI_CLI_") {
			notes = append(notes, fmt.Sprintf("with Gemini's environment redaction on (security.environmentVariableRedaction, and always under GitHub Actions) "+
				"hooks see no variable named like a token: name it GEMINI_CLI_… instead of %s there", o.TokenEnv))
		}
	}
	return models.Settings{Text: string(out) + "\n", Notes: notes, File: settingsFile}, nil
}

// settingsFile is where the Gemini CLI reads its user settings: ~/.gemini/settings.json,
// with GEMINI_CLI_HOME standing in for the home when it is set.
var settingsFile = models.SettingsFile{Dir: ".gemini", HomeEnv: "GEMINI_CLI_HOME", Name: "settings.json", Format: models.FormatJSON}
