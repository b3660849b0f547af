package mcpmanager

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cordisgo/harness/plugins/mcpclient"
)

// entry is one server definition, from the settings file or a registration: an
// mcpclient configuration whose string fields may hold templates. It is immutable once
// built.
type entry struct {
	name    string
	enabled bool
	// cfg is the configuration as written (defaults applied, ServerName set, templates
	// unresolved). It may hold secrets written literally, so it is shown only redacted.
	cfg mcpclient.Config
	// fields are the parsed templates of the template-capable fields, by key path.
	fields []tmplField
	// key identifies the definition: two entries with the same key are the same server.
	key string
}

// tmplField is one template-capable field: its key path and parsed template.
type tmplField struct {
	path string
	t    template
}

// newEntry checks the templates of cfg (whose ServerName must be name) and computes the
// identity key. Template syntax errors name the key path.
func newEntry(name string, enabled bool, cfg mcpclient.Config) (*entry, error) {
	cfg.ServerName = name
	e := &entry{name: name, enabled: enabled, cfg: cfg}
	var errs []string
	add := func(path, s string) {
		t, err := parseTemplate(s)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", path, err))
			return
		}
		e.fields = append(e.fields, tmplField{path: path, t: t})
	}
	add("command", cfg.Command)
	for i, a := range cfg.Args {
		add(fmt.Sprintf("args[%d]", i), a)
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Env)) {
		add("env."+k, cfg.Env[k])
	}
	add("cwd", cfg.Cwd)
	add("url", cfg.URL)
	for _, k := range slices.Sorted(maps.Keys(cfg.Headers)) {
		add("headers."+k, cfg.Headers[k])
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	b, err := json.Marshal(struct {
		Enabled bool             `json:"enabled"`
		Config  mcpclient.Config `json:"config"`
	}{enabled, cfg})
	if err != nil {
		return nil, err
	}
	e.key = string(b)
	return e, nil
}

// static reports whether no field of e has a reference.
func (e *entry) static() bool {
	for _, f := range e.fields {
		if !f.t.static() {
			return false
		}
	}
	return true
}

// redacted returns the configuration as written with secrets masked, for views.
func (e *entry) redacted() mcpclient.Config { return e.cfg.Redacted() }

// resolved is an entry whose templates were expanded: the configuration handed to the
// client, and the values to scrub from anything published about it.
type resolved struct {
	cfg   mcpclient.Config
	scrub *scrubber
}

// resolve expands e's templates with r and validates the result. Errors name the server and
// the key path, never a value; the returned scrubber knows the substituted values even
// when resolution fails part way.
func (e *entry) resolve(r *resolver) (*resolved, error) {
	cfg := e.cfg
	cfg.Args = slices.Clone(e.cfg.Args)
	cfg.Env = maps.Clone(e.cfg.Env)
	cfg.Headers = maps.Clone(e.cfg.Headers)
	for _, f := range e.fields {
		v, err := r.expand(f.t)
		if err != nil {
			return &resolved{scrub: newScrubber(cfg, r)}, fmt.Errorf("mcp server %q: key %q: %w", e.name, f.path, err)
		}
		switch {
		case f.path == "command":
			cfg.Command = v
		case f.path == "cwd":
			cfg.Cwd = v
		case f.path == "url":
			cfg.URL = v
		case strings.HasPrefix(f.path, "args["):
			var i int
			_, _ = fmt.Sscanf(f.path, "args[%d]", &i)
			cfg.Args[i] = v
		case strings.HasPrefix(f.path, "env."):
			cfg.Env[strings.TrimPrefix(f.path, "env.")] = v
		case strings.HasPrefix(f.path, "headers."):
			cfg.Headers[strings.TrimPrefix(f.path, "headers.")] = v
		}
	}
	res := &resolved{cfg: cfg, scrub: newScrubber(cfg, r)}
	// The client masks the same values in its own logs and reports.
	res.cfg.Secrets = res.scrub.vals
	if err := cfg.Validate(); err != nil {
		// Validation messages quote few values (a redacted URL at most); scrub anyway.
		return res, fmt.Errorf("%s", res.scrub.clean(err.Error()))
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

func newScrubber(cfg mcpclient.Config, r *resolver) *scrubber {
	seen := make(map[string]bool)
	var vals []string
	addv := func(v string, min int) {
		if len(v) >= min && !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	if r != nil {
		for _, v := range r.secretVals {
			addv(v, minSecretScrub)
		}
		for _, v := range r.substituted {
			addv(v, minValueScrub)
		}
	}
	for _, v := range cfg.Env {
		addv(v, minValueScrub)
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

// redactedText replaces a scrubbed value.
const redactedText = "[redacted]"

// clean returns s with every known sensitive value replaced.
func (s *scrubber) clean(text string) string {
	if s == nil || s.repl == nil || text == "" {
		return text
	}
	return s.repl.Replace(text)
}
