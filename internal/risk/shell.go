package risk

import (
	"path"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/shell"
)

// shellReasons rates a command line by the simple commands a shell would run.
func shellReasons(src, cwd string) []Reason {
	line := shell.Parse(src, cwd)
	var rs []Reason
	for _, u := range line.Unseen {
		if strings.HasPrefix(u, "cannot parse") {
			rs = append(rs, Reason{Code: "unparsed", Text: "could not be parsed", Match: clip(src), level: Medium})
			break
		}
	}
	var download, toShell, privileged bool
	var downloadText, shellText, sendText string
	cmds := append(append([]shell.Command(nil), line.Commands...), line.Wrappers...)
	tails, allTails := runTails(cmds)
	if !allTails && len(rs) == 0 {
		rs = append(rs, Reason{Code: "unparsed", Text: "could not be parsed", Match: clip(src), level: Medium})
	}
	for i, c := range append(cmds, tails...) {
		if len(c.Args) == 0 {
			continue
		}
		name, args := path.Base(c.Args[0]), c.Args[1:]
		switch name {
		case "sudo", "doas", "pkexec":
			privileged = true
			rs = append(rs, Reason{Code: "privilege", Text: "runs as another user (root)", Match: clip(c.Text), level: High})
			if len(args) > 0 && readsScript(path.Base(args[0]), args[1:]) {
				toShell, shellText = true, c.Text
			}
		case "curl", "wget":
			download, downloadText = true, c.Text
			if sendsFile(args) {
				sendText = c.Text
			}
		case "scp", "rsync", "nc", "ncat":
			sendText = c.Text
		case "rm":
			rs = append(rs, deletes(args, cwd, c.Text)...)
		case "git":
			rs = append(rs, gitReasons(args, c.Text)...)
		case "chmod":
			if wide(args) {
				rs = append(rs, Reason{Code: "wide_permissions", Text: "makes files writable by everyone", Match: clip(c.Text), level: High})
			}
		case "dd":
			for _, a := range args {
				if strings.HasPrefix(a, "of=/dev/") {
					rs = append(rs, Reason{Code: "disk_write", Text: "writes a raw device", Match: clip(c.Text), level: Critical})
				}
			}
		case "terraform", "tofu":
			if has(args, "destroy") || has(args, "-destroy") {
				rs = append(rs, teardown(c.Text))
			}
		case "kubectl", "oc":
			if len(args) > 0 && args[0] == "delete" || has(args, "delete") {
				rs = append(rs, teardown(c.Text))
			}
		case "helm":
			if has(args, "uninstall") || has(args, "delete") {
				rs = append(rs, teardown(c.Text))
			}
		case "psql", "mysql", "mariadb", "sqlite3":
			if dropsData(args) {
				rs = append(rs, teardown(c.Text))
			}
		default:
			if strings.HasPrefix(name, "mkfs") {
				rs = append(rs, Reason{Code: "disk_write", Text: "formats a file system", Match: clip(c.Text), level: Critical})
			}
			if readsScript(name, args) {
				toShell, shellText = true, c.Text
			}
		}
		if i >= len(cmds) {
			continue // a runner's tail: its words were read with the runner's
		}
		for _, a := range args {
			if secretPath(strings.TrimPrefix(a, "@")) {
				rs = append(rs, Reason{Code: "secret_read", Text: "reads a secret (keys, credentials, .env)", Match: clip(a), level: Medium})
				if sendText != "" {
					rs = append(rs, Reason{Code: "secret_sent", Text: "sends a secret off this machine", Match: clip(sendText), level: High})
				}
			}
		}
	}
	if download && (toShell || len(line.Wrappers) > 0 && hasUnseenSubst(line)) {
		lvl := High
		if privileged {
			lvl = Critical
		}
		m := downloadText + " | " + shellText
		if shellText == "" {
			m = downloadText
		}
		rs = append(rs, Reason{Code: "pipe_to_shell", Text: "downloads and runs a script", Match: clip(m), level: lvl})
	}
	return rs
}

// maxRunTails bounds how many runner tails (runTails) one line's rating reads.
const maxRunTails = 256

// runTails is what the commands that run another through a runner (sudo, env, nohup,
// timeout, xargs, zsh's noglob, …) may run: every tail of their arguments, since the
// runner's options decide where the inner command starts (`timeout 5 rm -rf ~`,
// `env A=1 rm -rf ~`). Each is rated like a command of the line — over-rating rather
// than missing, as a deny rule matches through runners. all is false when the line
// has more than maxRunTails of them (the rest are not rated).
func runTails(cmds []shell.Command) (tails []shell.Command, all bool) {
	for _, c := range cmds {
		if len(c.Args) < 2 || !shell.IsRunner(c.Args[0]) {
			continue
		}
		for k := 1; k < len(c.Args); k++ {
			if len(tails) == maxRunTails {
				return tails, false
			}
			tails = append(tails, shell.Command{Args: c.Args[k:], Text: strings.Join(c.Args[k:], " ")})
		}
	}
	return tails, true
}

// readsScript reports whether a shell runs a script it reads from its input or from a
// process substitution (`curl … | sh`, `bash <(curl …)`), not a file in the project.
func readsScript(name string, args []string) bool {
	switch name {
	case "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl", "ruby", "node":
	default:
		return false
	}
	for i, a := range args {
		if a == "-c" && i+1 < len(args) && strings.ContainsAny(args[i+1], "$`") {
			return true // the script is what a substitution prints: `bash -c "$(curl …)"`
		}
		if a == "-s" || a == "-" || strings.HasPrefix(a, "<(") || strings.HasPrefix(a, "/dev/fd/") || strings.HasPrefix(a, "/dev/stdin") {
			return true
		}
		if !strings.HasPrefix(a, "-") {
			return false // a script file
		}
	}
	return true // no script named: it reads its input
}

