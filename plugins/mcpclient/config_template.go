package mcpclient

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/cordisgo/harness/ctx"
)

// A template is a string field of a server configuration (command, args, env, cwd, url,
// headers) with ${…} references in it. The syntax, the same in profiles, the MCP manager's
// settings file and the CLI:
//
//	${VAR}            the environment variable VAR (an error if it is unset)
//	${VAR:-default}   VAR, or default when VAR is unset or empty
//	${secret:NAME}    the secret NAME from the credentials provider
//	$${               a literal "${"
//
// Any other "$" is literal. A default is literal text up to the closing brace; it cannot
// contain "}" or another reference.
type template struct {
	parts []tmplPart
}

// tmplPart is a literal (kind partLiteral) or a reference.
type tmplPart struct {
	kind partKind
	text string // literal text, variable name or secret name
	def  string // default of a variable
	hasD bool   // the variable has a default
}

type partKind uint8

const (
	partLiteral partKind = iota
	partVar
	partSecret
)

var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validSecretName reports whether name matches ^[A-Za-z0-9_.-]{1,128}$. (Written out:
// compiling that regular expression, with its counted repetition, cost every process that
// links this package about a millisecond at start.)
func validSecretName(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for i := range len(name) {
		switch b := name[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '_', b == '.', b == '-':
		default:
			return false
		}
	}
	return true
}

// parseTemplate parses s. Errors quote the reference, never a value.
func parseTemplate(s string) (template, error) {
	var t template
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.parts = append(t.parts, tmplPart{kind: partLiteral, text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			lit.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return template{}, errors.New(`"${" without a closing "}" (write "$${" for a literal "${")`)
			}
			body := s[i+2 : i+2+end]
			p, err := parseRef(body)
			if err != nil {
				return template{}, err
			}
			flush()
			t.parts = append(t.parts, p)
			i += 2 + end + 1
		default:
			lit.WriteByte(s[i])
			i++
		}
	}
	flush()
	return t, nil
}

func parseRef(body string) (tmplPart, error) {
	if name, ok := strings.CutPrefix(body, "secret:"); ok {
		if !validSecretName(name) {
			return tmplPart{}, fmt.Errorf("${secret:%s}: a secret name is 1 to 128 of [A-Za-z0-9_.-]", clip(name))
		}
		return tmplPart{kind: partSecret, text: name}, nil
	}
	name, def, hasDef := strings.Cut(body, ":-")
	if !envNamePattern.MatchString(name) {
		if body == "" {
			return tmplPart{}, errors.New(`"${}" names no variable`)
		}
		return tmplPart{}, fmt.Errorf("${%s}: expected ${VAR}, ${VAR:-default} or ${secret:NAME}", clip(name))
	}
	if strings.Contains(def, "${") {
		return tmplPart{}, fmt.Errorf("${%s:-…}: a default cannot contain another reference", name)
	}
	return tmplPart{kind: partVar, text: name, def: def, hasD: hasDef}, nil
}

