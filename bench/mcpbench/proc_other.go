//go:build !linux

package mcpbench

import (
	"errors"
	"time"
)

// Memory is a process's resident set size, from /proc/<pid>/status.
type Memory struct {
	HWMKiB  int64 `json:"vmHWMKiB"`
	RSSKiB  int64 `json:"vmRSSKiB"`
	AnonKiB int64 `json:"rssAnonKiB,omitempty"`
	FileKiB int64 `json:"rssFileKiB,omitempty"`
}

// ReadMemory needs Linux's /proc.
func ReadMemory(int) (Memory, error) {
	return Memory{}, errors.New("mcpbench: reading memory needs Linux's /proc")
}

// CPU is processor time used, user plus system; it is not measured off Linux.
type CPU struct {
	Self     time.Duration
	Children time.Duration
}

// ReadCPU returns zero off Linux.
func ReadCPU() CPU { return CPU{} }

// Sub returns c - o.
func (c CPU) Sub(o CPU) CPU { return CPU{Self: c.Self - o.Self, Children: c.Children - o.Children} }
