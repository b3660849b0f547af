// Package mcpsettings is the MCP server manager's settings files as the harness lays them
// out: the user's file (mcp-servers.yaml in the harness's configuration directory) and a
// project file (.harness/mcp-servers.yaml in the current directory or its nearest
// ancestor that has one), layered on top of it; which file of a profile's manager row is
// which; an entry found in either by name, enabled or disabled, or made from a command
// line (harness mcp add). The files themselves are read and written by
// plugins/mcpclient/serverdoc, which keeps their comments and key order.
//
// The functions are safe for concurrent use; an Editor they return is not.
package mcpsettings

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
	"github.com/cordisgo/harness/profiles"
)

// The scopes of the settings files.
const (
	User    = "user"
	Project = "project"
)

// FileName is a settings file's name; ProjectDir the directory of a project's.
const (
	FileName   = "mcp-servers.yaml"
	ProjectDir = ".harness"
)

// Files are a manager's user and project settings files ("" when it has none).
type Files struct{ User, Project string }

// ProjectFile is .harness/mcp-servers.yaml in wd or its nearest ancestor that has one;
// else in the nearest that has a .harness directory; else in wd (where mcp add --scope
// project creates it).
func ProjectFile(wd string) string {
	withDir := ""
	for dir := wd; ; {
		p := filepath.Join(dir, ProjectDir, FileName)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if fi, err := os.Stat(filepath.Dir(p)); withDir == "" && err == nil && fi.IsDir() {
			withDir = p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if withDir != "" {
		return withDir
	}
	return filepath.Join(wd, ProjectDir, FileName)
}

// Default are the default files: FileName in harnessDir, and the project file of wd.
func Default(harnessDir, wd string) Files {
	return Files{User: filepath.Join(harnessDir, FileName), Project: ProjectFile(wd)}
}

// OfRows returns the files of the first enabled manager row of rows, at any depth (made
// absolute); ok is false when there is none.
func OfRows(rows []profiles.Row) (f Files, ok bool) {
	var walk func([]profiles.Row) bool
	walk = func(rows []profiles.Row) bool {
		for _, r := range rows {
			if r.Use == host.UseManager && r.Enabled {
				f.User, _ = r.Config["settingsFile"].(string)
				f.Project, _ = r.Config["projectSettingsFile"].(string)
				return true
			}
			if walk(r.Rows) {
				return true
			}
		}
		return false
	}
	if !walk(rows) {
		return Files{}, false
	}
	if f.User != "" {
		f.User, _ = filepath.Abs(f.User)
	}
	if f.Project != "" {
		f.Project, _ = filepath.Abs(f.Project)
	}
	return f, true
}

// Path returns the file of scope.
func (f Files) Path(scope string) (string, error) {
	path := map[string]string{User: f.User, Project: f.Project}[scope]
	if path == "" {
		return "", fmt.Errorf("the profile's MCP server manager has no %s settings file", scope)
	}
	return path, nil
}

// Find opens the file that has the entry name: with scope, that scope's; without, the
// project file first (its entries win), then the user's. A name in neither is a
// *host.UnknownServerError naming the files and their entries.
func (f Files) Find(name, scope string) (*serverdoc.Editor, string, error) {
	scopes := []string{Project, User}
	if scope != "" {
		scopes = []string{scope}
	}
	var known, where []string
	for _, sc := range scopes {
		path, err := f.Path(sc)
		if err != nil {
			continue
		}
		d, err := serverdoc.Open(path, serverdoc.EditOptions{})
		if err != nil {
			return nil, "", err
		}
		if d.Has(name) {
			return d, sc, nil
		}
		known = append(known, d.Names()...)
		where = append(where, path)
	}
	return nil, "", &host.UnknownServerError{Name: name, Where: "in " + strings.Join(where, " or "), Known: known}
}

// SetEnabled sets the entry's enabled flag — disable writes enabled: false, enable drops
// the key (true is the default) — saves the file, and says what it did.
func SetEnabled(d *serverdoc.Editor, name, scope string, on bool) (string, error) {
	word := "disabled"
	if on {
		word = "enabled"
		if err := d.ResetEnabled(name); err != nil {
			return "", err
		}
	} else if _, err := d.SetEnabled(name, false); err != nil {
		return "", err
	}
	if err := d.Save(); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: %s in %s (%s settings)", name, word, d.Path(), scope), nil
}

// ErrEntry is the error of a command line that does not make an entry (a usage error).
var ErrEntry = errors.New("mcp add")

// Entry makes the entry of harness mcp add: a stdio server (command, with env) or an HTTP
// server (url, with headers; transport http or sse, both written as streamable-http, which
// falls back to SSE by itself). A wrong combination wraps ErrEntry.
func Entry(command []string, url, transport string, env, headers map[string]string) (mcpclient.Config, error) {
	var cfg mcpclient.Config
	cfg.Default()
	bad := func(msg string, args ...any) (mcpclient.Config, error) {
		return cfg, fmt.Errorf("%w: %s", ErrEntry, fmt.Sprintf(msg, args...))
	}
	switch {
	case url != "" && len(command) > 0:
		return bad("either --url or a command after --, not both")
	case url == "" && len(command) == 0:
		return bad("expected a command after -- (a stdio server) or --url URL")
	case url != "":
		if transport != "http" && transport != "sse" {
			return bad("--transport %q: expected http or sse", transport)
		}
		if len(env) > 0 {
			return bad("--env is for stdio servers; an HTTP server takes --header")
		}
		cfg.Transport, cfg.URL, cfg.Headers = mcpclient.TransportStreamableHTTP, url, headers
	default:
		if len(headers) > 0 {
			return bad("--header is for HTTP servers; a stdio server takes --env")
		}
		cfg.Transport, cfg.Command, cfg.Args, cfg.Env = mcpclient.TransportStdio, command[0], command[1:], env
	}
	return cfg, nil
}

// Add adds the entry name to the file of scope and saves it (harness mcp add), and says
// what it did; a name the file has already is refused, with the command that removes it.
func (f Files) Add(name, scope string, cfg mcpclient.Config) (string, error) {
	path, err := f.Path(scope)
	if err != nil {
		return "", err
	}
	d, err := serverdoc.Open(path, serverdoc.EditOptions{})
	if err != nil {
		return "", err
	}
	if d.Has(name) {
		return "", fmt.Errorf("mcp server %q is already in %s; remove it first (harness mcp remove %s --scope %s)", name, path, name, scope)
	}
	if err := d.Add(name, cfg, true); err != nil {
		return "", err
	}
	if err := d.Save(); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: added to %s (%s settings)", name, path, scope), nil
}

// Remove removes the entry name from d, saves it, and says what it did.
func Remove(d *serverdoc.Editor, name, scope string) (string, error) {
	if _, err := d.Remove(name); err != nil {
		return "", err
	}
	if err := d.Save(); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: removed from %s (%s settings)", name, d.Path(), scope), nil
}

// Shown is an entry as harness mcp get shows it, the values of env and headers redacted:
// as --json prints it, and Text for people.
type Shown struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
	File  string `json:"file"`
	Entry any    `json:"entry"`
	Text  string `json:"-"`
}

// Show returns the entry name of d (of scope) as harness mcp get shows it.
func Show(d *serverdoc.Editor, name, scope string) (Shown, error) {
	e, err := d.Entry(name)
	if err != nil {
		return Shown{}, err
	}
	node := serverdoc.EntryNode(e.Config.Redacted(), e.Enabled)
	s := Shown{Name: name, Scope: scope, File: d.Path()}
	if err := node.Decode(&s.Entry); err != nil {
		return Shown{}, err
	}
	var out strings.Builder
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return Shown{}, err
	}
	_ = enc.Close() // writes to a strings.Builder, which does not fail
	lines := strings.SplitAfter(strings.TrimRight(out.String(), "\n"), "\n")
	for i, l := range lines {
		if l != "" && l != "\n" {
			lines[i] = "  " + l
		}
	}
	s.Text = fmt.Sprintf("%s (%s settings, %s)\n%s", name, scope, d.Path(), strings.Join(lines, ""))
	return s, nil
}

// AddDefaults gives every enabled manager row of rows (nested rows included) that names
// no settings file the harness's: the user's file in harnessDir ("" unknown: none), and,
// when it names neither, the project file found from wd ("" unknown: none).
func AddDefaults(rows []profiles.Row, harnessDir, wd string) {
	for i := range rows {
		r := &rows[i]
		AddDefaults(r.Rows, harnessDir, wd)
		if r.Use != host.UseManager || !r.Enabled {
			continue
		}
		_, hasUser := r.Config["settingsFile"]
		_, hasProject := r.Config["projectSettingsFile"]
		if hasUser && hasProject {
			continue
		}
		cfg := maps.Clone(r.Config)
		if cfg == nil {
			cfg = map[string]any{}
		}
		files := Default(harnessDir, wd)
		if !hasUser && harnessDir != "" {
			cfg["settingsFile"] = files.User
		}
		if !hasProject && !hasUser && wd != "" {
			cfg["projectSettingsFile"] = files.Project
		}
		r.Config = cfg
	}
}
