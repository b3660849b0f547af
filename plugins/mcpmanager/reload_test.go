package mcpmanager

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// mountAt mounts a manager on a fresh host whose settings file is path.
func mountAt(t *testing.T, path string, fc *fakeClients) *host {
	t.Helper()
	root, log := ctxtest.NewLogged(t)
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	s := ctxtest.Mount(t, root.With(hooksKey{}, &hooks{client: fc.def}), Plugin, map[string]any{"settingsFile": path, "debounceMs": 10})
	if err := s.Wait(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.RequireState(t, s, ctx.Active)
	m, _ := Key.Get(root)
	return &host{t: t, root: root, log: log, settings: path, scope: s, m: m}
}

// A settings file in a directory that does not exist yet is picked up once both appear
// (the manager polls until it can watch the directory), and again after the directory is
// removed and recreated.
func TestSettingsDirectoryAppears(t *testing.T) {
	t.Parallel()
	fc := newFakeClients()
	dir := filepath.Join(t.TempDir(), "later")
	path := filepath.Join(dir, "mcp-servers.yaml")
	h := mountAt(t, path, fc)
	if s := h.m.Snapshot(); !s.Settings.Missing || len(s.Servers) != 0 || s.Settings.Error != "" {
		t.Fatalf("before the file exists: %s", dump(s))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	h.write("servers:\n" + fakeEntry("a", ""))
	h.waitStatus(StateConnected, "a")

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	h.waitSnap("directory removed", func(s Snapshot) bool { return len(s.Servers) == 0 && s.Settings.Missing })
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	h.write("servers:\n" + fakeEntry("b", ""))
	h.waitStatus(StateConnected, "b")
}

// A settings path that is a symbolic link follows its target when the link is swapped (as
// mounted config maps do), and an atomic rename over the file is one change.
func TestSettingsSymlinkSwapAndRename(t *testing.T) {
	t.Parallel()
	fc := newFakeClients()
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one.yaml"), filepath.Join(dir, "two.yaml")
	if err := os.WriteFile(one, []byte("servers:\n"+fakeEntry("a", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(two, []byte("servers:\n"+fakeEntry("b", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mcp-servers.yaml")
	if err := os.Symlink(one, path); err != nil {
		t.Fatal(err)
	}
	h := mountAt(t, path, fc)
	h.waitStatus(StateConnected, "a")

	tmp := filepath.Join(dir, "link.tmp")
	if err := os.Symlink(two, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	h.waitSnap("swapped to two", func(s Snapshot) bool {
		_, hasA := find(s, "a")
		b, hasB := find(s, "b")
		return !hasA && hasB && b.Status == StateConnected
	})

	// An editor's save: write a temporary file, rename it over the path (here replacing the
	// link itself).
	if err := os.WriteFile(tmp, []byte("servers:\n"+fakeEntry("b", "")+fakeEntry("c", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	snap := h.waitStatus(StateConnected, "b", "c")
	if v, _ := find(snap, "b"); v.Starts != 1 {
		t.Fatalf("b was remounted by a rename that did not change it: %s", dump(v))
	}
}

// The project settings file is layered on the settings file: its entry of a name replaces
// the other's in place, its other entries are added, and a change to either file is picked
// up.
func TestProjectSettingsLayered(t *testing.T) {
	t.Parallel()
	fc := newFakeClients()
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	project := filepath.Join(dir, "project", ".harness", "mcp-servers.yaml")
	if err := os.WriteFile(user, []byte("servers:\n"+fakeEntry("a", "")+fakeEntry("b", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	root, log := ctxtest.NewLogged(t)
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	s := ctxtest.Mount(t, root.With(hooksKey{}, &hooks{client: fc.def}), Plugin,
		map[string]any{"settingsFile": user, "projectSettingsFile": project, "debounceMs": 10})
	if err := s.Wait(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	m, _ := Key.Get(root)
	h := &host{t: t, root: root, log: log, settings: user, scope: s, m: m}
	snap := h.waitStatus(StateConnected, "a", "b")
	if snap.Settings.ProjectFile != project || snap.Settings.Missing {
		t.Fatalf("settings status: %s", dump(snap.Settings))
	}
	if err := os.MkdirAll(filepath.Dir(project), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(project, []byte("servers:\n  a:\n    transport: stdio\n    command: fake\n    enabled: false\n"+fakeEntry("c", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	snap = h.waitSnap("project file applied", func(s Snapshot) bool {
		a, _ := find(s, "a")
		c, _ := find(s, "c")
		return a.Status == StateDisabled && c.Status == StateConnected
	})
	if got := names(snap); len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "c" {
		t.Errorf("layered order %v, want a (replaced in place), b, c", got)
	}
	var layers []string
	for _, v := range snap.Servers {
		layers = append(layers, v.Name+"="+v.Layer)
	}
	if got := strings.Join(layers, " "); got != "a=project b=user c=project" {
		t.Errorf("layers: %s", got)
	}
}

// A settings edit that changes an entry's roots alone reaches the running client in place
// (no restart); adding the first root, removing the last or changing anything else restarts
// it.
func TestRootsEditTakenInPlace(t *testing.T) {
	t.Parallel()
	fc := newFakeClients()
	updated := make(chan string, 1)
	fc.onUpdate = func(name string) { updated <- name }
	path := filepath.Join(t.TempDir(), "mcp-servers.yaml")
	if err := os.WriteFile(path, []byte("servers:\n"+fakeEntry("a", "roots: [/srv/one]")), 0o644); err != nil {
		t.Fatal(err)
	}
	h := mountAt(t, path, fc)
	h.waitStatus(StateConnected, "a")

	h.write("servers:\n" + fakeEntry("a", "roots: [/srv/two, /srv/three]"))
	select {
	case <-updated:
	case <-time.After(ctxtest.Timeout):
		t.Fatal("the roots change was not taken in place")
	}
	h.waitSnap("roots updated", func(s Snapshot) bool {
		return len(s.Servers) == 1 && len(s.Servers[0].Config.Roots) == 2 && s.Servers[0].Status == StateConnected
	})
	if n, u := fc.count(fc.mounted, "a"), fc.count(fc.updated, "a"); n != 1 || u != 1 {
		t.Fatalf("mounts %d, in-place updates %d; want 1 and 1", n, u)
	}
	h.write("servers:\n" + fakeEntry("a", ""))
	h.waitSnap("roots removed", func(s Snapshot) bool {
		return len(s.Servers) == 1 && len(s.Servers[0].Config.Roots) == 0 && s.Servers[0].Status == StateConnected && fc.count(fc.mounted, "a") == 2
	})
	if u := fc.count(fc.updated, "a"); u != 1 {
		t.Fatalf("in-place updates %d, want still 1", u)
	}
}
