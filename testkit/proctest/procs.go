package proctest

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// Proc is one live process as /proc/PID/stat shows it.
type Proc struct {
	PID, PPID int
	PGID      int    // its process group
	Comm      string // its command name (the executable's, cut to 15 bytes)
	Start     uint64 // its start time in clock ticks since boot: tells a reused PID apart
}

// List returns the live processes, read from /proc (Linux: elsewhere it fails the test);
// zombies are left out (they are gone, only not yet reaped), as are processes that end while
// List reads them.
func List(t testing.TB) []Proc {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
		// utime stime cutime cstime priority nice threads itrealvalue starttime ...; comm may
		// hold anything, parentheses included, so the fields start after the last ')'.
		s := string(raw)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		p := Proc{PID: pid, Comm: s[open+1 : end]}
		p.PPID, _ = strconv.Atoi(f[1])
		p.PGID, _ = strconv.Atoi(f[2])
		p.Start, _ = strconv.ParseUint(f[19], 10, 64)
		out = append(out, p)
	}
	return out
}

// Descendants returns the processes of all whose chain of parents leads to pid.
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
