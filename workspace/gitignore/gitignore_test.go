package gitignore

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree is a set of files (and, with a trailing '/', empty directories) with the ignore
// files among them.
var tree = map[string]string{
	".gitignore": "# build output\n*.o\n/build/\nlogs/\n!keep.o\n\\#hash\n\\!bang\ntrailing \nescaped\\ \n" +
		"doc/**/*.tmp\n**/gen/*.go\n{brace}\n[abc].txt\n*.log\n!important.log\n",
	"a.o":                      "",
	"keep.o":                   "",
	"#hash":                    "",
	"!bang":                    "",
	"trailing":                 "",
	"escaped ":                 "",
	"build/x.go":               "",
	"sub/build/x.go":           "",
	"logs/today":               "",
	"sub/logs/today":           "",
	"logs.txt":                 "",
	"doc/a.tmp":                "",
	"doc/x/y/b.tmp":            "",
	"a.tmp":                    "",
	"pkg/gen/z.go":             "",
	"pkg/gen/sub/z.go":         "",
	"{brace}":                  "",
	"b.txt":                    "",
	"d.txt":                    "",
	"x.log":                    "",
	"important.log":            "",
	"sub/.gitignore":           "*.go\n!keep.go\n/only_here\n",
	"sub/a.go":                 "",
	"sub/keep.go":              "",
	"sub/only_here":            "",
	"sub/deeper/only_here":     "",
	"sub/deeper/important.log": "",
	"sub/deeper/x.o":           "",
	"other/a.go":               "",
}

func write(t *testing.T, dir string) {
	t.Helper()
	for name, body := range tree {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// stackFor builds the stack that applies to rel's directory, as a walker would.
func stackFor(t *testing.T, dir, rel string) Stack {
	t.Helper()
	var s Stack
	parts := strings.Split(rel, "/")
	for i := range parts {
		d := strings.Join(parts[:i], "/")
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(d), ".gitignore")); err == nil {
			s = s.Push(Parse(d, b))
		}
	}
	return s
}

// ignoredByWalk reports whether rel is ignored itself or by one of its directories.
func ignoredByWalk(t *testing.T, dir, rel string) bool {
	parts := strings.Split(rel, "/")
	for i := 1; i <= len(parts); i++ {
		p := strings.Join(parts[:i], "/")
		if stackFor(t, dir, p).Ignored(p, i < len(parts)) {
			return true
		}
	}
	return false
}

// TestAgainstGit compares every path of the tree with git check-ignore's verdict.
func TestAgainstGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	write(t, dir)
	run := func(args ...string) (string, error) {
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		var out bytes.Buffer
		cmd.Stdout = &out
		err := cmd.Run()
		return out.String(), err
	}
	if _, err := run("init", "-q"); err != nil {
		t.Fatalf("git init: %v", err)
	}
	var paths []string
	for name := range tree {
		if !strings.HasSuffix(name, ".gitignore") {
			paths = append(paths, name)
		}
	}
	slices.Sort(paths)
	// check-ignore prints the paths it ignores (and exits 1 when it ignores none).
	out, _ := run(append([]string{"check-ignore", "--no-index", "--"}, paths...)...)
	gitIgnored := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			gitIgnored[l] = true
		}
	}
	if len(gitIgnored) < 10 {
		t.Fatalf("git ignored only %d paths: %q", len(gitIgnored), out)
	}
	for _, p := range paths {
		if got, want := ignoredByWalk(t, dir, p), gitIgnored[p]; got != want {
			t.Errorf("%s: ignored %v, git says %v", p, got, want)
		}
	}
}

func TestParseSkipsNonPatterns(t *testing.T) {
	f := Parse("", []byte("\n# comment\n   \n!\n/\n[\n"))
	if len(f.patterns) != 0 {
		t.Errorf("patterns %+v", f.patterns)
	}
}

func TestPushSharesNothing(t *testing.T) {
	base := Stack{}.Push(Parse("", []byte("a\n")))
	x := base.Push(Parse("x", []byte("b\n")))
	y := base.Push(Parse("y", []byte("c\n")))
	if !x.Ignored("x/b", false) || x.Ignored("y/c", false) || !y.Ignored("y/c", false) || y.Ignored("x/b", false) {
		t.Error("sibling stacks share their tops")
	}
}
