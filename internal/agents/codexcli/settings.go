package codexcli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/agents/hookkit"
	"github.com/gatehouse-dev/gatehouse/models"
)

// Settings is the config.toml hooks block that sends Codex's PermissionRequest and
// PreToolUse hooks to Gatehouse through the command hook `<o.Command> hook codex`
// (Codex has command hooks only), and notes on trusting them. o.Auth plays no part: an
// API token (o.TokenEnv) is how a command hook identifies its person.
func (a Agent) Settings(o models.SettingsOptions) (models.Settings, error) {
	argv, err := hookkit.CommandHookArgs(o.Command, a.Name(), o.URL, o.TokenEnv)
	if err != nil {
		return models.Settings{}, err
	}
	var notes []string
	secs, capped := o.HookTimeout()
	if capped {
		notes = append(notes, fmt.Sprintf("the hook timeout is capped at %s: a prompt still waiting then falls back to Codex's own approval", models.HookTimeoutMax))
	}

	var b strings.Builder
	b.WriteString("# Gatehouse: Codex asks a person in Gatehouse before it runs a command (gatehouse codex-settings).\n")
	b.WriteString("# PermissionRequest fires when Codex itself would ask for approval; PreToolUse fires before\n")
	b.WriteString("# every command, so with it every command waits for a person: delete that block to be asked\n")
	b.WriteString("# only when Codex would ask. One answer covers both events for the same command.\n")
	for _, ev := range a.Events() {
		fmt.Fprintf(&b, "\n[[hooks.%s]]\n", ev)
		if ev == EventPreToolUse {
			fmt.Fprintf(&b, "matcher = %q # shell commands only\n", ToolBash)
		}
		fmt.Fprintf(&b, "\n[[hooks.%s.hooks]]\ntype = \"command\"\ncommand = %s\ntimeout = %d\n",
			ev, strconv.Quote(strings.Join(argv, " ")), secs)
	}
	notes = append(notes,
		"Codex skips new or changed hooks until you trust them: start `codex` once in a terminal and choose Trust when it "+
			"lists them (\"Hooks need review\"); `codex exec` runs only trusted hooks (or pass --dangerously-bypass-hook-trust for a one-off run)",
		"headless runs need approvals on to ask at all: `codex exec --approve-for-me` (with approval policy never, PermissionRequest never fires)")
	if o.TokenEnv != "" {
		notes = append(notes, fmt.Sprintf("export %s=<your Gatehouse API token> in the shell you start codex from", o.TokenEnv))
	}
	return models.Settings{Text: b.String(), Notes: notes, File: settingsFile}, nil
}

// settingsFile is where the Codex CLI reads its configuration: ~/.codex/config.toml, or
// config.toml in CODEX_HOME when it is set.
var settingsFile = models.SettingsFile{Dir: ".codex", DirEnv: "CODEX_HOME", Name: "config.toml", Format: models.FormatTOML}
