package main

import (
	"fmt"
	"io"

	"github.com/gatehouse-dev/gatehouse/internal/agents"
	"github.com/gatehouse-dev/gatehouse/models"
)

// printSettings prints the settings snippet of the registry's agent named agent, made
// from o, to stdout and its notes to stderr; cmd names the command in errors.
func printSettings(cmd, agent string, o models.SettingsOptions, stdout, stderr io.Writer) int {
	a, ok := agents.Default().Lookup(agent)
	if !ok {
		fmt.Fprintf(stderr, "%s: no agent %q in the registry\n", cmd, agent)
		return 1
	}
	s, err := a.Settings(o)
	if err != nil {
		fmt.Fprintln(stderr, cmd+":", err)
		return 2
	}
	fmt.Fprint(stdout, s.Text)
	for _, n := range s.Notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	return 0
}
