package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise the
// module version and VCS revision Go recorded in the binary are printed.
var version = ""

// versionLine is what `gatehouse version` prints: the version, then the commit and its
// time when the build recorded them (go build in a checkout does; go run does not).
func versionLine() string {
	if version != "" {
		return "gatehouse " + version // a release names itself
	}
	v := "(devel)"
	info, ok := debug.ReadBuildInfo()
	if ok && info.Main.Version != "" {
		v = info.Main.Version
	}
	var extra []string
	if ok {
		var rev, at string
		dirty := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			extra = append(extra, "commit "+rev[:min(12, len(rev))])
		}
		if at != "" {
			extra = append(extra, at)
		}
		if dirty {
			extra = append(extra, "modified")
		}
		extra = append(extra, info.GoVersion)
	}
	if len(extra) == 0 {
		return "gatehouse " + v
	}
	return fmt.Sprintf("gatehouse %s (%s)", v, strings.Join(extra, ", "))
}

// newVersionCmd is `gatehouse version` (and `gatehouse --version`).
func newVersionCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "print the version and commit",
		GroupID: groupOther,
		Args:    noArgs,
		Run: func(*cobra.Command, []string) {
			fmt.Fprintln(c.stdout, versionLine())
		},
	}
}
