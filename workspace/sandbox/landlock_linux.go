package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Probe returns the Landlock ABI version this kernel offers (0: none), as go-landlock
// counts it: a kernel whose signal scoping has a known bug (no errata fix) counts as 5.
func Probe() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	if v >= 6 {
		if errata, err := ll.LandlockGetErrata(); err != nil || errata&0x2 == 0 {
			v = 5
		}
	}
	return v
}

// watchParent asks the kernel for SIGHUP when the helper's parent dies.
func watchParent() error {
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGHUP), 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_PDEATHSIG): %w", err)
	}
	return nil
}

// Access rights, from go-landlock's canned sets.
const (
	read     = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	readDir  = ll.AccessFSReadDir
	fileOnly = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	write    = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar | ll.AccessFSMakeDir |
		ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym |
		ll.AccessFSTruncate | ll.AccessFSRefer | ll.AccessFSResolveUnix
)

// devices are the device files every command may write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

// restrict applies p to the calling goroutine's thread, which it locks and never unlocks
// (the Go runtime retires it rather than reuse it): the command, forked from that
// goroutine, inherits the thread's domain; the helper's other threads, which only wait, stay
// as they were.
func restrict(p Policy) error {
	cfg := landlock.V11
	if p.Network {
		cfg.HandledAccessNet = 0
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules(p)...)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if fd < 0 {
		return nil // no Landlock: the caller knew (Assess) and said so
	}
	defer func() { _ = unix.Close(fd) }()
	runtime.LockOSThread() // never unlocked: this thread is the restricted one
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// grant is one rule in the making: a path and its rights.
type grant struct {
	path   string
	access landlock.AccessFSSet
}

// rules computes the policy's rules on the file system as it is now.
func rules(p Policy) []landlock.Rule {
	deny := make([]string, 0, len(p.DenyRead))
	for _, d := range p.DenyRead {
		deny = append(deny, resolved(d))
	}
	var grants []grant
	grants = expand(grants, "/", read, deny)
	for _, w := range p.Writable {
		grants = expand(grants, resolved(w), read|write, deny)
	}
	for _, d := range devices {
		grants = append(grants, grant{d, fileOnly &^ ll.AccessFSExecute})
	}
	out := make([]landlock.Rule, 0, len(grants))
	for _, g := range grants {
		fi, err := os.Stat(g.path)
		if err != nil {
			continue // gone since it was listed, or a dangling link: nothing to grant
		}
		a := g.access
		if !fi.IsDir() {
			a &= fileOnly
		}
		if a == 0 {
			continue
		}
		// IgnoreIfMissing: what was listed may be gone by now (a compiler's file in /tmp).
		out = append(out, landlock.PathAccess(a, g.path).IgnoreIfMissing())
	}
	return out
}

// resolved returns p with its symbolic links resolved, or p when it does not exist.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// under reports whether p is d or below it.
func under(p, d string) bool {
	return p == d || d == "/" || strings.HasPrefix(p, d+"/")
}

// expand grants access on path, going around the denied paths: a denied path gets nothing,
// a directory with a denied path below it gets only its listing, and each of its entries is
// expanded in turn. Symbolic links among the entries are granted through their target only
// when that holds no denied path. /proc is special: only its entries that are no process,
// and the helper's own process, are granted.
func expand(out []grant, path string, access landlock.AccessFSSet, deny []string) []grant {
	for _, d := range deny {
		if under(path, d) {
			return out
		}
	}
	if path == "/proc" {
		return expandProc(out, access)
	}
	inside := false
	for _, d := range deny {
		if d != path && under(d, path) {
			inside = true
		}
	}
	if !inside && !under("/proc", path) {
		return append(out, grant{path, access})
	}
	out = append(out, grant{path, access & readDir})
	entries, err := os.ReadDir(path)
	if err != nil {
		return out
	}
	for _, e := range entries {
		child := filepath.Join(path, e.Name())
		if e.Type()&os.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(child)
			if err != nil || holdsDenied(target, deny) || under("/proc", target) {
				continue
			}
		}
		out = expand(out, child, access, deny)
	}
	return out
}

// holdsDenied reports whether p is, or holds, a denied path.
func holdsDenied(p string, deny []string) bool {
	for _, d := range deny {
		if under(p, d) || under(d, p) {
			return true
		}
	}
	return false
}

// expandProc grants /proc's listing and its system entries (cpuinfo, meminfo, sys, …), read
// only, but no process's directory: their environments, memory and open files hold what the
// sandbox keeps out (the harness's API keys in its environment).
func expandProc(out []grant, access landlock.AccessFSSet) []grant {
	out = append(out, grant{"/proc", access & readDir})
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		name := e.Name()
		if _, err := strconv.Atoi(name); err == nil || e.Type()&os.ModeSymlink != 0 {
			continue // a process, or self and thread-self, which point at one
		}
		out = append(out, grant{"/proc/" + name, access &^ write})
	}
	return out
}
