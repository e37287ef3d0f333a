//go:build unix

package upstream

import (
	"os/exec"
	"syscall"
)

// detachProcessGroup puts a stdio server in its own process group, so a Ctrl-C on
// Gatehouse's terminal does not kill the servers before Gatehouse reaps them itself.
func detachProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
