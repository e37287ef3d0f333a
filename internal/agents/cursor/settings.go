package cursor

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Settings is the ~/.cursor/hooks.json that sends Cursor's shell and MCP hooks to
// Gatehouse through the command hook `<o.Command> hook cursor`, with a timeout (in
// seconds) above the server's wait. Each hook fails closed: Cursor runs the command
// when a hook errs or times out unless failClosed is set, and a gate that opens when
// nobody answers is no gate.
func (a Agent) Settings(o models.SettingsOptions) (models.Settings, error) {
	if o.TokenEnv != "" && !hookkit.ValidEnvName(o.TokenEnv) {
		return models.Settings{}, fmt.Errorf("--token-env: %q is not an environment variable name", o.TokenEnv)
	}
	if o.Command == "" || strings.ContainsAny(o.Command, "\"'\n\\ ") {
		return models.Settings{}, fmt.Errorf("--command: want the path of the gatehouse binary without spaces, quotes or backslashes, got %q", o.Command)
	}
	argv := []string{o.Command, "hook", a.Name(), "--url", o.URL}
	if o.TokenEnv != "" {
		argv = append(argv, "--token-env", o.TokenEnv)
	}
	secs, capped := o.HookTimeout()
	hooks := map[string]any{}
	// Shell commands and MCP calls; preToolUse (every tool, file edits too) is there
	// for a person to add by hand.
	for _, ev := range []string{EventShell, EventMCP} {
		hooks[ev] = []any{map[string]any{"command": strings.Join(argv, " "), "timeout": secs, "failClosed": true}}
	}
	raw, err := json.MarshalIndent(struct {
		Version int            `json:"version"`
		Hooks   map[string]any `json:"hooks"`
	}{1, hooks}, "", "  ")
	if err != nil {
		return models.Settings{}, err
	}
	var notes []string
	if capped {
		notes = append(notes, fmt.Sprintf("the hook timeout is capped at %s: a prompt still waiting then is denied (the hooks fail closed)", models.HookTimeoutMax))
	}
	notes = append(notes,
		"Cursor asks Gatehouse before every shell command and MCP tool call; to gate file edits too, add the same entry under \"preToolUse\"",
		"restart Cursor after installing so it reads ~/.cursor/hooks.json",
	)
	if o.TokenEnv != "" {
		notes = append(notes, fmt.Sprintf("export %s=<your Gatehouse API token> in the environment Cursor starts from", o.TokenEnv))
	}
	return models.Settings{Text: string(raw) + "\n", Notes: notes, File: settingsFile}, nil
}

// settingsFile is Cursor's user-level hooks file, ~/.cursor/hooks.json.
var settingsFile = models.SettingsFile{Dir: ".cursor", Name: "hooks.json", Format: models.FormatJSON}
