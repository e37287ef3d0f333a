// Command gatehouse is the Gatehouse approval server and the terminal commands around
// it, one file per command on cobra: serve and migrate (serve.go), version
// (version.go), setup (setup.go), hook (hook.go), acp (acp.go), bridge (bridge.go),
// pending, approve and reject (answer.go), watch (watch.go), audit verify (audit.go),
// and the older claude-settings and codex-settings (claude_settings.go,
// codex_settings.go).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is the command line: it runs args (without the program name) with the
// environment getenv and returns the exit code. SIGINT and SIGTERM cancel the
// command's context.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return execute(ctx, args, &cli{getenv: getenv, stdin: os.Stdin, stdout: stdout, stderr: stderr})
}

// cli is what every command reads and writes instead of the process's own: tests run
// commands in process with an environment and buffers of their own.
type cli struct {
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
}

// execute runs args until done or ctx ends and returns the exit code: 0, 1 when the
// command failed, 2 for a usage error, or what the command chose (exitError). Every
// error is printed once, on one line, here or by the command.
func execute(ctx context.Context, args []string, c *cli) int {
	root := newRootCmd(c)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintln(c.stderr, ee.msg)
		}
		return ee.code
	default:
		fmt.Fprintln(c.stderr, "gatehouse:", err)
		return 1
	}
}

// Command groups of `gatehouse help`.
const (
	groupServer   = "server"
	groupAgents   = "agents"
	groupTerminal = "terminal"
	groupOther    = "other"
)

// newRootCmd is the command tree. The root itself serves, with serve's flags, so
// `gatehouse` and `gatehouse --addr :0` run the server as `gatehouse serve` does.
func newRootCmd(c *cli) *cobra.Command {
	root := &cobra.Command{
		Use:   "gatehouse",
		Short: "Gatehouse: a person approves what an AI coding agent does.",
		Long: "Gatehouse: a person approves what an AI coding agent does.\n\n" +
			"Without a command gatehouse serves, as `gatehouse serve` does. Docs: docs/cli.md.",
		Version:       versionLine(),
		SilenceUsage:  true,
		SilenceErrors: true,
		// Any argument left at the root is a command that does not exist.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("gatehouse: unknown command %q (gatehouse help lists them)", args[0])
			}
			return nil
		},
	}
	root.SetIn(c.stdin)
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetUsageTemplate(usageTemplate)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		help := cmd.CommandPath()
		if !cmd.HasParent() {
			help = "gatehouse serve" // the root takes serve's flags, which serve's help lists
		}
		return usageErrorf("%s: %v (%s --help lists the flags)", cmd.CommandPath(), err, help)
	})
	root.AddGroup(
		&cobra.Group{ID: groupServer, Title: "Server:"},
		&cobra.Group{ID: groupAgents, Title: "Agents:"},
		&cobra.Group{ID: groupTerminal, Title: "Deciding from a terminal (--url/GATEHOUSE_URL, --token/GATEHOUSE_TOKEN):"},
		&cobra.Group{ID: groupOther, Title: "Other:"},
	)
	root.SetHelpCommandGroupID(groupOther)
	root.SetCompletionCommandGroupID(groupOther)
	serveOn(root, c, false)

	root.AddCommand(
		newServeCmd(c), newMigrateCmd(c), newAuditCmd(c),
		newSetupCmd(c), newHookCmd(c), newACPCmd(c), newBridgeCmd(c), newClaudeSettingsCmd(c), newCodexSettingsCmd(c),
		newPendingCmd(c), newAnswerCmd(c, "accept"), newAnswerCmd(c, "decline"), newWatchCmd(c),
		newVersionCmd(c),
	)
	// cobra's own commands, worded like the others.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, cmd := range root.Commands() {
		switch cmd.Name() {
		case "help":
			cmd.Short = "show a command's help"
		case "completion":
			cmd.Short = "print a shell completion script (bash, zsh, fish or powershell)"
			// Runnable, so a shell it does not know is a usage error, not its help.
			cmd.RunE = func(*cobra.Command, []string) error {
				return usageErrorf("gatehouse completion: name a shell: bash, zsh, fish or powershell")
			}
		}
	}
	argsAreUsage(root)
	return root
}

// usageTemplate is cobra's usage with each command shown by its use line (`setup
// <agent>`, `approve ID`), and at the root a pointer to serve's flags instead of the
// forty of them.
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}{{$cmds := .Commands}}{{range $group := .Groups}}

{{.Title}}{{range $cmds}}{{if (and (eq .GroupID $group.ID) (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Use .UsagePadding}} {{.Short}}{{end}}{{end}}{{end}}{{if not .AllChildCommandsHaveGroup}}

Commands:{{range $cmds}}{{if (and (eq .GroupID "") (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Use .UsagePadding}} {{.Short}}{{end}}{{end}}{{end}}{{end}}{{if .HasParent}}{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{else}}

Flags:
  -h, --help      help for gatehouse
  -v, --version   print the version and commit

"gatehouse serve --help" lists the server's flags; gatehouse takes them too.{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

// exitError ends the command with code. msg, when not empty, is printed on stderr (a
// command that printed its own message returns none).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.msg
}

// usageErrorf is a usage error: exit 2 with the message.
func usageErrorf(format string, a ...any) error {
	return &exitError{code: 2, msg: fmt.Sprintf(format, a...)}
}

// exitCode ends the command with code, its message already printed (0 is success).
func exitCode(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: code}
}

// argsAreUsage makes every bad-arguments error in cmd's tree a usage error (exit 2),
// cobra's own commands' included.
func argsAreUsage(cmd *cobra.Command) {
	if check := cmd.Args; check != nil {
		cmd.Args = func(cmd *cobra.Command, args []string) error {
			err := check(cmd, args)
			var ee *exitError
			if err == nil || errors.As(err, &ee) {
				return err
			}
			return usageErrorf("%s: %v", cmd.CommandPath(), err)
		}
	}
	for _, sub := range cmd.Commands() {
		argsAreUsage(sub)
	}
}

// noArgs refuses positional arguments with a usage error naming the first.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s: unexpected argument %q", cmd.CommandPath(), args[0])
	}
	return nil
}
