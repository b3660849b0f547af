package profiles_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/profiles"
)

// catalog is the plugin catalog the tests assume.
func catalog(use string) bool {
	switch use {
	case "toolregistry", "sysprompt", "mcpresources", "mcpprompts", "model", "mcpclient", "mcpmanager", "remote", "console", "agent", "x", "y":
		return true
	}
	return false
}

const okRow = "plugins:\n  a:\n    use: x\n    config:\n      args: [one]\n"

func TestLoadRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	deep := "plugins:\n"
	indent := "  "
	for range 40 {
		deep += indent + "s:\n" + indent + "  plugins:\n"
		indent += "    "
	}
	deep += indent + "leaf: {use: x}\n"

	tests := []struct {
		name    string
		doc     string // profile text; "-" means load opts.Name from disk instead
		file    string // Name when doc is "-"
		sets    []string
		env     []string
		self    string
		want    string
		kind    error
		exactly bool // want is the whole message
	}{
		{name: "invalid YAML", doc: "plugins:\n  a: [x,\n", want: `profile "my.yaml": line 2: invalid YAML: did not find expected node content`, kind: profiles.ErrSyntax, exactly: true},
		{name: "tab indentation", doc: "plugins:\n\ta: {use: x}\n", want: "line 2: invalid YAML: found character that cannot start any token", kind: profiles.ErrSyntax},
		{name: "broken line, not its mapping's", doc: "plugins:\n  a:\n    use: x\n   bad: 1\n", want: "line 4: invalid YAML: did not find expected key", kind: profiles.ErrSyntax},
		{name: "flow mapping not closed", doc: "plugins:\n  a:\n    use: x\n    config: {k: 1\n  b:\n    use: y\n", want: "line 4: invalid YAML", kind: profiles.ErrSyntax},
		{name: "empty document", doc: "", want: `empty document: expected a map with "plugins"`, kind: profiles.ErrInvalid},
		{name: "only comments", doc: "# all commented out\n", want: "empty document", kind: profiles.ErrInvalid},
		{name: "a list", doc: "- a\n- b\n", want: `line 1: expected a map with "plugins", got a list`, kind: profiles.ErrType},
		{name: "a scalar", doc: "hello\n", want: `got string "hello"`, kind: profiles.ErrType},
		{name: "two documents", doc: "plugins: {}\n---\nplugins: {}\n", want: "more than one YAML document: expected one", kind: profiles.ErrSyntax},
		{name: "duplicate key", doc: "plugins:\n  a: {use: x}\n  a: {use: y}\n", want: `profile "my.yaml": line 3: key "plugins.a": duplicate key (first defined on line 2)`, kind: profiles.ErrDuplicate, exactly: true},
		{name: "ids differing in case", doc: "plugins:\n  gh: {use: x}\n  GH: {use: y}\n", want: `line 3: key "plugins.GH": duplicate id: "gh" and "GH" differ only in case`, kind: profiles.ErrDuplicate},
		{name: "unknown top-level key", doc: "plugin:\n  a: {use: x}\n", want: `profile "my.yaml": line 1: key "plugin": unknown key: expected description, extends, elicitation, fleet or plugins (did you mean "plugins"?)`, kind: profiles.ErrUnknownKey, exactly: true},
		{name: "mistyped extends", doc: "extend: cli\n", want: `profile "my.yaml": line 1: key "extend": unknown key: expected description, extends, elicitation, fleet or plugins (did you mean "extends"?)`, kind: profiles.ErrUnknownKey, exactly: true},
		{name: "another host's document, no reader installed", doc: `{"mcpServers": {"a": {"command": 5}}}`, want: `profile "my.yaml": line 1: key "mcpServers": unknown key: expected description, extends, elicitation, fleet or plugins (another host's server document is read as a profile only through a server-document reader`, kind: profiles.ErrUnknownKey},
		{name: "elicitation unknown", doc: "elicitation: never\nplugins: {}\n", want: `profile "my.yaml": line 1: key "elicitation": unknown policy "never": expected decline, defaults, ask`, kind: profiles.ErrInvalid, exactly: true},
		{name: "elicitation a list", doc: "elicitation: [ask]\nplugins: {}\n", want: `key "elicitation": expected a policy name (decline, defaults, ask), got a list`, kind: profiles.ErrType},
		{name: "no plugins", doc: "description: nothing\n", want: `missing key "plugins": expected a map of plugin rows`, kind: profiles.ErrInvalid},
		{name: "plugins a list", doc: "plugins: [a, b]\n", want: `line 1: key "plugins": expected a map of plugin rows keyed by id, got a list`, kind: profiles.ErrType},
		{name: "row a string", doc: "plugins:\n  a: mcpclient\n", want: `key "plugins.a": expected a map with use, enabled, config or plugins, got string "mcpclient"`, kind: profiles.ErrType},
		{name: "row null", doc: "plugins:\n  a:\n", want: `key "plugins.a": expected a map with use, enabled, config or plugins, got null`, kind: profiles.ErrType},
		{name: "unknown row key", doc: "plugins:\n  a:\n    use: x\n    command: y\n", want: `profile "my.yaml": line 4: key "plugins.a.command": unknown key: expected use, enabled, config or plugins (plugin settings go under config)`, kind: profiles.ErrUnknownKey, exactly: true},
		{name: "mistyped row key", doc: "plugins:\n  a:\n    use: x\n    confg: {}\n", want: `profile "my.yaml": line 4: key "plugins.a.confg": unknown key: expected use, enabled, config or plugins (did you mean "config"? plugin settings go under config)`, kind: profiles.ErrUnknownKey, exactly: true},
		{name: "enabled a string", doc: "plugins:\n  gh:\n    use: x\n    enabled: \"yes\"\n", want: `profile "my.yaml": line 4: key "plugins.gh.enabled": expected a boolean, got string "yes"`, kind: profiles.ErrType, exactly: true},
		{name: "enabled null", doc: "plugins:\n  a:\n    use: x\n    enabled:\n", want: `key "plugins.a.enabled": expected a boolean, got null`, kind: profiles.ErrType},
		{name: "use a number", doc: "plugins:\n  a:\n    use: 5\n", want: `line 3: key "plugins.a.use": expected the name of a plugin, got integer 5`, kind: profiles.ErrType},
		{name: "use empty", doc: "plugins:\n  a:\n    use: ''\n", want: `key "plugins.a.use": expected the name of a plugin, got an empty string`, kind: profiles.ErrType},
		{name: "use missing", doc: "plugins:\n  a:\n    config: {k: v}\n", want: `line 2: key "plugins.a": missing key "use": expected the name of a plugin, or nested "plugins" for a plain scope (or "enabled: false" to switch the row off)`, kind: profiles.ErrInvalid},
		{name: "config a list", doc: "plugins:\n  a:\n    use: x\n    config: [a]\n", want: `key "plugins.a.config": expected a map of plugin settings, got a list`, kind: profiles.ErrType},
		{name: "config a string", doc: "plugins:\n  a:\n    use: x\n    config: url=http://x\n", want: `expected a map of plugin settings, got string "url=http://x"`, kind: profiles.ErrType},
		{name: "unknown plugin", doc: "plugins:\n  gh:\n    use: mcpclinet\n", want: `line 3: key "plugins.gh.use": unknown plugin "mcpclinet": expected a plugin compiled into this binary`, kind: profiles.ErrUnknownPlugin},
		{name: "empty id", doc: "plugins:\n  '': {use: x}\n", want: `invalid id "": expected 1 to 64 letters, digits, '-' or '_'`, kind: profiles.ErrInvalid},
		{name: "id with a dot", doc: "plugins:\n  my.server: {use: x}\n", want: `invalid id "my.server"`, kind: profiles.ErrInvalid},
		{name: "id with a space", doc: "plugins:\n  my server: {use: x}\n", want: `invalid id "my server"`, kind: profiles.ErrInvalid},
		{name: "id too long", doc: "plugins:\n  " + strings.Repeat("a", 65) + ": {use: x}\n", want: `invalid id "aaaa`, kind: profiles.ErrInvalid},
		{name: "non-string key", doc: "plugins:\n  [a]: {use: x}\n", want: `line 2: key "plugins.": expected a string key, got a list`, kind: profiles.ErrType},
		{name: "null key", doc: "plugins:\n  ~: {use: x}\n", want: `line 2: key "plugins.": expected a string key, got null`, kind: profiles.ErrType},
		{name: "nested wrong type", doc: "plugins:\n  agent:\n    plugins:\n      gh:\n        use: x\n        enabled: 1\n", want: `line 6: key "plugins.agent.plugins.gh.enabled": expected a boolean, got integer 1`, kind: profiles.ErrType},
		{name: "nested plugins not a map", doc: "plugins:\n  agent:\n    plugins: 5\n", want: `key "plugins.agent.plugins": expected a map of plugin rows keyed by id, got integer 5`, kind: profiles.ErrType},
		{name: "nested too deep", doc: deep, want: "plugin rows nested more than 32 deep", kind: profiles.ErrInvalid},
		{name: "description a list", doc: "description: [a]\nplugins: {}\n", want: `key "description": expected a string, got a list`, kind: profiles.ErrType},
		{name: "extends a number", doc: "extends: 5\nplugins: {}\n", want: `line 1: key "extends": expected the name or path of a profile to extend, got integer 5`, kind: profiles.ErrType},
		{name: "extends unknown built-in", doc: "extends: nope\nplugins: {}\n", want: `line 1: key "extends": unknown built-in profile "nope": expected one of cli, default, web, or a path to a .yaml file`, kind: profiles.ErrNotFound},
		{name: "extends missing file", doc: "extends: ./missing.yaml\nplugins: {}\n", want: `line 1: key "extends": cannot read profile: open missing.yaml: no such file or directory`, kind: profiles.ErrNotFound},
		{name: "unknown built-in", doc: "-", file: "nope", want: `profile "nope": unknown built-in profile "nope"`, kind: profiles.ErrNotFound},
		{name: "mistyped built-in", doc: "-", file: "defualt", want: `unknown built-in profile "defualt": expected one of cli, default, web, or a path to a .yaml file (did you mean "default"?)`, kind: profiles.ErrNotFound},
		{name: "missing file", doc: "-", file: filepath.Join(dir, "missing.yaml"), want: "cannot read profile: open " + filepath.Join(dir, "missing.yaml") + ": no such file or directory", kind: profiles.ErrNotFound},
		{name: "a directory", doc: "-", file: dir + "/", want: "not a regular file", kind: profiles.ErrInvalid},
		{name: "self without Self", doc: "plugins:\n  a:\n    use: x\n    config:\n      args: [serve, '${HARNESS_SELF}']\n", want: `line 5: key "plugins.a.config.args.1": ${HARNESS_SELF} needs the path of the running binary (LoadOptions.Self)`, kind: profiles.ErrInvalid},
		{name: "set without =", doc: okRow, sets: []string{"plugins.a.enabled"}, want: `profile "my.yaml": --set plugins.a.enabled: expected KEY=VALUE, e.g. plugins.demo.enabled=false`, kind: profiles.ErrSyntax, exactly: true},
		{name: "set empty key", doc: okRow, sets: []string{"=x"}, want: "--set : empty key: expected KEY=VALUE", kind: profiles.ErrSyntax},
		{name: "set empty segment", doc: okRow, sets: []string{"plugins..a=1"}, want: `empty segment in key "plugins..a"`, kind: profiles.ErrSyntax},
		{name: "set bad YAML value", doc: okRow, sets: []string{"plugins.a.config.k=[1, "}, want: `--set plugins.a.config.k: key "plugins.a.config.k": value is not valid YAML`, kind: profiles.ErrSyntax},
		{name: "set inside a string", doc: okRow, sets: []string{"plugins.a.use.name=y"}, want: `key "plugins.a.use.name": cannot set a key inside "plugins.a.use", which holds string "x", not a map`, kind: profiles.ErrInvalid},
		{name: "set inside a list", doc: okRow, sets: []string{"plugins.a.config.args.0=two"}, want: `which holds a list, not a map; a list is replaced whole, e.g. plugins.a.config.args=[a, b]`, kind: profiles.ErrInvalid},
		{name: "set extends", doc: okRow, sets: []string{"extends=web"}, want: "extends can only be written in a profile file", kind: profiles.ErrInvalid},
		{name: "set wrong type", doc: okRow, sets: []string{"plugins.a.enabled=yes"}, want: `profile "my.yaml": --set plugins.a.enabled: key "plugins.a.enabled": expected a boolean, got string "yes"`, kind: profiles.ErrType, exactly: true},
		{name: "set a row without use", doc: okRow, sets: []string{"plugins.b.config.k=1"}, want: `--set plugins.b.config.k: key "plugins.b": missing key "use"`, kind: profiles.ErrInvalid},
		{name: "set unknown key", doc: okRow, sets: []string{"plugin.a.use=x"}, want: `--set plugin.a.use: key "plugin": unknown key`, kind: profiles.ErrUnknownKey},
		{name: "set unknown plugin", doc: okRow, sets: []string{"plugins.a.use=nope"}, want: `--set plugins.a.use: key "plugins.a.use": unknown plugin "nope"`, kind: profiles.ErrUnknownPlugin},
		{name: "set not UTF-8", doc: okRow, sets: []string{"plugins.a.config.\x86=1"}, want: `--set "plugins.a.config.\x86": not valid UTF-8`, kind: profiles.ErrSyntax},
		{name: "env not UTF-8", doc: okRow, env: []string{"HARNESS_PLUGINS__A__CONFIG__K=\xff"}, want: `$"HARNESS_PLUGINS__A__CONFIG__K": not valid UTF-8`, kind: profiles.ErrSyntax},
		{name: "env wrong type", doc: okRow, env: []string{"HARNESS_PLUGINS__A__ENABLED=maybe"}, want: `profile "my.yaml": $HARNESS_PLUGINS__A__ENABLED: key "plugins.a.enabled": expected a boolean, got string "maybe"`, kind: profiles.ErrType, exactly: true},
		{name: "env empty segment", doc: okRow, env: []string{"HARNESS_PLUGINS____A=1"}, want: "$HARNESS_PLUGINS____A: empty key segment", kind: profiles.ErrSyntax},
		{name: "env ambiguous", doc: "plugins:\n  a:\n    use: x\n    config: {Url: a, url: b}\n", env: []string{"HARNESS_PLUGINS__A__CONFIG__URL=c"}, want: `"URL" matches keys ["Url" "url"]: expected one`, kind: profiles.ErrInvalid},
		{name: "env twice", doc: okRow, env: []string{"HARNESS_PLUGINS__A__CONFIG={k: v}", "HARNESS_PLUGINS__A__CONFIG__K=w"}, want: `$HARNESS_PLUGINS__A__CONFIG__K: key "plugins.a.config.k": also set by $HARNESS_PLUGINS__A__CONFIG`, kind: profiles.ErrDuplicate},
		{name: "env inside a string", doc: okRow, env: []string{"HARNESS_PLUGINS__A__USE__NAME=y"}, want: `cannot set a key inside "plugins.a.use", which holds string "x"`, kind: profiles.ErrInvalid},
		{name: "env extends", doc: okRow, env: []string{"HARNESS_EXTENDS__X=web"}, want: "extends can only be written in a profile file", kind: profiles.ErrInvalid},
		{name: "env a row without use", doc: okRow, env: []string{"HARNESS_PLUGINS__NEW__CONFIG__URL=http://x"}, want: `$HARNESS_PLUGINS__NEW__CONFIG__URL: key "plugins.new": missing key "use"`, kind: profiles.ErrInvalid},
	}
	if len(tests) < 25 {
		t.Fatalf("only %d bad inputs", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := profiles.LoadOptions{Name: "my.yaml", Data: []byte(tt.doc), Sets: tt.sets, Environ: tt.env, Self: tt.self, Catalog: catalog}
			if tt.doc == "-" {
				opts.Name, opts.Data = tt.file, nil
			}
			p, err := profiles.Load(opts)
			if err == nil {
				t.Fatalf("Load succeeded: %+v", p)
			}
			var pe *profiles.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *profiles.Error: %v", err, err)
			}
			if tt.exactly && err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n got %s\nwant it to contain %s", err, tt.want)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %v is not %v", err, tt.kind)
			}
		})
	}
}

