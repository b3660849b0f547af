package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPathEscapes is the escape suite's path half: every way out of the root a path can
// take is refused by every file tool, before anything is read or written.
func TestPathEscapes(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, map[string]string{"secret.txt": "outside secret\n", "d/x.txt": "outside\n"})
	r := newRig(t, Options{}, map[string]string{"in.txt": "inside\n", "sub/a.txt": "a\n"})
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(r.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(outside, "secret.txt"), "to_secret") // a file link out
	link(outside, "to_outside")                             // a directory link out
	link(filepath.Join("..", "..", filepath.Base(filepath.Dir(outside)), filepath.Base(outside), "secret.txt"), "relative_out")
	link(filepath.Join(r.dir, "in.txt"), "absolute_in") // an absolute link that stays inside
	link("sub/a.txt", "relative_in")                    // a relative link inside
	link("/proc/self/root"+filepath.Join(outside, "secret.txt"), "via_proc")
	if err := os.MkdirAll(filepath.Join(r.dir, "deep/er"), 0o755); err != nil {
		t.Fatal(err)
	}
	link("../../../", "deep/er/up") // a link up and out of the root
	deniedInside := newRig(t, Options{DenyRead: []string{"SECRETS"}}, map[string]string{"SECRETS/key": "k", "ok.txt": "fine\n"})

	cases := []struct {
		path string
		want string
	}{
		{"../../" + filepath.Base(filepath.Dir(outside)) + "/" + filepath.Base(outside) + "/secret.txt", "outside the workspace root"},
		{"sub/../../x", "outside the workspace root"},
		{filepath.Join(outside, "secret.txt"), "outside the workspace root"},
		{"/etc/passwd", "outside the workspace root"},
		{"/proc/self/root" + filepath.Join(outside, "secret.txt"), "outside the workspace root"},
		{"/proc/self/root" + filepath.Join(r.srv.Root(), "in.txt"), "outside the workspace root"},
		{"to_secret", "symbolic link"},
		{"to_outside/x.txt", "symbolic link"},
		{"to_outside/new.txt", "symbolic link"},
		{"relative_out", "outside"},
		{"via_proc", "symbolic link"},
		{"deep/er/up/" + filepath.Base(outside) + "/secret.txt", "symbolic link"},
		{"in.txt\x00../x", "NUL"},
	}
	tools := []struct {
		name string
		args func(p string) map[string]any
	}{
		{"read_file", func(p string) map[string]any { return map[string]any{"path": p} }},
		{"write_file", func(p string) map[string]any { return map[string]any{"path": p, "content": "pwned"} }},
		{"edit_file", func(p string) map[string]any {
			return map[string]any{"path": p, "oldText": "outside", "newText": "pwned"}
		}},
		{"list_dir", func(p string) map[string]any { return map[string]any{"path": p} }},
		{"grep", func(p string) map[string]any { return map[string]any{"pattern": "secret", "path": p} }},
		{"glob", func(p string) map[string]any { return map[string]any{"pattern": "*", "path": p} }},
	}
	for _, c := range cases {
		for _, tool := range tools {
			t.Run(fmt.Sprintf("%s/%s", tool.name, strings.ReplaceAll(c.path, "/", "_")), func(t *testing.T) {
				out, isErr := r.call(tool.name, tool.args(c.path))
				if !isErr || !strings.Contains(out, c.want) {
					t.Errorf("%s %q: error %v: %s (want an error naming %q)", tool.name, c.path, isErr, out, c.want)
				}
				if strings.Contains(out, "outside secret") {
					t.Errorf("%s %q leaked the outside file", tool.name, c.path)
				}
			})
		}
	}
	for name, body := range map[string]string{"secret.txt": "outside secret\n", "d/x.txt": "outside\n"} {
		if b, _ := os.ReadFile(filepath.Join(outside, name)); string(b) != body {
			t.Errorf("%s outside the root is now %q", name, b)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Error("a file was made outside the root")
	}
	// Links that stay inside are followed.
	if got := r.ok("read_file", map[string]any{"path": "absolute_in"}); !strings.Contains(got, "inside") {
		t.Errorf("absolute link inside: %q", got)
	}
	if got := r.ok("read_file", map[string]any{"path": "relative_in"}); !strings.Contains(got, "a") {
		t.Errorf("relative link inside: %q", got)
	}
	// An absolute path inside the root is fine, through the root's own links too.
	r.ok("read_file", map[string]any{"path": filepath.Join(r.dir, "in.txt")})
	// Denied paths: by the defaults (the home's credentials) and by configuration, inside
	// the root too, where walks skip them.
	deniedInside.fails("read_file", map[string]any{"path": "SECRETS/key"}, "denied")
	deniedInside.fails("write_file", map[string]any{"path": "SECRETS/new", "content": "x"}, "denied")
	if got := deniedInside.ok("grep", map[string]any{"pattern": "k", "output": "files"}); strings.Contains(got, "SECRETS") {
		t.Errorf("grep went into a denied directory: %q", got)
	}
	if got := deniedInside.ok("glob", map[string]any{"pattern": "**"}); strings.Contains(got, "SECRETS") {
		t.Errorf("glob went into a denied directory: %q", got)
	}
}

// TestHomeRoot: a workspace rooted at the home directory still refuses its credentials.
func TestHomeRoot(t *testing.T) {
	r := newRig(t, Options{}, nil)
	home := newRig(t, Options{Root: r.home, Env: append(os.Environ(), "HOME="+r.home, "XDG_CONFIG_HOME="+filepath.Join(r.home, ".config"))}, nil)
	home.fails("read_file", map[string]any{"path": ".ssh/id_ed25519"}, "denied")
	home.fails("read_file", map[string]any{"path": ".config/harness/credentials.yaml"}, "denied")
	if got := home.ok("grep", map[string]any{"pattern": "KEY|sk-", "output": "files"}); !strings.Contains(got, "no matches") {
		t.Errorf("grep found credentials: %q", got)
	}
}
