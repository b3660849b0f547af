package profiles_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/profiles"
)

const self = "/opt/harness/bin/harness"

func mustLoad(t *testing.T, opts profiles.LoadOptions) *profiles.Profile {
	t.Helper()
	if opts.Catalog == nil {
		opts.Catalog = catalog
	}
	p, err := profiles.Load(opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return p
}

func ids(rows []profiles.Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.ID)
	}
	return out
}

func find(t *testing.T, rows []profiles.Row, id string) profiles.Row {
	t.Helper()
	for _, r := range rows {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no row %q in %v", id, ids(rows))
	return profiles.Row{}
}

func TestBuiltins(t *testing.T) {
	if got, want := profiles.BuiltinNames(), []string{"cli", "default", "web"}; !slices.Equal(got, want) {
		t.Fatalf("BuiltinNames() = %v, want %v", got, want)
	}
	for _, bad := range []string{"", "nope", "../default", "default.yaml", "cli/x"} {
		if _, ok := profiles.Builtin(bad); ok {
			t.Errorf("Builtin(%q) exists", bad)
		}
	}
	tests := []struct {
		name string
		rows []string
		use  map[string]string
	}{
		{"cli", []string{"tools", "prompt", "resources", "prompts", "model", "manager", "remote", "console", "agent"},
			map[string]string{"tools": "toolregistry", "prompt": "sysprompt", "resources": "mcpresources", "prompts": "mcpprompts", "model": "model",
				"manager": "mcpmanager", "remote": "remote", "console": "console"}},
		{"default", []string{"tools", "prompt", "resources", "prompts", "model", "manager", "remote", "console", "agent", "demo"},
			map[string]string{"demo": "mcpclient"}},
		{"web", []string{"tools", "prompt", "resources", "prompts", "model", "manager", "remote", "console", "agent", "demo"},
			map[string]string{"manager": "mcpmanager", "remote": "remote", "console": "console"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := profiles.Builtin(tt.name); !ok {
				t.Fatalf("Builtin(%q) missing", tt.name)
			}
			p := mustLoad(t, profiles.LoadOptions{Name: tt.name, Self: self})
			if p.Name != tt.name || p.Source != tt.name || p.Description == "" {
				t.Errorf("Name %q, Source %q, Description %q", p.Name, p.Source, p.Description)
			}
			if got := ids(p.Rows); !slices.Equal(got, tt.rows) {
				t.Fatalf("rows %v, want %v", got, tt.rows)
			}
			for id, use := range tt.use {
				if r := find(t, p.Rows, id); r.Use != use || !r.Enabled || r.Path != "plugins."+id {
					t.Errorf("row %q: %+v, want use %q", id, r, use)
				}
			}
			for _, r := range p.Rows {
				if r.Use == "mcpclient" && r.Config["command"] != "${HARNESS_SELF}" {
					// A built-in never starts anything but the harness itself.
					if r.Config["command"] != self {
						t.Errorf("row %q runs %v", r.ID, r.Config["command"])
					}
				}
			}
		})
	}
	// The default profile is the empty name, and runs the binary's own demo server.
	p := mustLoad(t, profiles.LoadOptions{Self: self})
	demo := find(t, p.Rows, "demo")
	want := map[string]any{"serverName": "demo", "transport": "stdio", "command": self, "args": []any{"demo-server"}}
	if !reflect.DeepEqual(demo.Config, want) {
		t.Errorf("demo config %#v, want %#v", demo.Config, want)
	}
	web := mustLoad(t, profiles.LoadOptions{Name: "web", Self: self})
	if got := find(t, web.Rows, "remote").Config["addr"]; got != "127.0.0.1:0" {
		t.Errorf("remote addr %v", got)
	}
	// The harness command gives the manager its settings files (the user's and the
	// project's); the profile names none.
	if got, ok := find(t, web.Rows, "manager").Config["settingsFile"]; ok {
		t.Errorf("manager settingsFile %v, want none in the profile", got)
	}
}

func TestLoadKeepsDocumentOrder(t *testing.T) {
	doc := `
plugins:
  zeta: {use: x}
  alpha:
    use: y
    enabled: false
  mid:
    plugins:
      second: {use: x}
      first: {use: x}
    config: {}
  beta:
    use: x
    config:
      z: 1
      a: {y: 1, b: 2}
`
	p := mustLoad(t, profiles.LoadOptions{Data: []byte(doc)})
	if got, want := ids(p.Rows), []string{"zeta", "alpha", "mid", "beta"}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	mid := find(t, p.Rows, "mid")
	if mid.Use != "" || !mid.Enabled || mid.Path != "plugins.mid" {
		t.Errorf("mid: %+v", mid)
	}
	if got, want := ids(mid.Rows), []string{"second", "first"}; !slices.Equal(got, want) {
		t.Errorf("nested rows %v, want %v", got, want)
	}
	if got := mid.Rows[1].Path; got != "plugins.mid.plugins.first" {
		t.Errorf("nested path %q", got)
	}
	if find(t, p.Rows, "alpha").Enabled {
		t.Error("alpha enabled")
	}
	out, err := p.YAML(nil)
	if err != nil {
		t.Fatal(err)
	}
	// Config keys keep their order too, in the dump.
	if i, j := strings.Index(string(out), "z: 1"), strings.Index(string(out), "      a:\n"); i < 0 || j < 0 || i > j {
		t.Errorf("config order lost:\n%s", out)
	}
	if i, j := strings.Index(string(out), "y: 1"), strings.Index(string(out), "b: 2"); i > j {
		t.Errorf("nested config order lost:\n%s", out)
	}
}

func TestLoadOverlaysSets(t *testing.T) {
	base := "plugins:\n  a:\n    use: x\n    config:\n      url: http://one\n      args: [a, b]\n      env: {A: '1'}\n"
	tests := []struct {
		name  string
		sets  []string
		check func(t *testing.T, p *profiles.Profile)
	}{
		{"boolean", []string{"plugins.a.enabled=false"}, func(t *testing.T, p *profiles.Profile) {
			if p.Rows[0].Enabled {
				t.Error("still enabled")
			}
		}},
		{"number and string", []string{"plugins.a.config.toolCallTimeoutMs=5000", "plugins.a.config.url=http://two"}, func(t *testing.T, p *profiles.Profile) {
			c := p.Rows[0].Config
			if c["toolCallTimeoutMs"] != 5000 || c["url"] != "http://two" {
				t.Errorf("config %v", c)
			}
		}},
		{"quoted string", []string{`plugins.a.config.token="0123"`}, func(t *testing.T, p *profiles.Profile) {
			if got := p.Rows[0].Config["token"]; got != "0123" {
				t.Errorf("token %#v", got)
			}
		}},
		{"list replaced whole", []string{"plugins.a.config.args=[c]"}, func(t *testing.T, p *profiles.Profile) {
			if got := p.Rows[0].Config["args"]; !reflect.DeepEqual(got, []any{"c"}) {
				t.Errorf("args %#v", got)
			}
		}},
		{"map merged", []string{"plugins.a.config.env={B: '2'}"}, func(t *testing.T, p *profiles.Profile) {
			if got := p.Rows[0].Config["env"]; !reflect.DeepEqual(got, map[string]any{"A": "1", "B": "2"}) {
				t.Errorf("env %#v", got)
			}
		}},
		{"later set wins", []string{"plugins.a.config.url=http://two", "plugins.a.config.url=http://three"}, func(t *testing.T, p *profiles.Profile) {
			if got := p.Rows[0].Config["url"]; got != "http://three" {
				t.Errorf("url %v", got)
			}
		}},
		{"new row, after the others", []string{"plugins.b.use=y", "plugins.b.config.k=v"}, func(t *testing.T, p *profiles.Profile) {
			if got := ids(p.Rows); !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("rows %v", got)
			}
			if b := p.Rows[1]; b.Use != "y" || b.Config["k"] != "v" {
				t.Errorf("b: %+v", b)
			}
		}},
		{"a new row that only switches something off needs no use", []string{"plugins.workspace.enabled=false"}, func(t *testing.T, p *profiles.Profile) {
			if got := ids(p.Rows); !slices.Equal(got, []string{"a", "workspace"}) {
				t.Fatalf("rows %v", got)
			}
			if w := p.Rows[1]; w.Enabled || w.Use != "" || w.AgentScope() {
				t.Errorf("workspace: %+v", w)
			}
			// It dumps as it was written, and loads again.
			out, err := p.YAML(nil)
			if err != nil || !strings.Contains(string(out), "  workspace:\n    enabled: false\n") || strings.Contains(string(out), "plugins: {}") {
				t.Fatalf("dump: %v\n%s", err, out)
			}
			mustLoad(t, profiles.LoadOptions{Data: out})
		}},
		{"null config changes nothing", []string{"plugins.a.config="}, func(t *testing.T, p *profiles.Profile) {
			if got := p.Rows[0].Config["url"]; got != "http://one" {
				t.Errorf("url %v", got)
			}
		}},
		{"value holding =", []string{"plugins.a.config.url=http://x/?a=b"}, func(t *testing.T, p *profiles.Profile) {
			if got := p.Rows[0].Config["url"]; got != "http://x/?a=b" {
				t.Errorf("url %v", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, mustLoad(t, profiles.LoadOptions{Data: []byte(base), Sets: tt.sets}))
		})
	}
}

func TestLoadOverlaysEnvironment(t *testing.T) {
	base := `
plugins:
  my-server:
    use: x
    config:
      toolCallTimeoutMs: 1000
      ratio: 0.5
      verbose: false
      token: old
      args: [a]
      env: {KEEP: k}
`
	env := []string{
		"PATH=/bin",
		"HARNESS_SELF=/ignored", // no "__": belongs to the binary
		"HARNESS_PROFILE=web",   // likewise
		"HARNESS_PLUGINS__MY_SERVER__ENABLED=false",
		"HARNESS_PLUGINS__MY_SERVER__CONFIG__TOOLCALLTIMEOUTMS=5000",
		"HARNESS_PLUGINS__MY_SERVER__CONFIG__RATIO=0.25",
		"HARNESS_PLUGINS__MY_SERVER__CONFIG__VERBOSE=true",
		"HARNESS_PLUGINS__MY_SERVER__CONFIG__TOKEN=0123",
		"HARNESS_PLUGINS__MY_SERVER__CONFIG__ARGS=[b, c]",
		"HARNESS_PLUGINS__MY_SERVER__CONFIG__ENV__GITHUB_TOKEN=ghp",
		"HARNESS_PLUGINS__MY_SERVER__CONFIG__NEWKEY=v",
		"HARNESS_PLUGINS__EXTRA__USE=y",
	}
	p := mustLoad(t, profiles.LoadOptions{Data: []byte(base), Environ: env})
	if got := ids(p.Rows); !slices.Equal(got, []string{"my-server", "extra"}) {
		t.Fatalf("rows %v", got)
	}
	r := p.Rows[0]
	if r.Enabled {
		t.Error("still enabled")
	}
	want := map[string]any{
		"toolCallTimeoutMs": 5000,
		"ratio":             0.25,
		"verbose":           true,
		"token":             "0123",
		"args":              []any{"b", "c"},
		"env":               map[string]any{"KEEP": "k", "GITHUB_TOKEN": "ghp"},
		"newkey":            "v",
	}
	if !reflect.DeepEqual(r.Config, want) {
		t.Errorf("config\n got %#v\nwant %#v", r.Config, want)
	}
	if p.Rows[1].Use != "y" {
		t.Errorf("extra: %+v", p.Rows[1])
	}
	// The environment comes after --set.
	p = mustLoad(t, profiles.LoadOptions{Data: []byte(base),
		Sets:    []string{"plugins.my-server.config.token=fromset"},
		Environ: []string{"HARNESS_PLUGINS__MY_SERVER__CONFIG__TOKEN=fromenv"}})
	if got := p.Rows[0].Config["token"]; got != "fromenv" {
		t.Errorf("token %v, want the environment's", got)
	}
}

func TestLoadExtendsFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "base.yaml", "description: base\nextends: cli\nplugins:\n  gh:\n    use: mcpclient\n    config: {serverName: gh, transport: stdio, command: gh-mcp}\n")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "sub"), "top.yaml", "extends: ../base.yaml\nplugins:\n  gh:\n    enabled: false\n    config:\n      args: [stdio]\n  fs: {use: mcpclient, config: {serverName: fs}}\n")
	p := mustLoad(t, profiles.LoadOptions{Name: filepath.Join(dir, "sub", "top.yaml")})
	if got, want := ids(p.Rows), []string{"tools", "prompt", "resources", "prompts", "model", "manager", "remote", "console", "agent", "gh", "fs"}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	gh := find(t, p.Rows, "gh")
	if gh.Enabled || gh.Config["command"] != "gh-mcp" || !reflect.DeepEqual(gh.Config["args"], []any{"stdio"}) {
		t.Errorf("gh: %+v", gh)
	}
	if p.Description != "base" {
		t.Errorf("description %q", p.Description)
	}
}

