package app

import (
	"fmt"
	"maps"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/internal/redact"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
	"github.com/cordisgo/harness/profiles"
)

// adhocNames returns the lower-cased server names of the --stdio and --http flags (those
// that parse; adhocRows reports the others).
func (f profileFlags) adhocNames() map[string]bool {
	names := map[string]bool{}
	for _, arg := range append(append([]string{}, f.stdio...), f.http...) {
		if name, _, ok := strings.Cut(arg, "="); ok && name != "" {
			names[strings.ToLower(name)] = true
		}
	}
	return names
}

// splitAdhocSets separates the --set entries that address an ad-hoc server's row
// (plugins.NAME.… with NAME given by --stdio or --http), which the profile does not have,
// from the others, which the profile loader applies.
func (f profileFlags) splitAdhocSets() (profile, adhoc []string) {
	names := f.adhocNames()
	for _, s := range f.sets {
		key, _, _ := strings.Cut(s, "=")
		parts := strings.SplitN(key, ".", 3)
		if len(parts) >= 2 && parts[0] == "plugins" && names[strings.ToLower(parts[1])] {
			adhoc = append(adhoc, s)
			continue
		}
		profile = append(profile, s)
	}
	return profile, adhoc
}

// applyAdhocSets applies --set entries (splitAdhocSets) to the ad-hoc rows: enabled, or a
// key under config (VALUE is YAML; a map merges into the map at KEY, as for profile rows).
func applyAdhocSets(rows []profiles.Row, sets []string) error {
	for _, s := range sets {
		key, value, ok := strings.Cut(s, "=")
		if !ok {
			return usageErrorf("--set %q: expected KEY=VALUE", s)
		}
		parts := strings.Split(key, ".")
		var row *profiles.Row
		for i := range rows {
			if strings.EqualFold(rows[i].ID, parts[1]) {
				row = &rows[i]
			}
		}
		if row == nil {
			return usageErrorf("--set %q: no ad-hoc server %q", s, parts[1])
		}
		var v any
		if err := yaml.Unmarshal([]byte(value), &v); err != nil {
			return usageErrorf("--set %q: VALUE: %v", s, err)
		}
		switch {
		case len(parts) == 3 && parts[2] == "enabled":
			b, ok := v.(bool)
			if !ok {
				return usageErrorf("--set %q: expected a boolean", s)
			}
			row.Enabled = b
		case len(parts) >= 4 && parts[2] == "config":
			row.Config = maps.Clone(row.Config)
			if err := setPath(row.Config, parts[3:], v); err != nil {
				return usageErrorf("--set %q: %v", s, err)
			}
		default:
			return usageErrorf("--set %q: an ad-hoc server's row takes plugins.%s.enabled or plugins.%s.config.KEY", s, parts[1], parts[1])
		}
	}
	return nil
}

// setPath sets the key path in m to v: a map merges into a map already there; maps on
// the way are made (copied when they were there, so that a caller's maps stay as they are).
func setPath(m map[string]any, path []string, v any) error {
	for i, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		switch {
		case ok:
			next = maps.Clone(next)
		case m[k] == nil:
			next = map[string]any{}
		default:
			return fmt.Errorf("key %s is not a map", strings.Join(path[:i+1], "."))
		}
		m[k] = next
		m = next
	}
	last := path[len(path)-1]
	if add, ok := v.(map[string]any); ok {
		if old, ok := m[last].(map[string]any); ok {
			merged := maps.Clone(old)
			maps.Copy(merged, add)
			v = merged
		}
	}
	m[last] = v
	return nil
}

// addLoginCommands gives every ad-hoc --http row the command line that logs it in
// (oauth.loginCommand): `mcp login NAME` with the --http flag and the --set flags of that
// row, which define the server (a settings file or profile does not have it). Header and
// environment values, and values of secret-shaped keys, are masked unless they are
// references (internal/redact), as are a URL's credentials.
func (a *invocation) addLoginCommands(rows []profiles.Row, sets []string) {
	for i := range rows {
		r := &rows[i]
		cfg, ok := clientConfig(r.Config)
		if !ok || cfg.Transport != mcpclient.TransportStreamableHTTP || cfg.OAuth.LoginCommand != "" {
			continue
		}
		words := []string{a.prog}
		for _, h := range a.flags.http {
			if name, url, _ := strings.Cut(h, "="); strings.EqualFold(name, r.ID) {
				words = append(words, "--http", shellWord(name+"="+redact.URL(url)))
			}
		}
		for _, s := range sets {
			key, value, _ := strings.Cut(s, "=")
			parts := strings.Split(key, ".")
			if !strings.EqualFold(parts[1], r.ID) {
				continue
			}
			if len(parts) >= 4 && (parts[3] == "headers" || parts[3] == "env") || redact.SecretName(parts[len(parts)-1]) {
				value = redact.Value(value)
			}
			words = append(words, "--set", shellWord(key+"="+value))
		}
		words = append(words, "mcp", "login", r.ID)
		after := cfg
		after.OAuth.LoginCommand = strings.Join(words, " ")
		r.Config = serverdoc.Patch(r.Config, cfg, after)
	}
}

// shellWord quotes s for a POSIX shell when it has characters the shell would read.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