// hasUnseenSubst reports a command substitution the reader could not see into, such
// as `bash -c "$(curl …)"`.
func hasUnseenSubst(l *shell.Line) bool {
	for _, u := range l.Unseen {
		if strings.HasPrefix(u, "$(…)") || strings.HasPrefix(u, "`…`") || strings.HasPrefix(u, "process substitution") {
			return true
		}
	}
	return false
}

func sendsFile(args []string) bool {
	for i, a := range args {
		if strings.HasPrefix(a, "-d") || strings.HasPrefix(a, "--data") || a == "-F" || a == "--form" || a == "-T" || a == "--upload-file" {
			if strings.Contains(a, "@") || i+1 < len(args) && (strings.HasPrefix(args[i+1], "@") || strings.Contains(args[i+1], "=@") || a == "-T" || a == "--upload-file") {
				return true
			}
		}
	}
	return false
}

// deletes rates `rm` with a recursive flag by what it deletes.
func deletes(args []string, cwd, text string) []Reason {
	recursive := false
	var targets []string
	for _, a := range args {
		switch {
		case a == "--recursive" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "rR"):
			recursive = true
		case a == "--" || strings.HasPrefix(a, "-"):
		default:
			targets = append(targets, a)
		}
	}
	if !recursive {
		return nil
	}
	var rs []Reason
	for _, t := range targets {
		switch {
		case rootLike(t):
			rs = append(rs, Reason{Code: "recursive_delete", Text: "deletes the root, the home directory or everything in it", Match: clip(text), level: Critical})
		case outside(t, cwd):
			rs = append(rs, Reason{Code: "recursive_delete", Text: "deletes a directory outside the project", Match: clip(text), level: High})
		}
	}
	return rs
}

// rootLike is `/`, `~`, `$HOME` or a glob directly under them.
func rootLike(t string) bool {
	t = strings.TrimSuffix(strings.TrimSuffix(t, "*"), "/")
	switch t {
	case "", "~", "$HOME", "${HOME}", ".", "..", "/.", "/*":
		return true
	}
	return path.Clean(t) == "/" || path.Dir(path.Clean(t)) == "/" && !strings.ContainsAny(path.Base(t), "*?") && strings.Count(t, "/") == 1 && t != "/tmp" && !strings.HasPrefix(t, "/tmp/")
}

// outside reports whether p lies outside the project directory cwd (or cwd is unknown
// and p is absolute or in the home directory).
func outside(p, cwd string) bool {
	if strings.HasPrefix(p, "~") || strings.HasPrefix(p, "$HOME") || strings.HasPrefix(p, "${HOME}") {
		return true
	}
	if !path.IsAbs(p) {
		if cwd == "" {
			return strings.HasPrefix(path.Clean(p), "..")
		}
		p = path.Join(cwd, p)
	}
	if strings.HasPrefix(p, "/tmp/") {
		return false
	}
	if cwd == "" {
		return true
	}
	c := path.Clean(cwd)
	p = path.Clean(p)
	return p != c && !strings.HasPrefix(p, strings.TrimSuffix(c, "/")+"/")
}

func gitReasons(args []string, text string) []Reason {
	sub := ""
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			sub = a
			break
		}
	}
	switch sub {
	case "push":
		for _, a := range args {
			if a == "-f" || a == "--force" || strings.HasPrefix(a, "--force-with-lease") || strings.HasPrefix(a, "--force-if-includes") ||
				strings.HasPrefix(a, "+") || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "f") {
				return []Reason{{Code: "force_push", Text: "overwrites history on the remote (force push)", Match: clip(text), level: High}}
			}
			if a == "--delete" || a == "-d" {
				return []Reason{{Code: "force_push", Text: "deletes a branch on the remote", Match: clip(text), level: High}}
			}
		}
	case "reset":
		if has(args, "--hard") {
			return []Reason{{Code: "history_rewrite", Text: "discards uncommitted work (reset --hard)", Match: clip(text), level: Medium}}
		}
	case "clean":
		for _, a := range args {
			if strings.HasPrefix(a, "-") && strings.Contains(a, "f") {
				return []Reason{{Code: "history_rewrite", Text: "deletes untracked files (git clean)", Match: clip(text), level: Medium}}
			}
		}
	case "filter-branch", "filter-repo":
		return []Reason{{Code: "history_rewrite", Text: "rewrites the repository's history", Match: clip(text), level: High}}
	}
	return nil
}

func wide(args []string) bool {
	for _, a := range args {
		if a == "777" || a == "0777" || a == "666" || strings.Contains(a, "o+w") || strings.Contains(a, "a+w") || a == "a+rwx" {
			return true
		}
	}
	return false
}

func dropsData(args []string) bool {
	for _, a := range args {
		u := strings.ToUpper(a)
		if strings.Contains(u, "DROP ") || strings.Contains(u, "TRUNCATE ") || strings.Contains(u, "DELETE FROM") && !strings.Contains(u, "WHERE") {
			return true
		}
	}
	return false
}

func teardown(text string) Reason {
	return Reason{Code: "infra_teardown", Text: "deletes infrastructure or data", Match: clip(text), level: High}
}

func has(args []string, s string) bool {
	for _, a := range args {
		if a == s {
			return true
		}
	}
	return false
}

// clip bounds what a reason quotes.
func clip(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