// clip shortens text quoted in an error about a malformed reference.
func clip(s string) string {
	const max = 40
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// static reports whether t has no references.
func (t template) static() bool {
	for _, p := range t.parts {
		if p.kind != partLiteral {
			return false
		}
	}
	return true
}

// usesSecrets reports whether t references a secret.
func (t template) usesSecrets() bool {
	for _, p := range t.parts {
		if p.kind == partSecret {
			return true
		}
	}
	return false
}

// Resolver expands references. It records every value it substitutes so that the caller
// can scrub them from text it publishes. The zero value reads the process environment and
// has no credentials provider.
//
// A Resolver is not safe for concurrent use; use one per resolution.
type Resolver struct {
	// LookupEnv reads a variable; nil means [os.LookupEnv].
	LookupEnv func(string) (string, bool)
	// Secrets returns the credentials provider, or an error saying why there is none
	// (wrapping [ErrNoCredentials]); nil means there is none. It is called at most once,
	// on the first ${secret:…} reference.
	Secrets func() (Credentials, error)

	creds      Credentials
	credsErr   error
	credsTried bool
	// substituted holds every substituted value; secretVals those that came from secrets.
	substituted []string
	secretVals  []string
	// sensitive are the secret values and the values of variables with secret-looking
	// names (GITHUB_TOKEN, API_KEY, …).
	sensitive []string
}

// Substituted returns every value substituted so far, in order.
func (r *Resolver) Substituted() []string { return slices.Clone(r.substituted) }

// SecretValues returns the substituted values that came from secrets, in order.
func (r *Resolver) SecretValues() []string { return slices.Clone(r.secretVals) }

// Expand returns s with its references substituted. Errors name the reference, never a
// value.
func (r *Resolver) Expand(s string) (string, error) {
	t, err := parseTemplate(s)
	if err != nil {
		return "", err
	}
	return r.expand(t)
}

// ErrMissingVariable is matched (errors.Is) by the error of a ${VAR} reference to an unset
// variable.
var ErrMissingVariable = errors.New("environment variable is not set")

// ErrNoCredentials is matched (errors.Is) by the error of a ${secret:NAME} reference when
// no credentials provider is available.
var ErrNoCredentials = errors.New("no credentials provider")

// expand returns t with its references substituted. Errors name the reference, never a
// value.
func (r *Resolver) expand(t template) (string, error) {
	if t.static() {
		if len(t.parts) == 0 {
			return "", nil
		}
		return t.parts[0].text, nil
	}
	var b strings.Builder
	for _, p := range t.parts {
		switch p.kind {
		case partLiteral:
			b.WriteString(p.text)
		case partVar:
			lookup := r.LookupEnv
			if lookup == nil {
				lookup = os.LookupEnv
			}
			v, ok := lookup(p.text)
			switch {
			case p.hasD && v == "":
				v = p.def
			case !ok:
				return "", fmt.Errorf("${%s}: %w (set it, or write ${%s:-default})", p.text, ErrMissingVariable, p.text)
			}
			r.substituted = append(r.substituted, v)
			if secretName(p.text) {
				r.sensitive = append(r.sensitive, v)
			}
			b.WriteString(v)
		case partSecret:
			if !r.credsTried {
				r.credsTried = true
				if r.Secrets == nil {
					r.credsErr = fmt.Errorf("%w: nothing provides %s", ErrNoCredentials, CredentialsKey.Name())
				} else {
					r.creds, r.credsErr = r.Secrets()
				}
			}
			if r.credsErr != nil {
				return "", fmt.Errorf("${secret:%s}: %w", p.text, r.credsErr)
			}
			v, err := r.creds.Lookup(p.text)
			if err != nil {
				return "", fmt.Errorf("${secret:%s}: %w", p.text, err)
			}
			r.substituted = append(r.substituted, v)
			r.secretVals = append(r.secretVals, v)
			r.sensitive = append(r.sensitive, v)
			b.WriteString(v)
		}
	}
	return b.String(), nil
}

// HasReferences reports whether s holds a ${…} reference (or a $${ escape): whether
// expanding it can change it.
func HasReferences(s string) bool { return strings.Contains(s, "${") }

// templateFields calls f with the key path and value of every template-capable field of
// c, in key order within each group: command, args, env, cwd, url, headers.
func (c *Config) templateFields(f func(key string, v *string)) {
	f("command", &c.Command)
	for i := range c.Args {
		f(fmt.Sprintf("args[%d]", i), &c.Args[i])
	}
	for _, k := range sortedKeys(c.Env) {
		v := c.Env[k]
		f("env."+k, &v)
		if v != c.Env[k] { // a read-only walk (HasReferences) must not write shared maps
			c.Env[k] = v
		}
	}
	f("cwd", &c.Cwd)
	f("url", &c.URL)
	for _, k := range sortedKeys(c.Headers) {
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
	c.templateFields(func(_ string, v *string) { found = found || HasReferences(*v) })
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
		if !HasReferences(*v) {
			return
		}
		if _, err := parseTemplate(*v); err != nil {
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
func (c Config) Expand(r *Resolver) (Config, error) {
	out := c
	out.Args = slices.Clone(c.Args)
	out.Env = maps.Clone(c.Env)
	out.Headers = maps.Clone(c.Headers)
	var p ctx.Problems
	out.templateFields(func(key string, v *string) {
		if !HasReferences(*v) {
			return
		}
		x, err := r.Expand(*v)
		if err != nil {
			p.AddError(key, &ctx.ConfigError{Msg: err.Error(), Err: err})
			return
		}
		*v = x
	})
	out.Secrets = append(slices.Clone(c.Secrets), r.sensitive...)
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
	r := &Resolver{Secrets: func() (Credentials, error) { return credentialsFor(c) }}
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

// CredentialsFor returns the credentials that ${secret:NAME} references read at c's scope:
// the [CredentialsKey] service when one is provided, else the default credentials file when
// it exists (else an error wrapping [ErrNoCredentials]). Other plugins that expand
// references (the model service's API keys) resolve through it, as the clients do.
func CredentialsFor(c *ctx.Context) (Credentials, error) { return credentialsFor(c) }

// credentialsFor returns the credentials service when one is provided, else the default
// credentials file when it exists.
func credentialsFor(c *ctx.Context) (Credentials, error) {
	if cr, ok := CredentialsKey.Get(c); ok && cr != nil {
		return cr, nil
	}
	return defaultCredentials()
}

// defaultCredentials returns the default credentials file when it exists.
func defaultCredentials() (Credentials, error) {
	path, err := DefaultCredentialsFile()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoCredentials, err)
	}
	fc := NewFileCredentials(path)
	if err := fc.Available(); err != nil {
		return nil, err
	}
	return fc, nil
}
