package mcpclient

import (
	"fmt"
	"maps"
	"slices"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/secrets"
)

// The ${…} references of a server configuration: which fields may hold them, their check
// at decode, their expansion (by a [secrets.Resolver]) at mount or by the MCP manager.

// templateFields calls f with the key path and value of every template-capable field of
// c, in key order within each group: command, args, env, cwd, url, headers.
func (c *Config) templateFields(f func(key string, v *string)) {
	f("command", &c.Command)
	for i := range c.Args {
		f(fmt.Sprintf("args[%d]", i), &c.Args[i])
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		v := c.Env[k]
		f("env."+k, &v)
		if v != c.Env[k] { // a read-only walk (HasReferences) must not write shared maps
			c.Env[k] = v
		}
	}
	f("cwd", &c.Cwd)
	f("url", &c.URL)
	for _, k := range slices.Sorted(maps.Keys(c.Headers)) {
		v := c.Headers[k]
		f("headers."+k, &v)
		if v != c.Headers[k] {
			c.Headers[k] = v
		}
	}
	c.OAuth.templateFields(f)
}

// HasReferences reports whether any template-capable field of c (command, args, env, cwd,
// url, headers) holds a reference.
func (c Config) HasReferences() bool {
	found := false
	c.templateFields(func(_ string, v *string) { found = found || secrets.HasReferences(*v) })
	return found
}

// CheckReferences returns a problem ([*ctx.ConfigError]) for every malformed reference in
// the template-capable fields of c, or nil.
func (c Config) CheckReferences() error {
	var p ctx.Problems
	c.checkReferences(&p)
	return p.Err()
}

// checkReferences records a problem for every malformed reference in c.
func (c Config) checkReferences(p *ctx.Problems) {
	c.Env, c.Headers = maps.Clone(c.Env), maps.Clone(c.Headers)
	c.templateFields(func(key string, v *string) {
		if !secrets.HasReferences(*v) {
			return
		}
		if err := secrets.Check(*v); err != nil {
			p.Add(key, "%v", err)
		}
	})
}

// Expand returns c with the references of its template-capable fields (command, args,
// env, cwd, url, headers) resolved by r, and the sensitive substituted values (secrets,
// and variables with secret-looking names such as GITHUB_TOKEN) added to Secrets so that
// the client masks them wherever they show up. c itself is not changed (its maps and slices are copied).
// Problems are [*ctx.ConfigError] values naming the key and the reference, never a value;
// the result is not validated.
func (c Config) Expand(r *secrets.Resolver) (Config, error) {
	out := c
	out.Args = slices.Clone(c.Args)
	out.Env = maps.Clone(c.Env)
	out.Headers = maps.Clone(c.Headers)
	var p ctx.Problems
	out.templateFields(func(key string, v *string) {
		if !secrets.HasReferences(*v) {
			return
		}
		x, err := r.Expand(*v)
		if err != nil {
			p.AddError(key, &ctx.ConfigError{Msg: err.Error(), Err: err})
			return
		}
		*v = x
	})
	out.Secrets = append(slices.Clone(c.Secrets), r.Sensitive()...)
	return out, p.Err()
}

// expandAtMount resolves the references of a configuration mounted directly (from a
// profile row): variables from the process environment, secrets from the credentials
// service or the default credentials file. The scope's configuration keeps the references
// as written; only the running client sees the values. The resolved configuration is
// validated again.
func expandAtMount(c *ctx.Context, cfg Config) (Config, error) {
	if cfg.Expanded || !cfg.HasReferences() {
		return cfg, nil
	}
	r := &secrets.Resolver{Secrets: func() (secrets.Credentials, error) { return secrets.CredentialsFor(c) }, Scrubber: secrets.ScrubberOf(c)}
	x, err := cfg.Expand(r)
	if err != nil {
		return cfg, fmt.Errorf("mcp server %q: %w", cfg.ServerName, err)
	}
	x.Expanded = true
	if err := x.Validate(); err != nil {
		// Validation quotes few values (a redacted URL at most); mask the substitutions anyway.
		return cfg, fmt.Errorf("mcp server %q: resolved configuration: %s", cfg.ServerName, secretScrubber(x).Replace(err.Error()))
	}
	return x, nil
}
