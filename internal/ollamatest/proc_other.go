//go:build !unix

package ollamatest

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

// signalGroup kills the serve process alone: without process groups its
// runners are not reached.
func signalGroup(cmd *exec.Cmd, kill bool) {
	if kill {
		_ = cmd.Process.Kill()
	}
}
