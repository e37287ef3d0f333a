package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/acpproxy"
	"github.com/gatehouse-dev/gatehouse/internal/agents"
	"github.com/gatehouse-dev/gatehouse/internal/hookclient"
)

// runACP is `gatehouse acp [flags] -- <agent command…>`: it starts the ACP agent and
// sits between it and the editor that started gatehouse (stdin/stdout), parking the
// agent's permission requests at Gatehouse (internal/acpproxy). The agent's stderr is
// passed through; gatehouse's own notes go to stderr too, never stdout.
func runACP(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	dash := -1
	for i, a := range args {
		if a == "--" {
			dash = i
			break
		}
	}
	if dash < 0 || dash == len(args)-1 {
		fmt.Fprintln(stderr, "usage: gatehouse acp [--url URL] [--token-env NAME] [--fail-closed] -- <agent command> [args…]")
		return 2
	}
	fs := flag.NewFlagSet("gatehouse acp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	baseURL := fs.String("url", getenv("GATEHOUSE_URL"), "Gatehouse base URL (env GATEHOUSE_URL)")
	token := fs.String("token", getenv("GATEHOUSE_TOKEN"), "API token sent as a bearer credential (env GATEHOUSE_TOKEN)")
	tokenEnv := fs.String("token-env", "", "read the token from this environment variable instead")
	failClosed := fs.Bool("fail-closed", false, "when Gatehouse gives no verdict, reject the request instead of letting the editor ask")
	if err := fs.Parse(args[:dash]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gatehouse acp: unexpected argument %q before --\n", fs.Arg(0))
		return 2
	}
	if *tokenEnv != "" {
		*token = getenv(*tokenEnv)
	}
	agent, ok := agents.Default().Lookup("acp")
	if !ok {
		fmt.Fprintln(stderr, "gatehouse acp: this build has no ACP agent")
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	argv := args[dash+1:]
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	toAgent, err := cmd.StdinPipe()
	if err == nil {
		var fromAgent io.ReadCloser
		if fromAgent, err = cmd.StdoutPipe(); err == nil {
			if err = cmd.Start(); err == nil {
				logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
				p := acpproxy.New(stdout, toAgent, acpproxy.Options{FailClosed: *failClosed, Logf: logf,
					Forward: func(ctx context.Context, payload []byte) ([]byte, error) {
						out := hookclient.Forward(ctx, hookclient.Options{Agent: agent, BaseURL: *baseURL,
							Token: strings.TrimSpace(*token), Logf: logf}, payload)
						return out.Answer, out.Err
					}})
				exited := make(chan struct{})
				closeAgent := func() {
					_ = toAgent.Close()
					go stopAgent(cmd, exited)
				}
				if err := p.Run(ctx, stdin, fromAgent, closeAgent); err != nil {
					logf("gatehouse acp: %v", err)
				}
				err := cmd.Wait()
				close(exited)
				return exitCode(err)
			}
		}
	}
	fmt.Fprintf(stderr, "gatehouse acp: starting %s: %v\n", argv[0], err)
	return 1
}

// agentGrace is how long an agent may take to exit once the editor is gone.
const agentGrace = 2 * time.Second

// stopAgent ends an agent that outlives its editor (some keep running after their
// input closes): SIGTERM after agentGrace, then SIGKILL.
func stopAgent(cmd *exec.Cmd, exited <-chan struct{}) {
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Kill} {
		select {
		case <-exited:
			return
		case <-time.After(agentGrace):
			_ = cmd.Process.Signal(sig)
		}
	}
}

// exitCode is the agent's exit status as ours.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	}
	return 1
}
