package hookkit

import (
	"fmt"
	"strings"
)

// CommandHookArgs is the command line of a command hook that sends an agent's hooks
// to Gatehouse — `<command> hook <agent> --url <url> [--token-env <tokenEnv>]` — for an
// agent that runs it with a POSIX shell (the Codex CLI, Gemini CLI and Copilot CLI),
// its words quoted where they need it. The errors name the flags of the settings
// commands that set command and tokenEnv: a command with quotes, backslashes or a
// newline is refused rather than quoted (it is a path, and a settings file that
// carried such quoting would be hard to read and to fix by hand).
func CommandHookArgs(command, agent, url, tokenEnv string) ([]string, error) {
	if tokenEnv != "" && !ValidEnvName(tokenEnv) {
		return nil, fmt.Errorf("--token-env: %q is not an environment variable name", tokenEnv)
	}
	if command == "" || strings.ContainsAny(command, "\"'\n\\") {
		return nil, fmt.Errorf("--command: want the path of the gatehouse binary without quotes or backslashes, got %q", command)
	}
	argv := []string{ShellWord(command), "hook", agent, "--url", ShellWord(url)}
	if tokenEnv != "" {
		argv = append(argv, "--token-env", tokenEnv)
	}
	return argv, nil
}

// ShellWord quotes s for a POSIX shell when it needs it: a word of letters, digits and
// -_./:=@%+, stays as it is, anything else goes in single quotes.
func ShellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
