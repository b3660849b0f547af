//go:build !unix

package transport

import "os/exec"

// Without process groups (Windows would need a Job Object, not
// implemented) only the direct child is managed: grandchildren may
// survive, and the group counts as gone once the child has been reaped.

func startInOwnGroup(*exec.Cmd) {}

func terminateGroup(p *Process) { _ = p.cmd.Process.Kill() }

func killGroup(p *Process) { _ = p.cmd.Process.Kill() }

func groupGone(p *Process) bool { return p.reaped.Load() }
