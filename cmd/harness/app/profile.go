package app

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/internal/shellwords"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
	"github.com/cordisgo/harness/profiles"
)

// profileFlags are the global flags that select and shape the profile.
type profileFlags struct {
	name  string   // -p/--profile
	sets  []string // --set
	stdio []string // --stdio NAME=CMDLINE
	http  []string // --http NAME=URL
	env   []string // --env KEY=VALUE, for the --stdio servers
}

// loadProfile loads the profile the flags select, adds the ad-hoc server
// rows, and decodes every enabled row's configuration with its plugin so
// that a bad setting is reported before anything is mounted. Errors are
// usage errors naming the profile (or flag) and the key path, every
// problem at once.
func (a *invocation) loadProfile() (*profiles.Profile, error) { return a.loadProfileChecked(false) }

// loadProfileChecked is loadProfile; with strict (profile check) it also
// reports what would only fail at mount: two MCP clients with the same
// serverName in one scope, and the settings file of an MCP manager row that
// does not parse or validate.
func (a *invocation) loadProfileChecked(strict bool) (*profiles.Profile, error) {
	sets, adhocSets := a.flags.splitAdhocSets()
	p, err := profiles.Load(profiles.LoadOptions{
		Name:    a.flags.name,
		Sets:    sets,
		Environ: a.env,
		Catalog: func(use string) bool { _, ok := a.catalog[use]; return ok },
		Self:    a.self,
	})
	if err != nil {
		return nil, profileError(err)
	}
	for _, w := range p.Warnings {
		errorf(a.stderr, a.prog, "profile %q: warning: %s", p.Source, w)
	}
	adhoc, err := a.adhocRows(p)
	if err != nil {
		return nil, err
	}
	if err := applyAdhocSets(adhoc, adhocSets); err != nil {
		return nil, err
	}
	a.addLoginCommands(adhoc, adhocSets)
	p.Rows = append(p.Rows, adhoc...)
	a.addSelfEnv(p.Rows)
	a.addSettingsDefaults(p.Rows)
	labels := map[string]string{}
	for i, r := range adhoc {
		labels[r.Path] = adhocLabel(a.flags, i)
	}
	warnings, err := host.Check(p, host.CheckOptions{Catalog: a.catalog, Labels: labels, Strict: strict, LookupEnv: a.lookupEnv})
	for _, w := range warnings {
		errorf(a.stderr, a.prog, "%s", w)
	}
	if err != nil {
		return nil, profileError(err)
	}
	return p, nil
}

// lookupEnv reads a variable of the invocation's environment (the process's when it has
// none).
func (a *invocation) lookupEnv(name string) (string, bool) {
	if a.env == nil {
		return os.LookupEnv(name)
	}
	return lookupEnv(a.env, name)
}

// adhocLabel names the flag that made the i-th ad-hoc row.
func adhocLabel(f profileFlags, i int) string {
	if i < len(f.stdio) {
		return "--stdio " + f.stdio[i]
	}
	return "--http " + f.http[i-len(f.stdio)]
}

// adhocRows turns --stdio and --http flags into mcpclient rows appended to
// the profile's top level, in flag order (stdio first).
func (a *invocation) adhocRows(p *profiles.Profile) ([]profiles.Row, error) {
	taken := map[string]string{}
	for _, r := range p.Rows {
		taken[strings.ToLower(r.ID)] = fmt.Sprintf("the profile's row %q", r.ID)
	}
	var rows []profiles.Row
	add := func(flag, arg string, config func(value string, cfg mcpclient.Config) (mcpclient.Config, error)) error {
		name, value, ok := strings.Cut(arg, "=")
		if !ok {
			return usageErrorf("%s %q: expected NAME=%s", flag, arg, map[string]string{"--stdio": "CMDLINE", "--http": "URL"}[flag])
		}
		// Ad-hoc server names become row ids too, which the server name grammar satisfies.
		if !mcpclient.ValidServerName(name) {
			return usageErrorf("%s %q: server name %q must be 1 to 32 letters, digits, '-' or '_'", flag, arg, name)
		}
		if prev, dup := taken[strings.ToLower(name)]; dup {
			return usageErrorf("%s %q: name %q is already used by %s", flag, arg, name, prev)
		}
		if _, ok := a.catalog[host.UseClient]; !ok {
			return usageErrorf("%s %q: this binary has no %s plugin", flag, arg, host.UseClient)
		}
		var cfg mcpclient.Config
		cfg.Default()
		cfg.ServerName = name
		cfg, err := config(value, cfg)
		if err != nil {
			return usageErrorf("%s %q: %v", flag, arg, err)
		}
		taken[strings.ToLower(name)] = flag + " " + name
		rows = append(rows, profiles.Row{
			ID: name, Use: host.UseClient, Enabled: true, Config: serverdoc.ConfigKeys(cfg), Path: "plugins." + name,
		})
		return nil
	}
	for _, arg := range a.flags.stdio {
		err := add("--stdio", arg, func(cmdline string, cfg mcpclient.Config) (mcpclient.Config, error) {
			words, err := shellwords.Split(cmdline)
			if err != nil {
				return cfg, fmt.Errorf("command line: %w", err)
			}
			if len(words) == 0 {
				return cfg, errors.New("empty command line")
			}
			cfg.Transport, cfg.Command, cfg.Args = mcpclient.TransportStdio, words[0], words[1:]
			if cfg.Env, err = parseKeyValues("--env", a.flags.env); err != nil {
				return cfg, err
			}
			return cfg, nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, arg := range a.flags.http {
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

// addSelfEnv adds Options.SelfEnv to the env of every row, at any depth,
// whose config runs the harness binary itself (command == Self).
func (a *invocation) addSelfEnv(rows []profiles.Row) {
	if len(a.selfEnv) == 0 {
		return
	}
	for i := range rows {
		r := &rows[i]
		a.addSelfEnv(r.Rows)
		cfg, ok := clientConfig(r.Config)
		if !ok || cfg.Command == "" || cfg.Command != a.self {
			continue
		}
		after := cfg
		after.Env = maps.Clone(a.selfEnv)
		maps.Copy(after.Env, cfg.Env) // the profile's own entries win
		r.Config = serverdoc.Patch(r.Config, cfg, after)
	}
}

// clientConfig decodes a row's configuration as an MCP client's (defaults applied,
// references as written); ok is false when it is not one.
func clientConfig(raw map[string]any) (mcpclient.Config, bool) {
	var cfg mcpclient.Config
	cfg.Default()
	return cfg, ctx.DecodeInto(raw, &cfg) == nil
}
