package profiles_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/profiles"
)

// A profile with a stray mcpServers key is a profile with an unknown key, named, not
// another host's document whose plugins rows would be dropped without a word.
func TestProfileWithStrayMCPServers(t *testing.T) {
	for _, doc := range []string{
		"plugins:\n  gh: {use: mcpclient, config: {serverName: gh}}\nmcpServers:\n  fs: {command: fs-mcp}\n",
		"extends: cli\nmcp_servers: {}\n",
	} {
		_, err := profiles.Load(profiles.LoadOptions{Data: []byte(doc), Servers: fakeReader{}})
		var pe *profiles.Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), `key "mcp`) || !strings.Contains(err.Error(), "unknown key") {
			t.Errorf("%q: got %v, want an unknown-key error naming the key", doc, err)
		}
	}
}

// fakeReader reads {"mcpServers": {NAME: {"command": C}}} documents, as a host's reader
// would, so that the loader's side of the hook is tested without the MCP client.
type fakeReader struct{}

func (fakeReader) IsForeign(_ string, data []byte) bool {
	return strings.Contains(string(data), `"mcpServers"`) && !strings.Contains(string(data), "plugins")
}

func (fakeReader) Profile(data []byte, opts profiles.ServerDocOptions) ([]byte, []string, error) {
	if strings.Contains(string(data), `"command": 5`) {
		return nil, nil, &ctx.ConfigError{Key: "mcpServers.a.command", Msg: "expected a string", Err: ctx.ErrWrongType}
	}
	if strings.Contains(string(data), `"bad name"`) {
		return nil, nil, &ctx.ConfigError{Key: "mcpServers.bad name", Msg: "invalid server name", Err: errors.New("not a kind of ctx's")}
	}
	yaml := "extends: " + opts.Extends + "\nplugins:\n  a: {use: mcpclient, config: {serverName: a, transport: stdio, command: x}}\n"
	return []byte(yaml), []string{"dropped " + opts.Source}, nil
}

// With a reader installed, another host's document loads as the profile the reader makes
// of it (extending the import base, with the reader's warnings), and its problems keep
// their kinds.
func TestLoadThroughServerReader(t *testing.T) {
	p, err := profiles.Load(profiles.LoadOptions{Name: "claude.json", Data: []byte(`{"mcpServers": {"a": {"command": "x"}}}`), Servers: fakeReader{}})
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Rows[len(p.Rows)-1]; r.ID != "a" || r.Use != "mcpclient" || len(p.Rows) < 2 {
		t.Errorf("rows %+v: want the cli rows, then a", p.Rows)
	}
	// The reader's warnings, then the note that the settings file's servers run too.
	if len(p.Warnings) != 2 || p.Warnings[0] != "dropped claude.json" || !strings.Contains(p.Warnings[1], "the servers of your own settings file run too") ||
		!strings.Contains(p.Warnings[1], "--set plugins.manager.enabled=false") {
		t.Errorf("warnings %q", p.Warnings)
	}
	_, err = profiles.Load(profiles.LoadOptions{Name: "claude.json", Data: []byte(`{"mcpServers": {"a": {"command": 5}}}`), Servers: fakeReader{}})
	if want := `profile "claude.json": key "mcpServers.a.command": expected a string`; err == nil || err.Error() != want || !errors.Is(err, profiles.ErrType) {
		t.Errorf("got %v, want %s (ErrType)", err, want)
	}
	_, err = profiles.ImportServers([]byte(`{"mcpServers": {"bad name": {}}}`), profiles.ImportOptions{Source: "x.json", Servers: fakeReader{}})
	var pe *profiles.Error
	if !errors.As(err, &pe) || pe.Op != "mcp import" || !errors.Is(err, profiles.ErrInvalid) {
		t.Errorf("got %v, want an mcp import ErrInvalid", err)
	}
}

// Without a reader, another host's document is refused with an error that says a reader
// is needed (and how to get one), not only that its keys are unknown.
func TestServerDocumentWithoutReader(t *testing.T) {
	_, err := profiles.Load(profiles.LoadOptions{Name: "mcp.json", Data: []byte(`{"mcpServers": {"fs": {"command": "fs-mcp"}}}`)})
	if err == nil || !errors.Is(err, profiles.ErrUnknownKey) || !strings.Contains(err.Error(), `key "mcpServers"`) ||
		!strings.Contains(err.Error(), "server-document reader") || !strings.Contains(err.Error(), "host.ServerDocuments") {
		t.Errorf("mcpServers: got %v", err)
	}
	_, err = profiles.Load(profiles.LoadOptions{Name: "config.toml", Data: []byte("[mcp_servers.fs]\ncommand = \"fs-mcp\"\n")})
	if err == nil || !errors.Is(err, profiles.ErrInvalid) || !strings.Contains(err.Error(), `profile "config.toml"`) ||
		!strings.Contains(err.Error(), "server-document reader") {
		t.Errorf("config.toml: got %v", err)
	}
	_, err = profiles.ImportServers([]byte(`{"mcpServers": {}}`), profiles.ImportOptions{Source: "mcp.json"})
	if err == nil || !strings.Contains(err.Error(), `mcp import "mcp.json"`) || !strings.Contains(err.Error(), "none is installed") {
		t.Errorf("import: got %v", err)
	}
}
