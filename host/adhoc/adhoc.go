// Package adhoc turns MCP servers given on a command line into profile rows: --stdio
// NAME=CMDLINE (split like a shell, without one) and --http NAME=URL become mcpclient rows
// appended at the profile's top level, --set plugins.NAME.… entries that address them are
// applied to them (the profile loader does not have them), and an --http server's row
// learns the command line that logs it in. Every error of these is the command line's (a
// usage error), naming the flag. [Load] loads a profile the way a harness command does: the
// profile, these rows, the rows' defaults and the check of every row's configuration.
//
// The functions are pure: they change only the rows they are given (Load reads the profile's
// files), and are safe for concurrent use on different rows.
package adhoc

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/redact"
	"github.com/cordisgo/harness/internal/shellwords"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
	"github.com/cordisgo/harness/profiles"
)

// UseClient is the plugin name of the rows made (UseClient).
const UseClient = "mcpclient"

// Flags are the command line's ad-hoc servers and the --set entries that may address them.
type Flags struct {
	Stdio []string          // --stdio NAME=CMDLINE
	HTTP  []string          // --http NAME=URL
	Env   map[string]string // --env KEY=VALUE, for the --stdio servers
	Sets  []string          // --set KEY=VALUE
}

// names returns the lower-cased server names of the --stdio and --http flags (those
// that parse; Rows reports the others).
func (f Flags) names() map[string]bool {
	names := map[string]bool{}
	for _, arg := range append(append([]string{}, f.Stdio...), f.HTTP...) {
		if name, _, ok := strings.Cut(arg, "="); ok && name != "" {
			names[strings.ToLower(name)] = true
		}
	}
	return names
}