func TestLoadExpandsSelf(t *testing.T) {
	doc := "plugins:\n  a:\n    use: x\n    config:\n      command: ${HARNESS_SELF}\n      args: ['--self=${HARNESS_SELF}', '${OTHER}']\n      nested: {path: '${HARNESS_SELF}.d'}\n"
	p := mustLoad(t, profiles.LoadOptions{Data: []byte(doc), Self: self})
	want := map[string]any{
		"command": self,
		"args":    []any{"--self=" + self, "${OTHER}"},
		"nested":  map[string]any{"path": self + ".d"},
	}
	if !reflect.DeepEqual(p.Rows[0].Config, want) {
		t.Errorf("config\n got %#v\nwant %#v", p.Rows[0].Config, want)
	}
}

func TestLoadAcceptsNulls(t *testing.T) {
	// Everything commented out is an empty profile, not an error.
	p := mustLoad(t, profiles.LoadOptions{Data: []byte("plugins:\n#  a: {use: x}\n")})
	if len(p.Rows) != 0 {
		t.Fatalf("rows %v", ids(p.Rows))
	}
	p = mustLoad(t, profiles.LoadOptions{Data: []byte("plugins:\n  a:\n    use: x\n    config:\n    #  k: v\n  s:\n    plugins: {}\n")})
	if c := p.Rows[0].Config; c == nil || len(c) != 0 {
		t.Errorf("config %#v, want an empty map", c)
	}
	if s := p.Rows[1]; s.Use != "" || len(s.Rows) != 0 {
		t.Errorf("scope row %+v", s)
	}
	// A null plugins map in an extending profile does not wipe the base.
	p = mustLoad(t, profiles.LoadOptions{Data: []byte("extends: cli\nplugins:\n")})
	if got := ids(p.Rows); len(got) != 9 {
		t.Errorf("rows %v", got)
	}
}

