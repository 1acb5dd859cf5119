//go:build unix

package ollamatest

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the command in a process group of its own, so that
// Stop reaches the runners it starts.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends SIGTERM (or SIGKILL when kill is set) to the command's
// whole process group. Errors (a group already gone) are of no interest.
func signalGroup(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
