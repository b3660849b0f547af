package mcpmanager

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cordisgo/harness/internal/redact"
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
	scrub *scrubber
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
	res.cfg.Secrets = res.scrub.vals
	if err := cfg.Validate(); err != nil {
		// Validation messages quote few values (a redacted URL at most); scrub anyway.
		return res, fmt.Errorf("mcp server %q: %s", e.name, res.scrub.clean(err.Error()))
	}
	return res, nil
}

// Minimum lengths of values the scrubber replaces: shorter ones would mangle ordinary text
// ("1", "true") while hiding nothing worth hiding.
const (
	minSecretScrub = 4
	minValueScrub  = 8
)

// scrubber replaces known sensitive values in text that the manager publishes (errors,
// stderr tails, log lines): every value substituted from a secret, and every env value,
// header value and template substitution long enough to be a credential. It is immutable.
type scrubber struct {
	repl *strings.Replacer
	vals []string // the masked values, longest first
}

func newScrubber(cfg mcpclient.Config, r *secrets.Resolver) *scrubber {
	seen := make(map[string]bool)
	var vals []string
	addv := func(v string, min int) {
		if len(v) >= min && !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	if r != nil {
		for _, v := range r.SecretValues() {
			addv(v, minSecretScrub)
		}
		for _, v := range r.Substituted() {
			addv(v, minValueScrub)
		}
	}
	for _, v := range cfg.Env {
		addv(v, minValueScrub)
	}
	for _, v := range []string{cfg.OAuth.ClientSecret, cfg.OAuth.IdPClientSecret} {
		addv(v, minSecretScrub)
	}
	for _, v := range cfg.Headers {
		addv(v, minValueScrub)
		// "Bearer <token>": the token alone may show up too.
		if _, tok, ok := strings.Cut(v, " "); ok {
			addv(tok, minValueScrub)
		}
	}
	if len(vals) == 0 {
		return &scrubber{}
	}
	// Longest first, so a value containing another is replaced whole.
	slices.SortFunc(vals, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, redactedText)
	}
	return &scrubber{repl: strings.NewReplacer(pairs...), vals: vals}
}

// redactedText replaces a scrubbed value: the module's one marker.
const redactedText = redact.Marker

// clean returns s with every known sensitive value replaced.
func (s *scrubber) clean(text string) string {
	if s == nil || s.repl == nil || text == "" {
		return text
	}
	return s.repl.Replace(text)
}
