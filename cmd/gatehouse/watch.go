package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gatehouse-dev/gatehouse/internal/apiclient"
)

// newWatchCmd is `gatehouse watch`: every prompt waiting for the caller, a line each as
// it arrives, and a line when it is decided, until Ctrl-C. The stream reconnects with
// backoff when it drops (a restart, a proxy's timeout); what was missed meanwhile is
// caught up from the pending list.
func newWatchCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "watch",
		Short:   "print each request as it arrives, and each decision, until Ctrl-C",
		Long:    "Prints each request waiting for you as it arrives (id, risk, agent, what it asks), and a line when it is decided, until Ctrl-C.",
		GroupID: groupTerminal,
		Args:    noArgs,
	}
	flags := addClientFlags(cmd.Flags(), c.getenv, defaultURL)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		out := &watchPrinter{w: c.stdout, now: time.Now}
		cl := flags.client("gatehouse watch", c.getenv, c.stderr)
		err := cl.Watch(cmd.Context(), apiclient.WatchHandler{
			Pending: out.pending,
			Decided: out.decided,
			Connected: func() {
				fmt.Fprintf(c.stderr, "gatehouse watch: following %s (Ctrl-C stops)\n", cl.Base)
			},
			Dropped: func(err error, wait time.Duration) {
				fmt.Fprintf(c.stderr, "gatehouse watch: %v; reconnecting in %s\n", err, wait.Round(100*time.Millisecond))
			},
		})
		if err != nil {
			return &exitError{code: 1, msg: "gatehouse watch: " + err.Error()}
		}
		return nil
	}
	return cmd
}

// watchPrinter writes watch's lines: the time, the prompt's id, then what happened.
type watchPrinter struct {
	w   io.Writer
	now func() time.Time
}

// pending prints a prompt: id, risk level (when rated), agent, and what it asks.
func (p *watchPrinter) pending(r apiclient.Pending) {
	fields := []string{r.ID}
	if r.Risk != "" {
		fields = append(fields, r.Risk)
	}
	fields = append(fields, orDash(r.Agent), oneLine(r.Message, 100))
	p.line(strings.Join(fields, "  "))
}

// decided prints how a prompt ended.
func (p *watchPrinter) decided(d apiclient.Decision) {
	s := d.ID + "  " + d.Outcome
	if d.By != "" {
		s += " by " + d.By
	}
	p.line(s)
}

func (p *watchPrinter) line(s string) {
	fmt.Fprintf(p.w, "%s  %s\n", p.now().Format(time.TimeOnly), s)
}
