package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/acpproxy"
	"github.com/gatehouse-dev/gatehouse/internal/agents"
	"github.com/gatehouse-dev/gatehouse/internal/hookclient"
)

// newACPCmd is `gatehouse acp [flags] -- <agent command…>`: it starts the ACP agent
// and sits between it and the editor that started gatehouse (stdin/stdout), parking
// the agent's permission requests at Gatehouse (internal/acpproxy). The agent's stderr
// is passed through; gatehouse's own notes go to stderr too, never stdout.
func newACPCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "acp -- <agent command>",
		Short:   "run an ACP agent for an editor, its permission requests parked here",
		GroupID: groupAgents,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || cmd.ArgsLenAtDash() != 0 {
				return usageErrorf("usage: gatehouse acp [--url URL] [--token-env NAME] [--fail-closed] -- <agent command> [args…]")
			}
			return nil
		},
	}
	fs := cmd.Flags()
	flags := addClientFlags(fs, c.getenv, "")
	failClosed := fs.Bool("fail-closed", false, "when Gatehouse gives no verdict, reject the request instead of letting the editor ask")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		agent, ok := agents.Default().Lookup("acp")
		if !ok {
			return fmt.Errorf("this build has no ACP agent")
		}
		token := flags.bearer("gatehouse acp", c.getenv, c.stderr)
		logf := func(format string, a ...any) { fmt.Fprintf(c.stderr, format+"\n", a...) }
		forward := func(ctx context.Context, payload []byte) ([]byte, error) {
			out := hookclient.Forward(ctx, hookclient.Options{Agent: agent, BaseURL: flags.url, Token: token, Logf: logf}, payload)
			return out.Answer, out.Err
		}
		return exitCode(runAgent(cmd.Context(), args, acpproxy.Options{Forward: forward, FailClosed: *failClosed, Logf: logf}, c.stdin, c.stdout, c.stderr))
	}
	return cmd
}

// runAgent starts argv as the agent and relays between it and the editor (stdin,
// stdout) until it exits; its exit status is the result.
func runAgent(ctx context.Context, argv []string, o acpproxy.Options, stdin io.Reader, stdout, stderr io.Writer) int {
	agentCmd := exec.Command(argv[0], argv[1:]...)
	agentCmd.Stderr = stderr
	toAgent, err := agentCmd.StdinPipe()
	var fromAgent io.ReadCloser
	if err == nil {
		fromAgent, err = agentCmd.StdoutPipe()
	}
	if err == nil {
		err = agentCmd.Start()
	}
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse acp: starting %s: %v\n", argv[0], err)
		return 1
	}
	exited := make(chan struct{})
	closeAgent := func() {
		_ = toAgent.Close()
		go stopAgent(agentCmd, exited)
	}
	if err := acpproxy.New(stdout, toAgent, o).Run(ctx, stdin, fromAgent, closeAgent); err != nil {
		o.Logf("gatehouse acp: %v", err)
	}
	err = agentCmd.Wait()
	close(exited)
	return agentStatus(err)
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

// agentStatus is the agent's exit status as ours.
func agentStatus(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	}
	return 1
}