// SplitSets separates the --set entries that address an ad-hoc server's row
// (plugins.NAME.… with NAME given by --stdio or --http), which the profile does not have,
// from the others, which the profile loader applies.
func (f Flags) SplitSets() (profile, adhoc []string) {
	names := f.names()
	for _, s := range f.Sets {
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

// ApplySets applies --set entries (Flags.SplitSets) to the ad-hoc rows: enabled, or a
// key under config (VALUE is YAML; a map merges into the map at KEY, as for profile rows).
func ApplySets(rows []profiles.Row, sets []string) error {
	for _, s := range sets {
		key, value, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("--set %q: expected KEY=VALUE", s)
		}
		parts := strings.Split(key, ".")
		var row *profiles.Row
		for i := range rows {
			if strings.EqualFold(rows[i].ID, parts[1]) {
				row = &rows[i]
			}
		}
		if row == nil {
			return fmt.Errorf("--set %q: no ad-hoc server %q", s, parts[1])
		}
		var v any
		if err := yaml.Unmarshal([]byte(value), &v); err != nil {
			return fmt.Errorf("--set %q: VALUE: %w", s, err)
		}
		switch {
		case len(parts) == 3 && parts[2] == "enabled":
			b, ok := v.(bool)
			if !ok {
				return fmt.Errorf("--set %q: expected a boolean", s)
			}
			row.Enabled = b
		case len(parts) >= 4 && parts[2] == "config":
			row.Config = maps.Clone(row.Config)
			if err := setPath(row.Config, parts[3:], v); err != nil {
				return fmt.Errorf("--set %q: %w", s, err)
			}
		default:
			return fmt.Errorf("--set %q: an ad-hoc server's row takes plugins.%s.enabled or plugins.%s.config.KEY", s, parts[1], parts[1])
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

// AddLoginCommands gives every ad-hoc --http row the command line that logs it in
// (oauth.loginCommand): `mcp login NAME` with the --http flag and the --set flags of that
// row, which define the server (a settings file or profile does not have it). Header and
// environment values, and values of secret-shaped keys, are masked unless they are
// references (internal/redact), as are a URL's credentials.
func (f Flags) AddLoginCommands(prog string, rows []profiles.Row, sets []string) {
	for i := range rows {
		r := &rows[i]
		cfg, ok := ClientConfig(r.Config)
		if !ok || cfg.Transport != mcpclient.TransportStreamableHTTP || cfg.OAuth.LoginCommand != "" {
			continue
		}
		words := []string{prog}
		for _, h := range f.HTTP {
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

// Label names the flag that made the i-th row of Rows.
func (f Flags) Label(i int) string {
	if i < len(f.Stdio) {
		return "--stdio " + f.Stdio[i]
	}
	return "--http " + f.HTTP[i-len(f.Stdio)]
}

// Rows turns the --stdio and --http flags into mcpclient rows to append to the profile's
// top-level rows (those of p), in flag order (stdio first).
func (f Flags) Rows(p *profiles.Profile) ([]profiles.Row, error) {
	taken := map[string]string{}
	for _, r := range p.Rows {
		taken[strings.ToLower(r.ID)] = fmt.Sprintf("the profile's row %q", r.ID)
	}
	var rows []profiles.Row
	add := func(flag, arg string, config func(value string, cfg mcpclient.Config) (mcpclient.Config, error)) error {
		name, value, ok := strings.Cut(arg, "=")
		if !ok {
			return fmt.Errorf("%s %q: expected NAME=%s", flag, arg, map[string]string{"--stdio": "CMDLINE", "--http": "URL"}[flag])
		}
		// Ad-hoc server names become row ids too, which the server name grammar satisfies.
		if !mcpclient.ValidServerName(name) {
			return fmt.Errorf("%s %q: server name %q must be 1 to 32 letters, digits, '-' or '_'", flag, arg, name)
		}
		if prev, dup := taken[strings.ToLower(name)]; dup {
			return fmt.Errorf("%s %q: name %q is already used by %s", flag, arg, name, prev)
		}
		var cfg mcpclient.Config
		cfg.Default()
		cfg.ServerName = name
		cfg, err := config(value, cfg)
		if err != nil {
			return fmt.Errorf("%s %q: %w", flag, arg, err)
		}
		taken[strings.ToLower(name)] = flag + " " + name
		rows = append(rows, profiles.Row{
			ID: name, Use: UseClient, Enabled: true, Config: serverdoc.ConfigKeys(cfg), Path: "plugins." + name,
		})
		return nil
	}
	for _, arg := range f.Stdio {
		err := add("--stdio", arg, func(cmdline string, cfg mcpclient.Config) (mcpclient.Config, error) {
			words, err := shellwords.Split(cmdline)
			if err != nil {
				return cfg, fmt.Errorf("command line: %w", err)
			}
			if len(words) == 0 {
				return cfg, errors.New("empty command line")
			}
			cfg.Transport, cfg.Command, cfg.Args, cfg.Env = mcpclient.TransportStdio, words[0], words[1:], maps.Clone(f.Env)
			return cfg, nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, arg := range f.HTTP {
		err := add("--http", arg, func(url string, cfg mcpclient.Config) (mcpclient.Config, error) {
			if url == "" {
				return cfg, errors.New("empty URL")
			}
			cfg.Transport, cfg.URL = mcpclient.TransportStreamableHTTP, url
			return cfg, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// ClientConfig decodes a row's configuration as an MCP client's (defaults applied,
// references as written); ok is false when it is not one.
func ClientConfig(raw map[string]any) (mcpclient.Config, bool) {
	var cfg mcpclient.Config
	cfg.Default()
	return cfg, ctx.DecodeInto(raw, &cfg) == nil
}

// AddSelfEnv adds env to the environment of every row of rows (nested rows included)
// whose MCP client runs self, the binary itself; the row's own entries win. A test binary
// that stands in for the harness is told so this way.
func AddSelfEnv(rows []profiles.Row, self string, env map[string]string) {
	if len(env) == 0 {
		return
	}
	for i := range rows {
		r := &rows[i]
		AddSelfEnv(r.Rows, self, env)
		cfg, ok := ClientConfig(r.Config)
		if !ok || cfg.Command == "" || cfg.Command != self {
			continue
		}
		after := cfg
		after.Env = maps.Clone(env)
		maps.Copy(after.Env, cfg.Env) // the profile's own entries win
		r.Config = serverdoc.Patch(r.Config, cfg, after)
	}
}
