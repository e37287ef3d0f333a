package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/bridge/opencode"
	"github.com/gatehouse-dev/gatehouse/internal/hookclient"
)

// newBridgeCmd is `gatehouse bridge opencode`: it subscribes to an OpenCode server's
// event stream and parks each of its permission requests at Gatehouse, answering it
// in OpenCode with the person's verdict (internal/bridge/opencode). It runs until
// SIGINT or SIGTERM; the prompts it waits on then stay pending for a bridge that
// comes back.
func newBridgeCmd(c *cli) *cobra.Command {
	const usageLine = "usage: gatehouse bridge opencode --server URL [--url GATEHOUSE] [--token-env VAR] [--directory DIR]"
	cmd := &cobra.Command{
		Use:     "bridge opencode",
		Short:   "gate an OpenCode server's permission requests (opencode serve)",
		GroupID: groupAgents,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usageErrorf("%s", usageLine)
			case args[0] != "opencode":
				return usageErrorf("gatehouse bridge: unknown agent %q (want opencode)", args[0])
			case len(args) > 1:
				return usageErrorf("gatehouse bridge opencode: unexpected argument %q", args[1])
			}
			return nil
		},
	}
	fs := cmd.Flags()
	server := fs.String("server", c.getenv("OPENCODE_SERVER_URL"), "OpenCode's server URL, as opencode serve --port P listens, http://127.0.0.1:P (env OPENCODE_SERVER_URL)")
	directory := fs.String("directory", "", "the project directory whose OpenCode sessions to gate (default: the one the server runs in)")
	logFormat := fs.String("log-format", "text", "text or json")
	flags := addClientFlags(fs, c.getenv, "")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if strings.TrimSpace(flags.url) == "" {
			return usageErrorf("gatehouse bridge opencode: no Gatehouse URL: pass --url or set GATEHOUSE_URL")
		}
		token := flags.bearer("gatehouse bridge opencode", c.getenv, c.stderr)
		log := newLogger(*logFormat, slog.LevelInfo, c.stderr)
		b, err := opencode.New(opencode.Options{Server: *server, Directory: *directory, Log: log,
			Gatehouse: hookclient.Options{BaseURL: flags.url, Token: token,
				Logf: func(format string, a ...any) { log.Info(fmt.Sprintf(format, a...)) }}})
		if err != nil {
			return usageErrorf("gatehouse bridge opencode: %v", err)
		}
		if err := b.Run(cmd.Context()); err != nil {
			log.Error("bridge stopped", "err", err)
			return exitCode(1)
		}
		return nil
	}
	return cmd
}
