//go:build unix

package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestShell(t *testing.T) {
	r := newRig(t, Options{Env: append(os.Environ(), "MY_API_TOKEN=sk-leak", "HARNESS_X=y", "PLAIN_VAR=visible")}, map[string]string{"a.txt": "hello\n"})
	if got := r.ok("shell", map[string]any{"command": "cat a.txt; echo err >&2; exit 3"}); !strings.HasPrefix(got, "exit status 3 (") || !strings.Contains(got, "hello\nerr\n") {
		t.Errorf("shell: %q", got)
	}
	got := r.ok("shell", map[string]any{"command": "pwd; env"})
	contains(t, "env", got, r.srv.Root()+"\n", "PLAIN_VAR=visible", "TMPDIR="+r.srv.shell.tmp)
	for _, leak := range []string{"sk-leak", "MY_API_TOKEN", "HARNESS_X"} {
		if strings.Contains(got, leak) {
			t.Errorf("the command's environment has %s", leak)
		}
	}
	if got := r.ok("shell", map[string]any{"command": "true"}); !strings.Contains(got, "(no output)") {
		t.Errorf("no output: %q", got)
	}
	dry := r.result("shell", map[string]any{"command": "rm -rf /", "dryRun": true})
	if tc, ok := dry.Content[0].(*mcp.TextContent); dry.Meta[previewMetaKey] != "command" || !ok || !strings.HasPrefix(tc.Text, "$ rm -rf /\n") {
		t.Errorf("dry run %+v", dry)
	}
	r.fails("shell", map[string]any{"command": "  "}, "command is empty")
	r.fails("shell", map[string]any{"command": "true", "timeout": 601}, "expected 1 to 600")
}

// TestShellOutputCap: a long output is shown head and tail, and pages through shell_output.
func TestShellOutputCap(t *testing.T) {
	r := newRig(t, Options{}, nil)
	got := r.ok("shell", map[string]any{"command": "seq 1 40000"})
	contains(t, "head and tail", got, "exit status 0", "\n1\n2\n", "\n40000\n", "bytes not shown", `shell_output {"job": 1, "offset": 6144}`)
	if len(got) > shellShown+1024 {
		t.Errorf("the result has %d bytes", len(got))
	}
	page := r.ok("shell_output", map[string]any{"job": 1, "offset": 6144})
	contains(t, "page", page, "bytes 6144-", "[continue with offset")
	var all strings.Builder
	for off := 0; ; {
		p := r.ok("shell_output", map[string]any{"job": 1, "offset": off})
		_, body, _ := strings.Cut(p, ":\n")
		body, next, more := strings.Cut(body, "\n[continue with offset ")
		all.WriteString(body)
		if !more {
			break
		}
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(next), "]"))
		if n <= off {
			t.Fatalf("offset %d does not advance: %q", n, next)
		}
		off = n
	}
	var want strings.Builder
	for i := 1; i <= 40000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if strings.TrimSpace(all.String()) != strings.TrimSpace(want.String()) {
		t.Errorf("paging gave %d bytes, want %d", all.Len(), want.Len())
	}
	contains(t, "tail", r.ok("shell_output", map[string]any{"job": 1, "tail": 3}), "the last 3 lines", "39998\n39999\n40000\n")
	contains(t, "list", r.ok("shell_output", map[string]any{}), "job 1: exit status 0")
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// pidsIn reads the pids a command wrote, one per line, into file.
func pidsIn(t *testing.T, file string) []int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid %q", f)
		}
		out = append(out, n)
	}
	return out
}

// TestShellTimeoutKillsGroup: a command that times out is stopped with everything it
// started, a grandchild that ignores SIGTERM too.
func TestShellTimeoutKillsGroup(t *testing.T) {
	r := newRig(t, Options{}, nil)
	start := time.Now()
	got := r.ok("shell", map[string]any{"command": "(trap '' TERM; sleep 300) & echo $! > pids; sleep 300 & echo $! >> pids; wait", "timeout": 1})
	contains(t, "timeout", got, "timed out after 1s")
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the timeout took %v", took)
	}
	for _, pid := range pidsIn(t, filepath.Join(r.dir, "pids")) {
		if alive(pid) {
			t.Errorf("process %d outlived its command", pid)
		}
	}
}

// TestShellJobs: a background job runs on, its output is tailed, and shell_kill ends it
// with what it started; closing the workspace ends the jobs left.
func TestShellJobs(t *testing.T) {
	r := newRig(t, Options{}, nil)
	got := r.ok("shell", map[string]any{"command": "sleep 300 & echo $! > pids; for i in 1 2 3; do echo tick $i; done; sleep 300", "background": true})
	contains(t, "started", got, "started job 1 in the background")
	var out string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if out = r.ok("shell_output", map[string]any{"job": 1}); strings.Contains(out, "tick 3") {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling a job, as the model does
	}
	contains(t, "tail", out, "job 1: running for", "tick 1\ntick 2\ntick 3\n")
	pids := pidsIn(t, filepath.Join(r.dir, "pids"))
	contains(t, "kill", r.ok("shell_kill", map[string]any{"job": 1}), "job 1: killed", "tick 3")
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d outlived shell_kill", pid)
		}
	}
	contains(t, "killed twice", r.ok("shell_kill", map[string]any{"job": 1}), "had already ended")
	r.fails("shell_output", map[string]any{"job": 9}, "no job 9")

	r.ok("shell", map[string]any{"command": "sleep 300 & echo $! > pids2; sleep 300", "background": true})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(r.dir, "pids2")); len(b) > 0 {
			break
		}
	}
	pids = pidsIn(t, filepath.Join(r.dir, "pids2"))
	if err := r.srv.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d outlived the workspace", pid)
		}
	}
}

// TestGoCache: commands get a Go build cache of the sandbox's own, unless the user's is
// made writable, which they then share.
func TestGoCache(t *testing.T) {
	own := newRig(t, Options{}, nil)
	out := own.ok("shell", map[string]any{"command": "echo $GOCACHE"})
	contains(t, "own cache", out, filepath.Join("sandbox-cache", "go-build"))
	userCache := t.TempDir()
	shared := newRig(t, Options{Writable: []string{userCache}, Env: append(os.Environ(), "GOCACHE="+filepath.Join(userCache, "go-build"))}, nil)
	out = shared.ok("shell", map[string]any{"command": "echo $GOCACHE; mkdir -p $GOCACHE && touch $GOCACHE/x && echo written"})
	contains(t, "shared cache", out, filepath.Join(userCache, "go-build")+"\n", "written")
}
