package profiles_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/profiles"
)

const secrets = `
description: secrets everywhere
plugins:
  gh:
    use: mcpclient
    config:
      serverName: gh
      command: gh-mcp
      args: [stdio]
      env:
        GITHUB_TOKEN: ghp_live
        EMPTY: ""
        EV_TOKEN: "${secret:evtoken}"
      cwd: /work
  api:
    use: mcpclient
    config:
      url: https://user:hunter2@api.example.com/mcp?apiKey=k123&region=eu
      headers:
        Authorization: Bearer abc
        X-Trace: "1"
        X-Ref: "Bearer ${GITHUB_TOKEN}"
      oauth:
        clientId: public-id
        clientSecret: s3cret
        tokens: [t1, t2]
      password: 42
      retries: 3
  agent:
    plugins:
      nested:
        use: x
        config:
          api_key: nested-secret
          AccessToken: at
`

func TestYAMLRedactsSecrets(t *testing.T) {
	p := mustLoad(t, profiles.LoadOptions{Name: "s.yaml", Data: []byte(secrets)})
	out, err := p.YAML(profiles.Redact)
	if err != nil {
		t.Fatal(err)
	}
	dump := string(out)
	for _, secret := range []string{"ghp_live", "hunter2", "k123", "Bearer abc", "s3cret", "t1", "t2", "42", "nested-secret", ": at\n"} {
		if strings.Contains(dump, secret) {
			t.Errorf("dump shows %q:\n%s", secret, dump)
		}
	}
	for _, visible := range []string{
		"GITHUB_TOKEN: '[redacted]'", `EMPTY: ""`, "X-Trace: '[redacted]'", "Authorization: '[redacted]'",
		"EV_TOKEN: ${secret:evtoken}", "X-Ref: Bearer ${GITHUB_TOKEN}",
		"cwd: /work", "command: gh-mcp", "clientId: public-id", "retries: 3", "region=eu",
		"https://user:[redacted]@api.example.com/mcp?apiKey=[redacted]&region=eu",
		"- '[redacted]'", "password: '[redacted]'", "api_key: '[redacted]'", "AccessToken: '[redacted]'",
	} {
		if !strings.Contains(dump, visible) {
			t.Errorf("dump lacks %q:\n%s", visible, dump)
		}
	}
	// Redaction is for display only.
	if find(t, p.Rows, "gh").Config["env"].(map[string]any)["GITHUB_TOKEN"] != "ghp_live" {
		t.Error("Redact changed the profile")
	}
}

func TestYAMLCallsRedactWithPaths(t *testing.T) {
	p := mustLoad(t, profiles.LoadOptions{Data: []byte(secrets)})
	var paths []string
	_, err := p.YAML(func(path string, v any) any {
		paths = append(paths, path)
		if path == "plugins.gh.config.cwd" {
			return "hidden"
		}
		return v
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"plugins.gh.config.serverName", "plugins.gh.config.args", "plugins.gh.config.args.0",
		"plugins.gh.config.env", "plugins.gh.config.env.GITHUB_TOKEN", "plugins.api.config.oauth.tokens.1",
		"plugins.agent.plugins.nested.config.api_key",
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("redact not called for %q; called for %v", want, paths)
		}
	}
	for _, path := range paths {
		if !strings.Contains(path, ".config.") {
			t.Errorf("redact called outside a config: %q", path)
		}
	}
}

func TestYAMLRoundTrips(t *testing.T) {
	for _, name := range append(profiles.BuiltinNames(), "secrets") {
		t.Run(name, func(t *testing.T) {
			opts := profiles.LoadOptions{Name: name, Self: self, Sets: []string{"plugins.extra.use=x", "plugins.extra.enabled=false"}}
			if name == "secrets" {
				opts.Data = []byte(secrets)
			}
			p := mustLoad(t, opts)
			out, err := p.YAML(nil)
			if err != nil {
				t.Fatal(err)
			}
			again := mustLoad(t, profiles.LoadOptions{Name: "dump.yaml", Data: out})
			if !reflect.DeepEqual(again.Rows, p.Rows) || again.Description != p.Description {
				t.Errorf("dump does not load back to the same rows:\n%s", out)
			}
			if strings.Contains(string(out), "extends:") {
				t.Errorf("dump keeps extends:\n%s", out)
			}
		})
	}
}

func TestYAMLHeader(t *testing.T) {
	p := mustLoad(t, profiles.LoadOptions{Name: "web", Self: self,
		Sets:    []string{"plugins.demo.config.env.TOKEN=secret-value"},
		Environ: []string{"HARNESS_PLUGINS__DEMO__ENABLED=false"}})
	out, err := p.YAML(profiles.Redact)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Profile \"web\", merged.\n# Layers: built-in cli, built-in default, built-in web, --set plugins.demo.config.env.TOKEN, $HARNESS_PLUGINS__DEMO__ENABLED.\n"
	if !strings.HasPrefix(string(out), want) {
		t.Errorf("header:\n%s\nwant prefix:\n%s", out, want)
	}
	if strings.Contains(string(out), "secret-value") {
		t.Errorf("dump shows the --set secret:\n%s", out)
	}
}

func TestYAMLOfAHandBuiltProfile(t *testing.T) {
	p := &profiles.Profile{Rows: []profiles.Row{{
		ID: "a", Use: "x", Enabled: true,
		Config: map[string]any{"env": map[string]string{"B": "2", "A": "1"}, "n": []int{1, 2}},
	}}}
	out, err := p.YAML(profiles.Redact)
	if err != nil {
		t.Fatal(err)
	}
	want := "plugins:\n  a:\n    use: x\n    config:\n      env:\n        A: '[redacted]'\n        B: '[redacted]'\n      n:\n        - 1\n        - 2\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}
