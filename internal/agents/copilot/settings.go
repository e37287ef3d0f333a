package copilot

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// GatedTools is the preToolUse matcher (a regular expression over Copilot's tool
// names): the tools that change something — shell commands and file edits — wait for
// a person; reads and searches do not.
const GatedTools = "^(bash|powershell|edit|create|apply_patch)$"

// AnswerWithinMargin is how long before Copilot's preToolUse timeout the forwarder
// denies: Copilot runs the tool when that hook times out, so the deny must be out
// first.
const AnswerWithinMargin = 15 * time.Second

// hook is one Copilot command hook. Field order is the order printed.
type hook struct {
	Type       string `json:"type"`
	Bash       string `json:"bash"`
	TimeoutSec int64  `json:"timeoutSec"`
}

// matcherGroup narrows hooks to the tools Matcher matches.
type matcherGroup struct {
	Matcher string `json:"matcher"`
	Hooks   []hook `json:"hooks"`
}

// Settings is the $COPILOT_HOME/settings.json hooks snippet that sends Copilot's hooks
// to Gatehouse through the command hook `<o.Command> hook copilot` (Copilot's http
// hooks refuse plain http for permission hooks).
//
// By default both events are installed. preToolUse gates the tools in GatedTools
// before they run, even under --allow-all-tools (how Copilot runs headless, where
// permissionRequest never fires); it is installed with --answer-within below its
// timeout, because Copilot runs the tool when that hook times out.
// permissionRequest catches everything else Copilot itself would ask about (a read
// outside the project, an MCP tool); its timeout falls back to Copilot's own flow, so
// it needs no early deny. o.Events narrows the choice (names compared without case).
// o.Auth plays no part: an API token (o.TokenEnv) is how a command hook identifies
// its person.
func (a Agent) Settings(o models.SettingsOptions) (models.Settings, error) {
	argv, err := hookkit.CommandHookArgs(o.Command, a.Name(), o.URL, o.TokenEnv)
	if err != nil {
		return models.Settings{}, err
	}
	events, err := a.chosenEvents(o.Events)
	if err != nil {
		return models.Settings{}, err
	}
	secs, capped := o.HookTimeout()
	var notes []string
	if capped {
		notes = append(notes, fmt.Sprintf("the hook timeout is capped at %s: a prompt still waiting then is denied (preToolUse) or falls back to Copilot's own approval (permissionRequest)", models.HookTimeoutMax))
	}
	within := time.Duration(secs)*time.Second - AnswerWithinMargin
	hooks := map[string]any{}
	for _, ev := range events {
		h := hook{Type: "command", Bash: strings.Join(argv, " "), TimeoutSec: secs}
		if ev == EventPreToolUse {
			h.Bash += " --answer-within " + within.String()
			hooks[ev] = []matcherGroup{{Matcher: GatedTools, Hooks: []hook{h}}}
			continue
		}
		hooks[ev] = []hook{h}
	}
	out, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	if err != nil {
		return models.Settings{}, err // maps of strings always marshal
	}
	notes = append(notes,
		"preToolUse makes every shell command and file edit wait for a person, even under --allow-all-tools (Gatehouse rules can answer routine ones); "+
			"if nobody answers within the hook's --answer-within, the hook denies, since Copilot would run the tool when the hook times out",
		"permissionRequest asks a person whenever Copilot itself would ask; without an answer Copilot falls back to its own approval")
	if o.TokenEnv != "" {
		notes = append(notes, fmt.Sprintf("export %s=<your Gatehouse API token> in the shell you start copilot from", o.TokenEnv))
	}
	return models.Settings{Text: string(out) + "\n", Notes: notes, File: settingsFile}, nil
}

// chosenEvents is the events to install: every parked event when none is named.
func (a Agent) chosenEvents(names []string) ([]string, error) {
	if len(names) == 0 {
		return a.Events(), nil
	}
	var out []string
	for _, n := range names {
		found := false
		for _, ev := range a.Events() {
			if strings.EqualFold(n, ev) {
				out, found = append(out, ev), true
			}
		}
		if !found {
			return nil, fmt.Errorf("--events: Gatehouse does not handle %q (want %s)", n, strings.Join(a.Events(), ", "))
		}
	}
	return out, nil
}

// settingsFile is where the Copilot CLI reads its user settings: ~/.copilot/settings.json,
// or settings.json in COPILOT_HOME when it is set.
var settingsFile = models.SettingsFile{Dir: ".copilot", DirEnv: "COPILOT_HOME", Name: "settings.json", Format: models.FormatJSON}
