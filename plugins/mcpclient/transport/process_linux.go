package transport

import (
	"bytes"
	"os"
	"strconv"
)

// onlyZombiesInGroup reports whether every process in group pgid is a
// zombie, by scanning /proc. It reports false when /proc is unreadable,
// so an unverifiable group is never called gone.
func onlyZombiesInGroup(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, group, ok := procState(pid)
		if ok && group == pgid && state != 'Z' && state != 'X' {
			return false
		}
	}
	return true
}

// procState reads the state letter and process group of pid from
// /proc/<pid>/stat ("pid (comm) state ppid pgrp ..."; comm may contain
// spaces and parentheses, so parse after the last ')').
func procState(pid int) (state byte, pgrp int, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err = strconv.Atoi(string(fields[2]))
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pgrp, true
}
