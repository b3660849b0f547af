//go:build linux

package workspace

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordisgo/harness/workspace/sandbox"
)

// escape is one attempt of the escape suite's shell half: a command that tries to get out
// of the sandbox, and a check that it did not.
type escape struct {
	name string
	// abi is the Landlock ABI that enforces the restriction (0: the path checks do, any
	// kernel); network says it is enforced only with the network off.
	abi     int
	command string
	// escaped reports whether the attempt got out, from the command's result and the
	// world's state.
	escaped func(out string) bool
}

// TestSandboxEscapes is the escape suite's shell half. Each attempt the kernel enforces
// (by its Landlock ABI) must fail; each it cannot is run all the same and reported, with
// what happened, rather than skipped. Run it with -v to read the report.
func TestSandboxEscapes(t *testing.T) {
	abi := sandbox.Probe()
	if abi == 0 && os.Getenv("CI") != "" {
		t.Log("this kernel has no Landlock: every attempt below is expected to get out, and is reported")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	write(t, outside, map[string]string{"keep.txt": "intact\n"})
	r := newRig(t, Options{DenyRead: []string{filepath.Join(outside, "denied")}}, map[string]string{"in.txt": "inside\n"})
	write(t, outside, map[string]string{"denied/secret": "denied secret\n"})
	rep := r.srv.Sandbox()
	t.Logf("kernel Landlock ABI %d: %s", abi, rep.Summary())

	// The test process's environment holds a secret, as the harness's holds API keys.
	t.Setenv("WORKSPACE_TEST_SECRET", "sk-parent-secret")

	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tcp.Close() }()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = udp.Close() }()
	sock := filepath.Join(outside, "s.sock")
	unixLn, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unixLn.Close() }()
	abstract := fmt.Sprintf("@harness-escape-%d", os.Getpid())
	absLn, err := net.Listen("unix", abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = absLn.Close() }()
	for _, ln := range []net.Listener{tcp, unixLn, absLn} {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				_ = c.Close()
			}
		}()
	}
	sleeper := exec.Command("sleep", "300")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = sleeper.Process.Kill()
		_ = sleeper.Wait()
	}()

	failed := func(out string) bool { return !strings.HasPrefix(out, "exit status 0 ") }
	dial := func(spec string) string {
		return fmt.Sprintf("%s=%s %s", dialEnv, spec, exe)
	}
	kept := func(name, body string) func(string) bool {
		return func(string) bool {
			b, err := os.ReadFile(filepath.Join(outside, name))
			return err != nil || string(b) != body
		}
	}
	absent := func(name string) func(string) bool {
		return func(string) bool { _, err := os.Lstat(filepath.Join(outside, name)); return err == nil }
	}
	leaked := func(secret string) func(string) bool {
		return func(out string) bool { return strings.Contains(out, secret) }
	}
	attempts := []escape{
		{"write a file outside the root", 1, "echo pwned > " + outside + "/new.txt", absent("new.txt")},
		{"append to a file outside the root", 1, "echo pwned >> " + outside + "/keep.txt", kept("keep.txt", "intact\n")},
		{"remove a file outside the root", 1, "rm -f " + outside + "/keep.txt", kept("keep.txt", "intact\n")},
		{"make a directory outside the root", 1, "mkdir " + outside + "/d", absent("d")},
		{"write through /proc/self/root", 1, "echo pwned > /proc/self/root" + outside + "/new2.txt", absent("new2.txt")},
		{"link a file out of the root", 1, "ln in.txt " + outside + "/linked", absent("linked")},
		{"symlink out of the root", 1, "ln -s /etc/passwd " + outside + "/sym", absent("sym")},
		{"truncate a file outside the root", 3, "truncate -s 0 " + outside + "/keep.txt", kept("keep.txt", "intact\n")},
		{"write into the home directory", 1, "echo pwned >> " + r.home + "/.bashrc", func(string) bool {
			_, err := os.Stat(filepath.Join(r.home, ".bashrc"))
			return err == nil
		}},
		{"read a denied path", 1, "cat " + outside + "/denied/secret", leaked("denied secret")},
		{"read the home's SSH key", 1, "cat " + r.home + "/.ssh/id_ed25519", leaked("PRIVATE KEY")},
		{"read the harness's credentials", 1, "cat " + r.home + "/.config/harness/credentials.yaml", leaked("sk-secret")},
		{"hard-link a denied file into the root", 1, "ln " + r.home + "/.ssh/id_ed25519 k && cat k", leaked("PRIVATE KEY")},
		{"symlink a denied file into the root", 1, "ln -s " + r.home + "/.ssh/id_ed25519 k2 && cat k2", leaked("PRIVATE KEY")},
		{"read the parent's environment through /proc", 1, fmt.Sprintf("tr '\\0' '\\n' < /proc/%d/environ", os.Getpid()), leaked("sk-parent-secret")},
		{"read the parent's memory map through /proc", 1, fmt.Sprintf("head -1 /proc/%d/maps", os.Getpid()), func(out string) bool { return !failed(out) }},
		{"mount a file system", 1, "mkdir -p m && mount -t tmpfs none m && touch m/x", func(out string) bool { return !failed(out) }},
		{"signal a process outside the sandbox", 6, fmt.Sprintf("kill -9 %d", sleeper.Process.Pid), func(string) bool { return !alive(sleeper.Process.Pid) }},
		{"connect to an abstract Unix socket outside", 6, dial("unix:" + abstract), func(out string) bool { return !failed(out) }},
		{"connect to a Unix socket by path", 9, dial("unix:" + sock), func(out string) bool { return !failed(out) }},
		{"connect over TCP with the network off", 4, dial("tcp:" + tcp.Addr().String()), func(out string) bool { return !failed(out) }},
		{"send over UDP with the network off", 10, dial("udp:" + udp.LocalAddr().String()), func(out string) bool { return !failed(out) }},
	}
	var notEnforced []string
	for _, a := range attempts {
		t.Run(a.name, func(t *testing.T) {
			out := r.ok("shell", map[string]any{"command": a.command})
			got := a.escaped(out)
			enforced := rep.Level != sandbox.LevelNone && abi >= a.abi
			switch {
			case enforced && got:
				t.Errorf("ESCAPED although Landlock ABI %d enforces it (ABI %d):\n$ %s\n%s", abi, a.abi, a.command, out)
			case enforced:
				t.Logf("blocked: %s", firstLine(out, 3))
			case got:
				notEnforced = append(notEnforced, fmt.Sprintf("%s (needs Landlock ABI %d): got out", a.name, a.abi))
				t.Logf("NOT ENFORCED on this kernel (ABI %d < %d): the attempt got out:\n%s", abi, a.abi, out)
			default:
				notEnforced = append(notEnforced, fmt.Sprintf("%s (needs Landlock ABI %d): not enforced, but failed anyway", a.name, a.abi))
				t.Logf("not enforced on this kernel (ABI %d < %d), and failed anyway: %s", abi, a.abi, firstLine(out, 2))
			}
		})
	}
	if len(notEnforced) > 0 {
		t.Logf("what this kernel (Landlock ABI %d) does not enforce:\n  %s", abi, strings.Join(notEnforced, "\n  "))
	}
	// Inside the root, and in TMPDIR and the cache, the command works as usual.
	out := r.ok("shell", map[string]any{"command": "echo ok > made.txt && mkdir -p d && mv made.txt d/ && cat d/made.txt && echo t > $TMPDIR/t && cat $TMPDIR/t && ls $GOCACHE >/dev/null && echo cache"})
	contains(t, "work inside", out, "exit status 0", "ok\nt\ncache\n")
}

