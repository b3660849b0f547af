package app

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/profiles"
)

// mcpclientUse is the catalog name of the MCP client plugin, which the
// --stdio and --http flags mount.
const mcpclientUse = "mcpclient"

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
	ck := &checker{catalog: a.catalog, p: p, labels: labels, strict: strict, lookupEnv: a.lookupEnv}
	ck.rows(p.Rows, map[string]string{})
	for _, w := range ck.warnings {
		errorf(a.stderr, a.prog, "%s", w)
	}
	if err := ctx.JoinConfigErrors(ck.problems); err != nil {
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
		if _, ok := a.catalog[mcpclientUse]; !ok {
			return usageErrorf("%s %q: this binary has no %s plugin", flag, arg, mcpclientUse)
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
			ID: name, Use: mcpclientUse, Enabled: true, Config: serverdoc.ConfigKeys(cfg), Path: "plugins." + name,
		})
		return nil
	}
	for _, arg := range a.flags.stdio {
		err := add("--stdio", arg, func(cmdline string, cfg mcpclient.Config) (mcpclient.Config, error) {
			words, err := splitWords(cmdline)
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

// checker decodes the configuration of every enabled row with its plugin,
// collecting every problem. labels name the flag behind an ad-hoc row (by
// row path).
type checker struct {
	catalog map[string]ctx.PluginDef
	p       *profiles.Profile
	labels  map[string]string
	strict  bool
	// lookupEnv reads the environment that ${VAR} references resolve from.
	lookupEnv func(string) (string, bool)
	problems  []*ctx.ConfigError
	warnings  []string
}

// rows checks rows mounted in one registration scope; names maps the
// serverNames of its MCP clients to their rows.
func (ck *checker) rows(rows []profiles.Row, names map[string]string) {
	for _, r := range rows {
		if !r.Enabled {
			continue
		}
		scope := names
		if len(r.Rows) > 0 {
			scope = map[string]string{} // the row is an agent scope of its own
		}
		if r.Use != "" {
			ck.row(r, scope)
		}
		ck.rows(r.Rows, scope)
	}
}

// row decodes one row's configuration and, when strict, checks what its
// plugin would refuse at mount.
func (ck *checker) row(r profiles.Row, names map[string]string) {
	def, ok := ck.catalog[r.Use]
	if !ok { // profiles.Load checked this; a row added later may not have been
		ck.add(&ctx.ConfigError{Source: fmt.Sprintf("profile %q", ck.p.Source), Key: r.Path + ".use", Msg: fmt.Sprintf("unknown plugin %q", r.Use)})
		return
	}
	v, err := def.DecodeConfig(r.Config)
	if err != nil {
		ck.add(ctx.ConfigErrors(configError(ck.p, r, ck.labels[r.Path], err))...)
		return
	}
	if !ck.strict {
		return
	}
	switch cfg := v.(type) {
	case mcpclient.Config:
		ck.unsetVariables(r, cfg)
		if first, dup := names[cfg.ServerName]; dup {
			ck.add(&ctx.ConfigError{Source: ck.where(r), Key: r.Path + ".config.serverName",
				Msg: fmt.Sprintf("serverName %q is already used by %s in the same scope: expected a name unique in its scope (the second client would fail at mount)", cfg.ServerName, first)})
		} else {
			names[cfg.ServerName] = r.Path
		}
	case mcpmanager.Config:
		for _, file := range []string{cfg.SettingsFile, cfg.ProjectSettingsFile} {
			if file == "" {
				continue
			}
			warnings, err := serverdoc.CheckFile(file)
			for _, w := range warnings {
				ck.warnings = append(ck.warnings, fmt.Sprintf("settings file %q: warning: %s", file, w))
			}
			ck.add(ctx.ConfigErrors(err)...)
		}
	}
}

// unsetVariables warns about every ${VAR} reference of cfg (without a default) to a
// variable that is not set: the server would fail to mount.
func (ck *checker) unsetVariables(r profiles.Row, cfg mcpclient.Config) {
	res := &mcpclient.Resolver{
		LookupEnv: ck.lookupEnv,
		Secrets:   func() (mcpclient.Credentials, error) { return nil, mcpclient.ErrNoCredentials },
	}
	_, err := cfg.Expand(res)
	for _, e := range ctx.ConfigErrors(err) {
		if errors.Is(e, mcpclient.ErrMissingVariable) {
			ck.warnings = append(ck.warnings, fmt.Sprintf("%s: warning: key %q: %s: the server will fail to mount",
				ck.where(r), r.Path+".config."+e.Key, e.Msg))
		}
	}
}

func (ck *checker) add(list ...*ctx.ConfigError) { ck.problems = append(ck.problems, list...) }

// where names the source of a row: the profile, or the flag behind an
// ad-hoc row.
func (ck *checker) where(r profiles.Row) string {
	if label := ck.labels[r.Path]; label != "" {
		return label
	}
	return fmt.Sprintf("profile %q", ck.p.Source)
}

// configError places a plugin's configuration problems in the profile: the source (or
// the flag behind an ad-hoc row), the key path under the row's config and what was
// expected, one line per problem.
func configError(p *profiles.Profile, r profiles.Row, label string, err error) error {
	where := fmt.Sprintf("profile %q", p.Source)
	if label != "" {
		where = label
	}
	list := ctx.ConfigErrors(err)
	for i, e := range list {
		c := *e
		c.Plugin = "" // the row's use names it
		list[i] = &c
	}
	return ctx.PlaceConfigErrors(ctx.JoinConfigErrors(list), where, "", "", r.Path+".config", nil)
}
