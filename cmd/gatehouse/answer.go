package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/apiclient"
)

// newPendingCmd is `gatehouse pending`: the requests waiting for the caller, one a line.
func newPendingCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "pending",
		Short:   "list the requests waiting for you",
		GroupID: groupTerminal,
		Args:    noArgs,
	}
	flags := addClientFlags(cmd.Flags(), c.getenv, defaultURL)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
		defer cancel()
		list, err := flags.client("gatehouse pending", c.getenv, c.stderr).Pending(ctx)
		if err != nil {
			return &exitError{code: 1, msg: "gatehouse pending: " + err.Error()}
		}
		if len(list) == 0 {
			fmt.Fprintln(c.stdout, "Nothing is waiting for you.")
			return nil
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tRISK\tSESSION\tREQUEST")
		for _, p := range list {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", p.ID, orDash(p.Risk), oneLine(p.Session, 30), oneLine(p.Message, 80))
		}
		return w.Flush()
	}
	return cmd
}

// newAnswerCmd is `gatehouse approve ID` (action accept) or `gatehouse reject ID
// [--reason R]` (action decline).
func newAnswerCmd(c *cli, action string) *cobra.Command {
	name, short, verb := "approve", "approve a request", "Approved"
	if action == "decline" {
		name, short, verb = "reject", "reject a request (--reason R tells the agent why)", "Rejected"
	}
	cmd := &cobra.Command{
		Use:     name + " ID",
		Short:   short,
		Long:    short + ". ID is a pending request's id, or enough of its start to name one (gatehouse pending lists them).",
		GroupID: groupTerminal,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("usage: gatehouse %s ID [--reason R]  (gatehouse pending lists the ids)", name)
			}
			return nil
		},
	}
	flags := addClientFlags(cmd.Flags(), c.getenv, defaultURL)
	reason := cmd.Flags().String("reason", "", "why, sent to the agent (with reject)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		fail := func(format string, a ...any) error {
			return &exitError{code: 1, msg: fmt.Sprintf("gatehouse "+name+": "+format, a...)}
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
		defer cancel()
		cl := flags.client("gatehouse "+name, c.getenv, c.stderr)
		p, err := cl.Find(ctx, args[0])
		if err != nil {
			return fail("%v", err)
		}
		outcome, by, err := cl.Resolve(ctx, p.SessionID, p.ID, action, strings.TrimSpace(*reason))
		var apiErr *apiclient.Error
		switch {
		case errors.As(err, &apiErr):
			return fail("%v", apiErr)
		case err != nil:
			return fail("%v", err)
		case outcome == "already_resolved":
			return fail("%s was already decided by %s", p.ID, by)
		}
		fmt.Fprintf(c.stdout, "%s %s: %s\n", verb, p.ID, oneLine(p.Message, 80))
		return nil
	}
	return cmd
}

// orDash is s, or "-" for nothing.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine shows s on one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