func TestLoadDefaultsToInputLabel(t *testing.T) {
	_, err := profiles.Load(profiles.LoadOptions{Data: []byte("nope: 1\n")})
	if err == nil || !strings.HasPrefix(err.Error(), `profile "<input>": line 1: key "nope"`) {
		t.Fatalf("got %v", err)
	}
}

func TestLoadKeepsDateLikeStrings(t *testing.T) {
	doc := "plugins:\n  a:\n    use: x\n    config:\n      protocolVersion: 2025-11-25\n      versions: [2025-06-18, 2024-11-05]\n"
	p := mustLoad(t, profiles.LoadOptions{Data: []byte(doc),
		Sets:    []string{"plugins.a.config.pinned={v: 2025-03-26}"},
		Environ: []string{"HARNESS_PLUGINS__A__CONFIG__VERSIONS=[2024-10-07]"}})
	want := map[string]any{
		"protocolVersion": "2025-11-25",
		"versions":        []any{"2024-10-07"},
		"pinned":          map[string]any{"v": "2025-03-26"},
	}
	if !reflect.DeepEqual(p.Rows[0].Config, want) {
		t.Errorf("config\n got %#v\nwant %#v", p.Rows[0].Config, want)
	}
}

// TestElicitationKey: the elicitation policy is read from the profile, overlaid by --set like
// any key, and dumped.
func TestElicitationKey(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	write(t, dir, "p.yaml", "extends: cli\nelicitation: defaults\nplugins: {}\n")
	p, err := profiles.Load(profiles.LoadOptions{Name: file})
	if err != nil || p.Elicitation != "defaults" {
		t.Fatalf("Load = %+v, %v", p, err)
	}
	out, err := p.YAML(profiles.Redact)
	if err != nil || !strings.Contains(string(out), "\nelicitation: defaults\n") {
		t.Fatalf("dump:\n%s\n%v", out, err)
	}
	p, err = profiles.Load(profiles.LoadOptions{Name: file, Sets: []string{"elicitation=ask"}})
	if err != nil || p.Elicitation != "ask" {
		t.Fatalf("with --set: %+v, %v", p, err)
	}
	if p, err := profiles.Load(profiles.LoadOptions{Name: "cli"}); err != nil || p.Elicitation != "" {
		t.Fatalf("cli: %+v, %v", p, err)
	}
}