func firstLine(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], " | ")
}

// TestSandboxModes: read-only lets commands write only their TMPDIR; danger-full-access
// runs them unsandboxed; a kernel without Landlock is said to be one, loudly.
func TestSandboxModes(t *testing.T) {
	if sandbox.Probe() < 1 {
		t.Log("no Landlock here: the read-only mode's refusal cannot be checked (reported by TestSandboxEscapes)")
	} else {
		ro := newRig(t, Options{Mode: ModeReadOnly}, map[string]string{"a.txt": "x\n"})
		out := ro.ok("shell", map[string]any{"command": "echo y > a.txt; echo t > $TMPDIR/t && cat $TMPDIR/t"})
		contains(t, "read-only", out, "Permission denied", "t\n")
		if ro.file("a.txt") != "x\n" {
			t.Error("a read-only workspace's command wrote in the root")
		}
	}
	outside := t.TempDir()
	full := newRig(t, Options{Mode: ModeFullAccess}, nil)
	full.ok("shell", map[string]any{"command": "echo y > " + outside + "/free.txt"})
	if _, err := os.Stat(filepath.Join(outside, "free.txt")); err != nil {
		t.Errorf("danger-full-access could not write outside: %v", err)
	}
	if e := full.srv.Sandbox(); e.Level != sandbox.LevelNone || !strings.Contains(e.Summary(), "danger-full-access") {
		t.Errorf("full access reported as %s", e.Summary())
	}

	// A kernel without Landlock: the same workspace, told the kernel has none.
	probeABI = func() int { return 0 }
	defer func() { probeABI = sandbox.Probe }()
	none := newRig(t, Options{}, nil)
	if e := none.srv.Sandbox(); e.Level != sandbox.LevelNone {
		t.Errorf("no Landlock reported as %s", e.Summary())
	}
	res, err := none.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == "shell" && !strings.Contains(tool.Description, "WARNING: NOT SANDBOXED") {
			t.Errorf("the shell's description does not warn: %s", tool.Description)
		}
	}
	if d := none.cs.InitializeResult().ServerInfo.Description; !strings.Contains(d, "enforcement none") {
		t.Errorf("the server's description does not say so: %s", d)
	}
}
