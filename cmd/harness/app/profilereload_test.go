//go:build linux

package app

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/testkit/proctest"
)

// reloadMark is the environment variable that tells the demo servers of
// TestProfileHotReload apart among the test process's children.
const reloadMark = "HOTRELOAD_MARK"

// childByMark returns the pid of the test process's child whose environment has
// reloadMark=mark, or 0.
func childByMark(t *testing.T, mark string) int {
	t.Helper()
	for _, p := range proctest.List(t) {
		if p.PPID != os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if string(kv) == reloadMark+"="+mark {
				return p.PID
			}
		}
	}
	return 0
}

// TestProfileHotReload: a profile file edited while `harness run` hosts it is applied: the
// unchanged server keeps its process, the changed one is replaced, the removed one stops
// and the new one starts; an edit that does not load keeps the running rows and says why,
// naming the file and the key.
func TestProfileHotReload(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	dir := t.TempDir()
	row := func(id, name string) string {
		return "  " + id + ":\n    use: mcpclient\n    config:\n      serverName: " + name +
			"\n      transport: stdio\n      command: ${HARNESS_SELF}\n      args: [demo-server]\n      env: {" +
			reloadMark + ": " + name + "}\n"
	}
	head := "extends: cli\nplugins:\n"
	path := writeFile(t, dir, "hosted.yaml", head+row("keep", "keep")+row("edit", "edit")+row("drop", "drop"))
	host := startRun(t, env, "-p", path, "run")
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: not seen:\n%s", what, host.String())
		}
	}
	keep, edit, drop := childByMark(t, "keep"), childByMark(t, "edit"), childByMark(t, "drop")
	if keep == 0 || edit == 0 || drop == 0 {
		t.Fatalf("demo servers keep %d, edit %d, drop %d:\n%s", keep, edit, drop, host.String())
	}

	applied := host.waitFor("profile file applied", "edited: connected", "added: connected")
	write := func(content string) {
		t.Helper()
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil { // as editors save
			t.Fatal(err)
		}
	}
	write(head + row("keep", "keep") + row("edit", "edited") + row("added", "added"))
	wait(applied, "the edit applied")
	if got := childByMark(t, "keep"); got != keep {
		t.Errorf("the unchanged server's process changed: pid %d, then %d", keep, got)
	}
	if childByMark(t, "edit") != 0 || childByMark(t, "edited") == 0 {
		t.Errorf("the changed server was not replaced:\n%s", host.String())
	}
	if childByMark(t, "drop") != 0 {
		t.Errorf("the removed server still runs:\n%s", host.String())
	}
	run(t, env, "tools", "list").expect(t, ExitOK, "mcp__added__echo", "")

	rejected := host.waitFor("profile file rejected", path, "plugins.keep.config.bogus")
	write(head + strings.Replace(row("keep", "keep"), "      transport:", "      bogus: 1\n      transport:", 1))
	wait(rejected, "the bad edit rejected")
	if got := childByMark(t, "keep"); got != keep {
		t.Errorf("a rejected edit changed the running server: pid %d, then %d", keep, got)
	}
	if childByMark(t, "added") == 0 {
		t.Errorf("a rejected edit stopped a server")
	}
}
