//go:build !unix

package upstream

import "os/exec"

// detachProcessGroup is a no-op where process groups do not exist.
func detachProcessGroup(*exec.Cmd) {}
