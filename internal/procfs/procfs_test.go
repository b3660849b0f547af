//go:build linux

package procfs_test

import (
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/cordisgo/harness/internal/procfs"
)

// The test process is in the table with its parent and group; a child it starts is below
// it; its own peak resident set is a positive number of kB.
func TestTable(t *testing.T) {
	self, err := procfs.Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self.PPID != os.Getppid() || self.PGID <= 0 || self.Start == 0 || self.Gone() || self.Comm == "" {
		t.Fatalf("self %+v", self)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	all, err := procfs.List()
	if err != nil {
		t.Fatal(err)
	}
	below := procfs.Descendants(all, os.Getpid())
	if !slices.ContainsFunc(below, func(p procfs.Proc) bool { return p.PID == cmd.Process.Pid && p.Comm == "sleep" }) {
		t.Fatalf("the child %d is not below the test process: %+v", cmd.Process.Pid, below)
	}
	if slices.ContainsFunc(below, func(p procfs.Proc) bool { return p.PID == os.Getpid() }) {
		t.Fatal("Descendants includes the process itself")
	}
	if kb, err := procfs.StatusKB(os.Getpid(), "VmHWM"); err != nil || kb <= 0 {
		t.Fatalf("VmHWM = %d, %v", kb, err)
	}
	if _, err := procfs.StatusKB(os.Getpid(), "NoSuchField"); err == nil {
		t.Fatal("a missing field is no error")
	}
}

// A command name with spaces and parentheses does not shift the fields.
func TestStatCommandName(t *testing.T) {
	dir := t.TempDir()
	exe := dir + "/a (b) c"
	if err := os.Symlink("/bin/sleep", exe); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p, err := procfs.Stat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if p.Comm != "a (b) c" || p.PPID != os.Getpid() {
		t.Fatalf("%+v", p)
	}
}
