package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/gatehouse-dev/gatehouse/internal/bridge/opencode"
	"github.com/gatehouse-dev/gatehouse/internal/hookclient"
)

// runBridge is `gatehouse bridge opencode`: it subscribes to an OpenCode server's
// event stream and parks each of its permission requests at Gatehouse, answering it
// in OpenCode with the person's verdict (internal/bridge/opencode). It runs until
// SIGINT or SIGTERM; the prompts it waits on then stay pending for a bridge that
// comes back.
func runBridge(args []string, getenv func(string) string, stderr io.Writer) int {
	const usageLine = "usage: gatehouse bridge opencode --server URL [--url GATEHOUSE] [--token-env VAR] [--directory DIR]"
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, usageLine)
		return 2
	}
	if args[0] != "opencode" {
		fmt.Fprintf(stderr, "gatehouse bridge: unknown agent %q (want opencode)\n", args[0])
		return 2
	}
	fs := flag.NewFlagSet("gatehouse bridge opencode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", getenv("OPENCODE_SERVER_URL"), "OpenCode's server URL, as opencode serve --port P listens, http://127.0.0.1:P (env OPENCODE_SERVER_URL)")
	directory := fs.String("directory", "", "the project directory whose OpenCode sessions to gate (default: the one the server runs in)")
	baseURL := fs.String("url", getenv("GATEHOUSE_URL"), "Gatehouse base URL (env GATEHOUSE_URL)")
	token := fs.String("token", getenv("GATEHOUSE_TOKEN"), "API token sent as a bearer credential (env GATEHOUSE_TOKEN; prefer the variable: flags show in ps)")
	tokenEnv := fs.String("token-env", "", "read the token from this environment variable instead")
	logFormat := fs.String("log-format", "text", "text or json")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gatehouse bridge opencode: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *tokenEnv != "" {
		*token = getenv(*tokenEnv)
		if strings.TrimSpace(*token) == "" {
			fmt.Fprintf(stderr, "gatehouse bridge opencode: --token-env %s: the variable is empty or unset; sending no token\n", *tokenEnv)
		}
	}
	if strings.TrimSpace(*baseURL) == "" {
		fmt.Fprintln(stderr, "gatehouse bridge opencode: no Gatehouse URL: pass --url or set GATEHOUSE_URL")
		return 2
	}
	log := newLogger(*logFormat, slog.LevelInfo, stderr)
	b, err := opencode.New(opencode.Options{Server: *server, Directory: *directory, Log: log,
		Gatehouse: hookclient.Options{BaseURL: *baseURL, Token: strings.TrimSpace(*token),
			Logf: func(format string, a ...any) { log.Info(fmt.Sprintf(format, a...)) }}})
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse bridge opencode:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := b.Run(ctx); err != nil {
		log.Error("bridge stopped", "err", err)
		return 1
	}
	return 0
}
