//go:build linux

package mcpbench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Memory is a process's resident set size, from /proc/<pid>/status.
type Memory struct {
	// HWMKiB is VmHWM: the peak resident set size.
	HWMKiB int64 `json:"vmHWMKiB"`
	// RSSKiB is VmRSS: the resident set size now.
	RSSKiB int64 `json:"vmRSSKiB"`
	// AnonKiB is RssAnon, the part of VmRSS that is the process's own memory (heap,
	// stacks, runtime); FileKiB is RssFile, the part that is mapped files, mostly the
	// executable's pages — shared with the page cache and every process running the same
	// binary, and mapped whole in 2 MiB folios by kernels with large folios for files.
	// Both are now, not peaks (status has no peak of either).
	AnonKiB int64 `json:"rssAnonKiB,omitempty"`
	FileKiB int64 `json:"rssFileKiB,omitempty"`
}

// ReadMemory reads the memory of process pid (0: this process). It needs Linux's /proc.
func ReadMemory(pid int) (Memory, error) {
	path := "/proc/self/status"
	if pid != 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/status"
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Memory{}, err
	}
	return parseStatus(b)
}

// parseStatus reads VmHWM and VmRSS ("VmHWM:     12345 kB") from a status file, and
// RssAnon and RssFile where the kernel reports them.
func parseStatus(b []byte) (Memory, error) {
	var m Memory
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		var field *int64
		switch key {
		case "VmHWM":
			field = &m.HWMKiB
		case "VmRSS":
			field = &m.RSSKiB
		case "RssAnon":
			field = &m.AnonKiB
		case "RssFile":
			field = &m.FileKiB
		}
		if !ok || field == nil {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return Memory{}, fmt.Errorf("unexpected %s line %q", key, sc.Text())
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("%s: %w", key, err)
		}
		*field = n
		if key == "VmHWM" || key == "VmRSS" {
			found++
		}
	}
	if found != 2 {
		return Memory{}, fmt.Errorf("status has no VmHWM or VmRSS line")
	}
	return m, nil
}

// CPU is processor time used, user plus system.
type CPU struct {
	Self     time.Duration // this process
	Children time.Duration // its reaped children
}

// ReadCPU returns the processor time this process and its reaped children used so far.
func ReadCPU() CPU {
	return CPU{Self: rusage(syscall.RUSAGE_SELF), Children: rusage(syscall.RUSAGE_CHILDREN)}
}

// Sub returns c - o.
func (c CPU) Sub(o CPU) CPU { return CPU{Self: c.Self - o.Self, Children: c.Children - o.Children} }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
