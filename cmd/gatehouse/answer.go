package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/apiclient"
)

// clientFlags are the flags every command that talks to a server takes: --url and
// --token (GATEHOUSE_URL, GATEHOUSE_TOKEN).
func clientFlags(fs *flag.FlagSet, getenv func(string) string) (base, token *string) {
	base = fs.String("url", firstSet(getenv, defaultURL, "GATEHOUSE_URL"), "the Gatehouse server (env `GATEHOUSE_URL`)")
	token = fs.String("token", getenv("GATEHOUSE_TOKEN"), "an API `token` from /settings/tokens (env GATEHOUSE_TOKEN)")
	return base, token
}

func newClient(base, token string) *apiclient.Client {
	return &apiclient.Client{Base: strings.TrimRight(strings.TrimSpace(base), "/"), Token: strings.TrimSpace(token)}
}

// runPending is `gatehouse pending`: the requests waiting for the caller, one a line.
func runPending(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gatehouse pending", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base, token := clientFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return exitFlag(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := newClient(*base, *token).Pending(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "gatehouse pending:", err)
		return 1
	}
	if len(list) == 0 {
		fmt.Fprintln(stdout, "Nothing is waiting for you.")
		return 0
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tRISK\tSESSION\tREQUEST")
	for _, p := range list {
		risk := p.Risk
		if risk == "" {
			risk = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", p.ID, risk, oneLine(p.Session, 30), oneLine(p.Message, 80))
	}
	w.Flush()
	return 0
}

// runAnswer is `gatehouse approve|reject ID [--reason R]`.
func runAnswer(action string, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	name := "approve"
	if action == "decline" {
		name = "reject"
	}
	fs := flag.NewFlagSet("gatehouse "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	base, token := clientFlags(fs, getenv)
	reason := fs.String("reason", "", "why, sent to the agent (with reject)")
	id, rest := "", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		id, rest = args[0], args[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return exitFlag(err)
	}
	if id == "" && fs.NArg() == 1 {
		id = fs.Arg(0)
	}
	if id == "" || fs.NArg() > 1 {
		fmt.Fprintf(stderr, "usage: gatehouse %s ID [--reason R]  (gatehouse pending lists the ids)\n", name)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newClient(*base, *token)
	p, err := c.Find(ctx, id)
	if err != nil {
		fmt.Fprintf(stderr, "gatehouse %s: %v\n", name, err)
		return 1
	}
	outcome, by, err := c.Resolve(ctx, p.SessionID, p.ID, action, strings.TrimSpace(*reason))
	var apiErr *apiclient.Error
	switch {
	case errors.As(err, &apiErr):
		fmt.Fprintf(stderr, "gatehouse %s: %v\n", name, apiErr)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "gatehouse %s: %v\n", name, err)
		return 1
	case outcome == "already_resolved":
		fmt.Fprintf(stderr, "gatehouse %s: %s was already decided by %s\n", name, p.ID, by)
		return 1
	}
	verb := "Approved"
	if action == "decline" {
		verb = "Rejected"
	}
	fmt.Fprintf(stdout, "%s %s: %s\n", verb, p.ID, oneLine(p.Message, 80))
	return 0
}

// oneLine shows s on one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func exitFlag(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}
