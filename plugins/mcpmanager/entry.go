package mcpmanager

import (
	"encoding/json"
	"fmt"

	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/secrets"
)

// entry is one server definition, from the settings file or a registration: an
// mcpclient configuration whose string fields may hold references. It is immutable once
// built.
type entry struct {
	name    string
	enabled bool
	// cfg is the configuration as written (defaults applied, ServerName set, references
	// unresolved). It may hold secrets written literally, so it is shown only redacted.
	cfg mcpclient.Config
	// key identifies the definition: two entries with the same key are the same server.
	key string
	// layer is the settings file the entry comes from: "user" or "project" (empty for
	// registered entries).
	layer string
}

// newEntry checks the references of cfg (whose ServerName becomes name) and computes the
// identity key. Reference syntax errors are [*ctx.ConfigError] values naming the key path.
func newEntry(name string, enabled bool, cfg mcpclient.Config) (*entry, error) {
	cfg.ServerName = name
	cfg.Expanded = false
	if err := cfg.CheckReferences(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(struct {
		Enabled bool             `json:"enabled"`
		Config  mcpclient.Config `json:"config"`
	}{enabled, cfg})
	if err != nil {
		return nil, err
	}
	return &entry{name: name, enabled: enabled, cfg: cfg, key: string(b)}, nil
}

// static reports whether no field of e has a reference.
func (e *entry) static() bool { return !e.cfg.HasReferences() }

// redacted returns the configuration as written with secrets masked, for views.
func (e *entry) redacted() mcpclient.Config { return e.cfg.Redacted() }

// resolved is an entry whose references were expanded: the configuration handed to the
// client, and the values to scrub from anything published about it.
type resolved struct {
	cfg   mcpclient.Config
	scrub *secrets.Scrubber
}

// resolve expands e's references with r (the one implementation profiles use too,
// [mcpclient.Config.Expand]) and validates the result. Errors name the server and the key
// path, never a value; the returned scrubber knows the substituted values even when
// resolution fails part way.
func (e *entry) resolve(r *secrets.Resolver) (*resolved, error) {
	cfg, err := e.cfg.Expand(r)
	if err != nil {
		return &resolved{scrub: newScrubber(e.cfg, r)}, fmt.Errorf("mcp server %q: %w", e.name, err)
	}
	cfg.Expanded = true
	res := &resolved{cfg: cfg, scrub: newScrubber(cfg, r)}
	// The client masks the same values in its own logs and reports.
	res.cfg.Secrets = res.scrub.Values()
	if err := cfg.Validate(); err != nil {
		// Validation messages quote few values (a redacted URL at most); scrub anyway.
		return res, fmt.Errorf("mcp server %q: %s", e.name, res.scrub.Replace(err.Error()))
	}
	return res, nil
}

// newScrubber returns the masking of what the manager publishes about an entry (errors,
// stderr tails, log lines): every value substituted from a secret, and every env value,
// header value and template substitution long enough to be a credential
// ([secrets.MinValue]). It is wider than what the host's scrubber learns (the secrets
// alone): a path or a flag is hidden here, next to the server, and nowhere else.
func newScrubber(cfg mcpclient.Config, r *secrets.Resolver) *secrets.Scrubber {
	s := new(secrets.Scrubber)
	if r != nil {
		for _, v := range r.SecretValues() {
			s.AddSecret(v)
		}
		for _, v := range r.Substituted() {
			s.AddValue(v)
		}
	}
	for _, v := range cfg.Env {
		s.AddValue(v)
	}
	for _, v := range []string{cfg.OAuth.ClientSecret, cfg.OAuth.IdPClientSecret} {
		s.AddSecret(v)
	}
	for _, v := range cfg.Headers {
		s.AddValue(v) // and "Bearer <token>"'s token alone
	}
	return s
}
