// Package shell reads a shell command line the way a shell would, without running or
// expanding anything, so that rules can be matched per simple command.
//
// A rule written for "git status" must never approve "git status; rm -rf ~": the text
// begins with the rule, but the shell runs two commands. Parse splits a command line
// into every simple command a shell would run — through lists, pipes, subshells,
// blocks, function bodies, command and process substitutions, and the literal scripts
// of `bash -c` and `eval` — and names everything it cannot read statically (an
// expansion whose value is only known when it runs, a redirection to a file outside
// the project, input it cannot parse). A Pattern then allows a line only when every
// command matches it and nothing is unseen, and denies a line when any command does.
//
// The parser is mvdan.cc/sh (bash variant). Nothing here executes, expands or reads
// files: a `$HOME` stays `$HOME` and makes the line unseen.
package shell
