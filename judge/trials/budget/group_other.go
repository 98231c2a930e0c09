//go:build !unix

package budget

import (
	"os/exec"
	"syscall"
)

// ownGroup: where there are no process groups (Windows) the tool runs as
// it is started.
func ownGroup(*exec.Cmd) {}

// signalGroup: without process groups only the tool itself is reached;
// where SIGINT and SIGTERM cannot be sent (Windows) it is killed when
// their graces are over.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		_ = cmd.Process.Kill()
		return
	}
	_ = cmd.Process.Signal(sig)
}
