package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/hookclient"
)

// maxHookPayload caps what the forwarder reads from stdin (the server's own body cap
// is 1 MiB by default; a larger payload is refused there with a 413 and a message).
const maxHookPayload = 8 << 20

// newHookCmd is `gatehouse hook <agent>`: a command hook of any agent the registry says
// forwards (hookclient.Names). It reads the hook payload on stdin, posts it to
// {url}/v1/hooks/{agent} with the token as a bearer credential, and prints the server's
// answer on stdout exactly as received. Whatever goes wrong — no URL, a server that is
// down, a 401, a 5xx, a body that is not an answer — it prints nothing and exits 0, so
// the agent asks locally; with --fail-closed it prints a deny in the agent's format
// instead. Either way the reason goes to stderr.
func newHookCmd(c *cli) *cobra.Command {
	usage := "usage: gatehouse hook " + strings.Join(hookclient.Names(), "|") +
		" [--url URL] [--token TOKEN | --token-env NAME] [--fail-closed] [--reattach-for D] [--connect-timeout D] [--answer-within D] [--grants-only]"
	cmd := &cobra.Command{
		Use:     "hook <agent>",
		Short:   "forward an agent's command hook to Gatehouse (run by the agent)",
		Long:    "Forwards an agent's command hook to Gatehouse: the payload on stdin, the answer on stdout.\nAgents: " + strings.Join(hookclient.Names(), ", ") + ".",
		GroupID: groupAgents,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usageErrorf("%s", usage)
			case len(args) > 1:
				return usageErrorf("gatehouse hook: unexpected argument %q", args[1])
			}
			if _, ok := hookclient.Lookup(args[0]); !ok {
				return usageErrorf("gatehouse hook: unknown agent %q (want %s)", args[0], strings.Join(hookclient.Names(), " or "))
			}
			return nil
		},
	}
	fs := cmd.Flags()
	flags := addClientFlags(fs, c.getenv, "")
	failClosed := fs.Bool("fail-closed", false, "when Gatehouse gives no usable answer (unreachable, 401, 5xx, garbage), deny instead of letting the agent ask locally")
	reattachFor := fs.Duration("reattach-for", hookclient.DefaultReattachFor, "how long to keep re-attaching to the prompt after a dropped connection")
	connectTimeout := fs.Duration("connect-timeout", hookclient.DefaultConnectWindow, "how long to keep trying to reach a server not reached yet")
	answerWithin := fs.Duration("answer-within", 0, "deny (in the agent's format) when no verdict has come within this long, or the wait ended without one; set it below the hook timeout of an agent that runs the tool when its hook times out (Gemini CLI, Copilot CLI)")
	grantsOnly := fs.Bool("grants-only", false, "only let through the retry of a refusal a person approved in Gatehouse (Claude Code's PreToolUse beside auto mode); any other call gets no decision at once")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		agent, _ := hookclient.Lookup(args[0])
		return exitCode(forwardHook(cmd.Context(), agent, hookOptions{
			baseURL: flags.url, token: flags.bearer("gatehouse hook", c.getenv, c.stderr), failClosed: *failClosed,
			reattachFor: *reattachFor, connectTimeout: *connectTimeout, answerWithin: *answerWithin, grantsOnly: *grantsOnly,
		}, c.stdin, c.stdout, c.stderr))
	}
	return cmd
}

// hookOptions are `gatehouse hook`'s settings.
type hookOptions struct {
	baseURL, token              string
	failClosed                  bool
	reattachFor, connectTimeout time.Duration
	// answerWithin, when set, denies when no verdict came within it (or the wait ended
	// without one): for agents whose hook timeout runs the tool.
	answerWithin time.Duration
	// grantsOnly forwards with ?only=grants (hookclient.Options.GrantsOnly).
	grantsOnly bool
}

// forwardHook forwards the payload on stdin and returns the exit code.
func forwardHook(ctx context.Context, agent hookclient.Agent, o hookOptions, stdin io.Reader, stdout, stderr io.Writer) int {
	payload, err := io.ReadAll(io.LimitReader(stdin, maxHookPayload+1))
	if err == nil && len(payload) > maxHookPayload {
		err = fmt.Errorf("the hook payload is larger than %d bytes", maxHookPayload)
	}
	if err != nil {
		return hookFallback(agent, payload, fmt.Errorf("reading stdin: %w", err), o.failClosed, stdout, stderr)
	}

	if o.answerWithin > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.answerWithin, errNoAnswerInTime)
		defer cancel()
	}
	out := hookclient.Forward(ctx, hookclient.Options{
		Agent: agent, BaseURL: o.baseURL, Token: o.token,
		ConnectWindow: o.connectTimeout, ReattachFor: o.reattachFor, GrantsOnly: o.grantsOnly,
		Logf: func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) },
	}, payload)
	if errors.Is(context.Cause(ctx), errNoAnswerInTime) && len(out.Answer) == 0 {
		// The agent would run the tool once its own hook timeout passed: deny first,
		// whatever --fail-closed says, since silence here means "allow".
		msg := fmt.Sprintf("Nobody answered in Gatehouse within %s, so this hook denied the request before the agent's hook timeout.", o.answerWithin)
		return deny(agent, payload, msg, stdout, stderr)
	}
	if out.Err != nil {
		return hookFallback(agent, payload, out.Err, o.failClosed, stdout, stderr)
	}
	if len(out.Answer) == 0 && o.answerWithin > 0 {
		// The wait ended without a verdict (it expired on the server): silence would
		// let such an agent run the tool, so this too is a deny.
		return deny(agent, payload, "Nobody answered in Gatehouse before the request's wait ended, so this hook denied it.", stdout, stderr)
	}
	if len(out.Answer) == 0 {
		fmt.Fprintln(stderr, "gatehouse hook: Gatehouse gave no decision; the agent decides locally")
		return 0
	}
	if _, err := stdout.Write(out.Answer); err != nil {
		fmt.Fprintln(stderr, "gatehouse hook: writing the answer:", err)
		return 1
	}
	return 0
}

// hookFallback answers when Gatehouse could not: nothing (exit 0, the agent asks
// locally), or with failClosed a deny in the agent's format — or, for a payload with
// no deny answer, exit 2, which Claude Code and Codex read as "blocked".
//
// A refusal (429: too many of the caller's requests already wait for a person) is said
// as such — "Gatehouse refused: too many parked requests …" — on stderr and in the deny.
func hookFallback(agent hookclient.Agent, payload []byte, why error, failClosed bool, stdout, stderr io.Writer) int {
	if !failClosed {
		fmt.Fprintf(stderr, "gatehouse hook: %v; no decision from Gatehouse, the agent decides locally\n", why)
		return 0
	}
	msg := fmt.Sprintf("Gatehouse could not be asked (%v), and this hook fails closed.", why)
	var refused *hookclient.RefusedError
	if errors.As(why, &refused) {
		msg = refused.Error() + " This hook fails closed."
	}
	return deny(agent, payload, msg, stdout, stderr)
}

// errNoAnswerInTime is the cause of a forward cut off by --answer-within.
var errNoAnswerInTime = errors.New("no verdict in time")

// deny prints the agent's deny answer carrying msg (also said on stderr) or, for a
// payload with no deny answer, exits 2, which the agents read as "blocked".
func deny(agent hookclient.Agent, payload []byte, msg string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "gatehouse hook: "+msg)
	answer, ok := hookclient.Deny(agent, payload, msg)
	if !ok {
		return 2
	}
	if _, err := stdout.Write(answer); err != nil {
		return 2
	}
	return 0
}
