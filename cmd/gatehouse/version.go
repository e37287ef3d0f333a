package main

import (
	"fmt"
	"runtime/debug"
	"strings"
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

// usage lists the subcommands (`gatehouse help`, `gatehouse --help`).
const usage = `Gatehouse: a person approves what an AI coding agent does.

Usage:
  gatehouse [command] [flags]

Server:
  serve             run the server (the default command; gatehouse serve -h lists its flags)
  migrate           apply the database migrations and exit
  audit verify      recompute the audit hash chain

Agents:
  setup <agent>     print an agent's hook settings for this server, or --install them
  hook <agent>      forward an agent's command hook to Gatehouse (run by the agent)
  bridge opencode   gate an OpenCode server's permission requests (opencode serve)

Deciding from a terminal (--url/GATEHOUSE_URL, --token/GATEHOUSE_TOKEN):
  pending           list the requests waiting for you
  approve ID        approve a request
  reject ID         reject a request (--reason R tells the agent why)

Other:
  version           print the version and commit
  help              show this help

Run "gatehouse <command> -h" for a command's flags. Docs: docs/cli.md.
`
