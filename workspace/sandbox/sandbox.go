// Package sandbox runs a command under Linux's Landlock: writes only where a [Policy]
// allows, reads everywhere but its denied paths, the network on or off, signals and
// abstract sockets kept inside. It also reports, for the kernel it runs on, how much of a
// policy is enforced ([Probe], [Assess]): all of it, part of it (naming what is not), or
// nothing (no Landlock: a warning, never silent full access).
//
// A command runs through a helper: the calling binary re-executed with [HelperArg] as its
// first argument ([Command]). The helper, which every binary that runs sandboxed commands
// must start with [Main] first thing in main (and TestMain), applies the policy to itself
// (Landlock is inherited and cannot be undone), starts the command as its child, waits for
// it and exits with its status. It stays the command's supervisor: when the process that
// started it dies, even by SIGKILL, the helper kills the command's whole process group, so
// no command outlives the workspace that ran it.
//
// The policy's rules are computed by the helper just before it applies them: reads are
// granted on every entry of the file system's root but the denied paths (around which the
// grants go one level down at a time; the directories on the way can be listed, not read),
// and in /proc on the system's files and the helper's own process only, so a command cannot
// read another process's environment — the harness's API keys — through /proc/PID/environ.
//
// # Concurrency
//
// The functions are safe for concurrent use; a [Policy] is a plain value.
package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// HelperArg is the first argument that makes a binary the sandbox helper (see [Main]).
const HelperArg = "__harness-sandbox"

// Policy is what a command may do.
type Policy struct {
	// Landlock applies the restrictions below; without it the command runs unrestricted
	// (danger-full-access), still supervised.
	Landlock bool `json:"landlock"`
	// Writable are the directories (and files) the command may change; everything else is
	// read-only.
	Writable []string `json:"writable,omitempty"`
	// DenyRead are the paths the command may not read (nor write).
	DenyRead []string `json:"denyRead,omitempty"`
	// Network allows TCP and UDP; without it the kernel refuses what it can (TCP from ABI 4,
	// UDP from ABI 10).
	Network bool `json:"network"`
	// Parent is the pid of the process that starts the helper (Command sets it): a helper
	// whose parent is already gone when it starts runs nothing.
	Parent int `json:"parent,omitempty"`
}

// Level is how much of a policy the kernel enforces.
type Level string

// The levels.
const (
	// LevelFull: everything the policy restricts is enforced.
	LevelFull Level = "full"
	// LevelPartial: some restrictions are not (see Report.Missing).
	LevelPartial Level = "partial"
	// LevelNone: nothing is enforced (no Landlock, or a policy without it).
	LevelNone Level = "none"
)

// Report is what a kernel enforces of a policy.
type Report struct {
	// ABI is the Landlock ABI version the kernel offers (0: none).
	ABI   int   `json:"abi"`
	Level Level `json:"level"`
	// Enforced and Missing name the restrictions the kernel applies and those it cannot
	// (each with the ABI version that brings it).
	Enforced []string `json:"enforced,omitempty"`
	Missing  []string `json:"missing,omitempty"`
	// Why says why nothing is enforced (no Landlock in the kernel, the policy asks for
	// none).
	Why string `json:"why,omitempty"`
}

// String words a report in one line.
func (r Report) String() string {
	switch r.Level {
	case LevelNone:
		return "enforcement none: " + r.Why
	case LevelFull:
		return fmt.Sprintf("enforcement full (Landlock ABI %d: %s)", r.ABI, strings.Join(r.Enforced, ", "))
	}
	return fmt.Sprintf("enforcement partial (Landlock ABI %d: %s; not enforced: %s)", r.ABI, strings.Join(r.Enforced, ", "), strings.Join(r.Missing, ", "))
}

// Assess returns what a kernel offering Landlock ABI abi enforces of p.
func Assess(p Policy, abi int) Report {
	r := Report{ABI: abi}
	switch {
	case !p.Landlock:
		r.Level, r.Why = LevelNone, "the mode asks for no sandbox (danger-full-access)"
		return r
	case abi <= 0:
		r.Level, r.Why = LevelNone, "this kernel has no Landlock (Linux 5.13 or later with landlock in its LSM list is needed): commands run with your full access"
		return r
	}
	need := func(min int, what string) {
		if abi >= min {
			r.Enforced = append(r.Enforced, what)
		} else {
			r.Missing = append(r.Missing, fmt.Sprintf("%s (ABI %d)", what, min))
		}
	}
	need(1, "file writes outside the writable directories")
	need(1, "reads of the denied paths")
	need(3, "truncation")
	need(5, "device ioctls")
	need(6, "signals and abstract sockets outside the sandbox")
	need(9, "connections to Unix sockets by path")
	if !p.Network {
		need(4, "TCP")
		need(10, "UDP")
	}
	r.Level = LevelFull
	if len(r.Missing) > 0 {
		r.Level = LevelPartial
	}
	return r
}

// Command returns the command that runs argv (its first element an absolute path) under p
// through the helper: helper (the binary and any arguments before HelperArg; nil: this
// executable) re-executed. The caller sets its directory, environment, streams and process
// group, and starts it.
func Command(helper []string, p Policy, argv []string) (*exec.Cmd, error) {
	if len(helper) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("sandbox: finding this executable to run the helper: %w", err)
		}
		helper = []string{exe}
	}
	p.Parent = os.Getpid()
	pol, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	args := append(append(append([]string{}, helper[1:]...), HelperArg, string(pol), "--"), argv...)
	return exec.Command(helper[0], args...), nil
}
