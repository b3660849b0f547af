// Package procfs reads Linux's process table from /proc: each process's stat line (its
// parent, group, state, command and start time), the processes below one, and the fields
// of /proc/PID/status. It is the one parser of /proc for the stdio transport (is a process
// group gone?), the tests that check what a harness leaves behind, and the benchmarks that
// measure processes' memory. On other systems every call fails: /proc does not exist.
//
// Every function is safe for concurrent use; a Proc is a plain value.
package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Proc is one process as /proc/PID/stat shows it.
type Proc struct {
	PID, PPID int
	PGID      int    // its process group
	State     byte   // R, S, D, Z (a zombie), X (dead), …
	Comm      string // its command name (the executable's, cut to 15 bytes)
	Start     uint64 // its start time in clock ticks since boot: tells a reused PID apart
}

// Gone reports whether the process has ended and only waits to be reaped (a zombie, or dead).
func (p Proc) Gone() bool { return p.State == 'Z' || p.State == 'X' }

// Stat reads /proc/PID/stat.
func Stat(pid int) (Proc, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, err
	}
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
	// stime cutime cstime priority nice threads itrealvalue starttime ...; comm may hold
	// anything, parentheses included, so the fields start after the last ')'.
	open, end := bytes.IndexByte(raw, '('), bytes.LastIndexByte(raw, ')')
	if open < 0 || end < open {
		return Proc{}, fmt.Errorf("procfs: /proc/%d/stat: no command name", pid)
	}
	f := bytes.Fields(raw[end+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return Proc{}, fmt.Errorf("procfs: /proc/%d/stat: %d fields after the command name, want at least 20", pid, len(f))
	}
	p := Proc{PID: pid, State: f[0][0], Comm: string(raw[open+1 : end])}
	var errs [3]error
	p.PPID, errs[0] = strconv.Atoi(string(f[1]))
	p.PGID, errs[1] = strconv.Atoi(string(f[2]))
	p.Start, errs[2] = strconv.ParseUint(string(f[19]), 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return Proc{}, fmt.Errorf("procfs: /proc/%d/stat: %w", pid, err)
	}
	return p, nil
}

// List returns every process in /proc, zombies included; a process that ends while List
// reads the table is left out.
func List() ([]Proc, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := make([]Proc, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue // not a process
		}
		if p, err := Stat(pid); err == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// Descendants returns the processes of all whose chain of parents leads to pid (pid itself
// not included), in the order of all.
func Descendants(all []Proc, pid int) []Proc {
	byPID := make(map[int]Proc, len(all))
	for _, p := range all {
		byPID[p.PID] = p
	}
	var out []Proc
	for _, p := range all {
		for q, ok := p, true; ok && q.PPID > 1; q, ok = byPID[q.PPID] {
			if q.PPID == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// StatusKB returns a field of /proc/PID/status counted in kB (VmHWM, VmRSS, …).
func StatusKB(pid int, field string) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("procfs: /proc/%d/status: %s %q: %w", pid, field, strings.TrimSpace(rest), err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("procfs: /proc/%d/status: no %s", pid, field)
}
