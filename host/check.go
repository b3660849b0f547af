package host

import (
	"errors"
	"fmt"
	"os"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/profiles"
	"github.com/cordisgo/harness/secrets"
)

// CheckOptions configure Check.
type CheckOptions struct {
	// Catalog maps a row's use key to its plugin; nil means Catalog().
	Catalog map[string]ctx.PluginDef
	// Labels name what made a row that is not the profile's own, by row path (a flag such
	// as "--stdio demo=…"): its problems are placed there instead of in the profile.
	Labels map[string]string
	// Strict also reports what would only fail at mount: two MCP clients with the same
	// serverName in one scope, a settings file of an MCP manager row that does not parse
	// or validate, and (as warnings) ${VAR} references to variables that are not set.
	Strict bool
	// LookupEnv reads the environment that ${VAR} references resolve from; nil means
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Check decodes the configuration of every enabled row of p (at any depth) with its
// plugin, so that a bad setting is reported before anything is mounted. Its error joins
// every problem (ctx.JoinConfigErrors: *ctx.ConfigError values naming the profile, or the
// row's label, and the key path); warnings are sentences about what will not work but is
// not wrong. It reads files (strict: the settings files) but changes nothing.
func Check(p *profiles.Profile, opts CheckOptions) (warnings []string, err error) {
	if opts.Catalog == nil {
		opts.Catalog = builtins
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	ck := &checker{opts: opts, p: p}
	ck.rows(p.Rows, map[string]string{})
	return ck.warnings, ctx.JoinConfigErrors(ck.problems)
}

// checker decodes the configuration of every enabled row with its plugin, collecting every
// problem.
type checker struct {
	opts     CheckOptions
	p        *profiles.Profile
	problems []*ctx.ConfigError
	warnings []string
}

// rows checks rows mounted in one registration scope; names maps the serverNames of its
// MCP clients to their rows.
func (ck *checker) rows(rows []profiles.Row, names map[string]string) {
	for _, r := range rows {
		if !r.Enabled {
			continue
		}
		scope := names
		if r.AgentScope() {
			scope = map[string]string{} // the row is an agent scope of its own
		}
		if r.Use != "" {
			ck.row(r, scope)
		}
		ck.rows(r.Rows, scope)
	}
}

// row decodes one row's configuration and, when strict, checks what its plugin would
// refuse at mount.
func (ck *checker) row(r profiles.Row, names map[string]string) {
	def, ok := ck.opts.Catalog[r.Use]
	if !ok { // profiles.Load checked this; a row added later may not have been
		ck.add(&ctx.ConfigError{Source: fmt.Sprintf("profile %q", ck.p.Source), Key: r.Path + ".use", Msg: fmt.Sprintf("unknown plugin %q", r.Use)})
		return
	}
	v, err := def.DecodeConfig(r.Config)
	if err != nil {
		ck.add(ctx.ConfigErrors(configError(ck.where(r), r, err))...)
		return
	}
	if !ck.opts.Strict {
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
	res := &secrets.Resolver{
		LookupEnv: ck.opts.LookupEnv,
		Secrets:   func() (secrets.Credentials, error) { return nil, secrets.ErrNoCredentials },
	}
	_, err := cfg.Expand(res)
	for _, e := range ctx.ConfigErrors(err) {
		if errors.Is(e, secrets.ErrMissingVariable) {
			ck.warnings = append(ck.warnings, fmt.Sprintf("%s: warning: key %q: %s: the server will fail to mount",
				ck.where(r), r.Path+".config."+e.Key, e.Msg))
		}
	}
}

func (ck *checker) add(list ...*ctx.ConfigError) { ck.problems = append(ck.problems, list...) }

// where names the source of a row: the profile, or what made a row it labels.
func (ck *checker) where(r profiles.Row) string {
	if label := ck.opts.Labels[r.Path]; label != "" {
		return label
	}
	return fmt.Sprintf("profile %q", ck.p.Source)
}

// configError places a plugin's configuration problems at where (the profile, or what made
// the row): the key path under the row's config and what was expected, one line per
// problem.
func configError(where string, r profiles.Row, err error) error {
	list := ctx.ConfigErrors(err)
	for i, e := range list {
		c := *e
		c.Plugin = "" // the row's use names it
		list[i] = &c
	}
	return ctx.PlaceConfigErrors(ctx.JoinConfigErrors(list), where, "", "", r.Path+".config", nil)
}

// ClientConfig returns the decoded configuration of the profile's enabled mcpclient row,
// at any depth, whose serverName is name, with the plugins of catalog (host.Catalog); a
// name no row has is an *UnknownServerError listing the names the profile has.
func ClientConfig(p *profiles.Profile, catalog map[string]ctx.PluginDef, name string) (mcpclient.Config, error) {
	var names []string
	var found *mcpclient.Config
	var walk func(rows []profiles.Row) error
	walk = func(rows []profiles.Row) error {
		for _, r := range rows {
			if !r.Enabled {
				continue
			}
			if def, ok := catalog[UseClient]; ok && r.Use == UseClient {
				v, err := def.DecodeConfig(r.Config)
				if err != nil {
					return err
				}
				if cfg, ok := v.(mcpclient.Config); ok {
					names = append(names, cfg.ServerName)
					if cfg.ServerName == name && found == nil {
						found = &cfg
					}
				}
			}
			if err := walk(r.Rows); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(p.Rows); err != nil {
		return mcpclient.Config{}, err
	}
	if found == nil {
		return mcpclient.Config{}, &UnknownServerError{Name: name, Where: fmt.Sprintf("in profile %q", p.Source), Known: names}
	}
	return *found, nil
}