func TestLoadRejectsExtendsCycle(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", "extends: ./b.yaml\nplugins: {}\n")
	write(t, dir, "b.yaml", "extends: a.yaml\nplugins: {}\n")
	_, err := profiles.Load(profiles.LoadOptions{Name: filepath.Join(dir, "a.yaml")})
	want := `extends "./b.yaml", line 1: key "extends": extends cycle: ` + filepath.Join(dir, "a.yaml") + " → ./b.yaml → a.yaml"
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, profiles.ErrInvalid) {
		t.Fatalf("got %v, want an ErrInvalid containing %s", err, want)
	}
}

func TestLoadNamesTheExtendedFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "base.yaml", "plugins:\n  a:\n    use: x\n    enabled: nope\n")
	write(t, dir, "top.yaml", "extends: base.yaml\nplugins:\n  b: {use: y}\n")
	top := filepath.Join(dir, "top.yaml")
	_, err := profiles.Load(profiles.LoadOptions{Name: top})
	want := `profile "` + top + `": extends "base.yaml", line 4: key "plugins.a.enabled": expected a boolean, got string "nope"`
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	var pe *profiles.Error
	if !errors.As(err, &pe) || pe.Layer != `extends "base.yaml"` || pe.Line != 4 || pe.Path != "plugins.a.enabled" {
		t.Fatalf("fields: %+v", pe)
	}
}

func TestLoadRejectsHugeFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "big.yaml", "plugins: {}\n"+strings.Repeat("# padding\n", 200_000))
	_, err := profiles.Load(profiles.LoadOptions{Name: filepath.Join(dir, "big.yaml")})
	if err == nil || !strings.Contains(err.Error(), "is larger than 1048576 bytes") {
		t.Fatalf("got %v", err)
	}
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A profile error reads as the module's one configuration problem type too.
func TestErrorAsConfigError(t *testing.T) {
	_, err := profiles.Load(profiles.LoadOptions{Name: "my.yaml", Data: []byte("plugins:\n  a:\n    use: x\n    enabled: yes\n")})
	list := ctx.ConfigErrors(err)
	if len(list) != 1 || list[0].Source != `profile "my.yaml"` || list[0].Line != 4 || list[0].Key != "plugins.a.enabled" || list[0].File != "my.yaml" {
		t.Fatalf("%v as %+v", err, list)
	}
	if list[0].Error() != err.Error() {
		t.Errorf("texts differ:\n%s\n%s", list[0].Error(), err.Error())
	}
}
