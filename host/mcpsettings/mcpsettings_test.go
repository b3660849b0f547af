package mcpsettings_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/host/mcpsettings"
)

// The project file is the nearest ancestor's that has one, else the nearest .harness
// directory's, else the working directory's.
func TestProjectFile(t *testing.T) {
	root := t.TempDir()
	wd := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := mcpsettings.ProjectFile(wd), filepath.Join(wd, ".harness", "mcp-servers.yaml"); got != want {
		t.Fatalf("no project: %s, want %s", got, want)
	}
	if err := os.MkdirAll(filepath.Join(root, "a", ".harness"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := mcpsettings.ProjectFile(wd), filepath.Join(root, "a", ".harness", "mcp-servers.yaml"); got != want {
		t.Fatalf("a .harness directory above: %s, want %s", got, want)
	}
	if err := os.MkdirAll(filepath.Join(root, ".harness"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".harness", "mcp-servers.yaml"), []byte("servers: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := mcpsettings.ProjectFile(wd), filepath.Join(root, ".harness", "mcp-servers.yaml"); got != want {
		t.Fatalf("a file further up: %s, want %s", got, want)
	}
}

// mcp add's entries: a stdio or an HTTP server, and the combinations refused.
func TestEntry(t *testing.T) {
	cfg, err := mcpsettings.Entry([]string{"srv", "--stdio"}, "", "http", map[string]string{"K": "v"}, nil)
	if err != nil || cfg.Command != "srv" || cfg.Env["K"] != "v" {
		t.Fatalf("stdio: %+v %v", cfg, err)
	}
	if cfg, err = mcpsettings.Entry(nil, "http://x/mcp", "sse", nil, nil); err != nil || cfg.URL != "http://x/mcp" {
		t.Fatalf("http: %+v %v", cfg, err)
	}
	for _, tc := range []struct {
		cmd       []string
		url, tr   string
		env, head map[string]string
	}{
		{[]string{"x"}, "http://x", "http", nil, nil},
		{nil, "", "http", nil, nil},
		{nil, "http://x", "ws", nil, nil},
		{nil, "http://x", "http", map[string]string{"K": "v"}, nil},
		{[]string{"x"}, "", "http", nil, map[string]string{"H": "v"}},
	} {
		if _, err := mcpsettings.Entry(tc.cmd, tc.url, tc.tr, tc.env, tc.head); !errors.Is(err, mcpsettings.ErrEntry) {
			t.Errorf("%+v: %v", tc, err)
		}
	}
}

// A name in neither file is an *host.UnknownServerError naming the files.
func TestFindUnknown(t *testing.T) {
	dir := t.TempDir()
	f := mcpsettings.Files{User: filepath.Join(dir, "user.yaml"), Project: filepath.Join(dir, "project.yaml")}
	_, _, err := f.Find("nope", "")
	if _, ok := errors.AsType[*host.UnknownServerError](err); !ok {
		t.Fatalf("unknown: %T %v", err, err)
	}
}
