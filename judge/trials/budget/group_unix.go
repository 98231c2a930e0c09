//go:build unix

package budget

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// signalGroup sends sig to cmd's process group: the tool and what it
// started.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
