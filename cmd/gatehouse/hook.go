package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/gatehouse-dev/gatehouse/internal/hookclient"
)

// maxHookPayload caps what the forwarder reads from stdin (the server's own body cap
// is 1 MiB by default; a larger payload is refused there with a 413 and a message).
const maxHookPayload = 8 << 20

// runHook is `gatehouse hook <agent>`: a command hook of any agent the registry says
// forwards (hookclient.Names). It reads the hook payload on stdin, posts it to
// {url}/v1/hooks/{agent} with the token as a bearer credential, and prints the server's
// answer on stdout exactly as received. Whatever goes wrong — no URL, a server that is down, a 401, a 5xx, a body
// that is not an answer — it prints nothing and exits 0, so the agent asks locally; with
// --fail-closed it prints a deny in the agent's format instead. Either way the reason
// goes to stderr.
func runHook(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "usage: gatehouse hook "+strings.Join(hookclient.Names(), "|")+" [--url URL] [--token TOKEN | --token-env NAME] [--fail-closed] [--reattach-for D] [--connect-timeout D] [--answer-within D]")
		return 2
	}
	agent, ok := hookclient.Lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "gatehouse hook: unknown agent %q (want %s)\n", args[0], strings.Join(hookclient.Names(), " or "))
		return 2
	}
	fs := flag.NewFlagSet("gatehouse hook "+agent.Name(), flag.ContinueOnError)
	fs.SetOutput(stderr)
	baseURL := fs.String("url", getenv("GATEHOUSE_URL"), "Gatehouse base URL, e.g. https://gatehouse.example.com (env GATEHOUSE_URL)")
	token := fs.String("token", getenv("GATEHOUSE_TOKEN"), "API token sent as a bearer credential (env GATEHOUSE_TOKEN; prefer the variable: flags show in ps)")
	tokenEnv := fs.String("token-env", "", "read the token from this environment variable instead (what claude-settings --command --token-env prints)")
	failClosed := fs.Bool("fail-closed", false, "when Gatehouse gives no usable answer (unreachable, 401, 5xx, garbage), deny instead of letting the agent ask locally")
	reattachFor := fs.Duration("reattach-for", hookclient.DefaultReattachFor, "how long to keep re-attaching to the prompt after a dropped connection")
	connectTimeout := fs.Duration("connect-timeout", hookclient.DefaultConnectWindow, "how long to keep trying to reach a server not reached yet")
	answerWithin := fs.Duration("answer-within", 0, "deny (in the agent's format) when no verdict has come within this long, or the wait ended without one; set it below the hook timeout of an agent that runs the tool when its hook times out (Gemini CLI, Copilot CLI)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gatehouse hook: unexpected argument %q\n", fs.Arg(0))
		return 2
	}

	if *tokenEnv != "" {
		*token = getenv(*tokenEnv)
		if strings.TrimSpace(*token) == "" {
			fmt.Fprintf(stderr, "gatehouse hook: --token-env %s: the variable is empty or unset; sending no token\n", *tokenEnv)
		}
	}
	payload, err := io.ReadAll(io.LimitReader(stdin, maxHookPayload+1))
	if err == nil && len(payload) > maxHookPayload {
		err = fmt.Errorf("the hook payload is larger than %d bytes", maxHookPayload)
	}
	if err != nil {
		return hookFallback(agent, payload, fmt.Errorf("reading stdin: %w", err), *failClosed, stdout, stderr)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *answerWithin > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, *answerWithin, errNoAnswerInTime)
		defer cancel()
	}
	out := hookclient.Forward(ctx, hookclient.Options{
		Agent: agent, BaseURL: *baseURL, Token: strings.TrimSpace(*token),
		ConnectWindow: *connectTimeout, ReattachFor: *reattachFor,
		Logf: func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) },
	}, payload)
	if errors.Is(context.Cause(ctx), errNoAnswerInTime) && len(out.Answer) == 0 {
		// The agent would run the tool once its own hook timeout passed: deny first,
		// whatever --fail-closed says, since silence here means "allow".
		msg := fmt.Sprintf("Nobody answered in Gatehouse within %s, so this hook denied the request before the agent's hook timeout.", *answerWithin)
		return deny(agent, payload, msg, stdout, stderr)
	}
	if out.Err != nil {
		return hookFallback(agent, payload, out.Err, *failClosed, stdout, stderr)
	}
	if len(out.Answer) == 0 && *answerWithin > 0 {
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

// errNoAnswerInTime is the cause of a forward cut off by --answer-within.
var errNoAnswerInTime = errors.New("no verdict in time")

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
