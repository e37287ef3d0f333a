package risk

import (
	"path"
	"strings"
)

// fileReasons rates writing (or, with write false, reading) the file at p.
func fileReasons(p, cwd string, write bool) []Reason {
	if p == "" {
		return nil
	}
	if secretPath(p) {
		if write {
			return []Reason{{Code: "secret_file", Text: "writes a secret (keys, credentials, .env)", Match: clip(p), level: High}}
		}
		return []Reason{{Code: "secret_read", Text: "reads a secret (keys, credentials, .env)", Match: clip(p), level: Medium}}
	}
	if !write {
		return nil
	}
	if systemFile(p) {
		return []Reason{{Code: "system_file", Text: "changes a system or shell start-up file", Match: clip(p), level: High}}
	}
	if cwd != "" && outside(p, cwd) {
		return []Reason{{Code: "outside_project", Text: "writes outside the project", Match: clip(p), level: Medium}}
	}
	return nil
}

// secretPath reports a path that holds secrets: .env files, SSH and cloud credentials,
// private keys.
func secretPath(p string) bool {
	if p == "" {
		return false
	}
	base := path.Base(p)
	for _, tmpl := range []string{".example", ".sample", ".template", ".dist"} {
		if strings.HasSuffix(base, tmpl) {
			return false
		}
	}
	switch {
	case base == ".env" || strings.HasPrefix(base, ".env."),
		strings.HasSuffix(base, ".pem"), strings.HasSuffix(base, ".key"), strings.HasSuffix(base, ".p12"),
		strings.HasPrefix(base, "id_rsa"), strings.HasPrefix(base, "id_ed25519"), strings.HasPrefix(base, "id_ecdsa"),
		base == ".netrc", base == ".pgpass", base == "credentials" && strings.Contains(p, ".aws"):
		return true
	}
	return strings.Contains(p, "/.ssh/") || strings.HasPrefix(p, "~/.ssh") || strings.HasPrefix(p, ".ssh/") ||
		strings.Contains(p, "/.aws/") || strings.HasPrefix(p, "~/.aws") || strings.Contains(p, "/.gnupg/")
}

// systemFile is a file outside any project that changes how the machine or the shell
// behaves.
func systemFile(p string) bool {
	for _, dir := range []string{"/etc/", "/usr/", "/bin/", "/sbin/", "/boot/", "/lib/", "/lib64/", "/var/spool/cron"} {
		if strings.HasPrefix(p, dir) {
			return true
		}
	}
	switch path.Base(p) {
	case ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".bash_login", "authorized_keys", ".gitconfig":
		return strings.HasPrefix(p, "~") || strings.HasPrefix(p, "/home/") || strings.HasPrefix(p, "/root/") || strings.HasPrefix(p, "$HOME")
	}
	return false
}
