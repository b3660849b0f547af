// Package secrets owns the ${…} references of server configurations and API keys, and the
// secrets they read: the template syntax, the [Resolver] that expands references and records
// what it substituted (for scrubbing), and the [Credentials] providers behind
// ${secret:NAME} (the [CredentialsKey] service, or a [FileCredentials] file), and the
// host's one set of the sensitive values it knows, the [Scrubber] ([ScrubberKey]), which
// masks them in what is stored (the agent's session logs).
//
// The MCP client expands a server configuration's fields with it (mcpclient.Config.Expand),
// the MCP manager its entries, the model service its API keys.
package secrets

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/cordisgo/harness/internal/redact"
	"github.com/cordisgo/harness/internal/words"
)

// A template is a string with ${…} references in it (a server configuration's command, args,
// env, cwd, url and headers; a model's API key and base URL). The syntax, the same in profiles, the MCP manager's
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
	var err error
	_, closed := redact.Refs(s, func(text string, ref bool) {
		switch {
		case err != nil:
		case !ref:
			lit.WriteString(text)
		default:
			var p tmplPart
			if p, err = parseRef(text); err == nil {
				flush()
				t.parts = append(t.parts, p)
			}
		}
	})
	switch {
	case err != nil:
		return template{}, err
	case !closed:
		return template{}, errors.New(`"${" without a closing "}" (write "$${" for a literal "${")`)
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
func clip(s string) string { return words.Clip(s, 41) }

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
	// Scrubber, when set, is given every sensitive value substituted (see
	// [Resolver.Sensitive]): the host's scrubber ([ScrubberOf]), so that a secret a server
	// or the model was configured with is masked wherever it shows up later.
	Scrubber *Scrubber

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

// Sensitive returns the substituted values that must be masked wherever they show up: the
// secrets, and the values of variables with secret-looking names (GITHUB_TOKEN, API_KEY, …),
// in order.
func (r *Resolver) Sensitive() []string { return slices.Clone(r.sensitive) }

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

// Check returns the error of the first malformed reference in s (naming the reference, never
// a value), or nil.
func Check(s string) error {
	_, err := parseTemplate(s)
	return err
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
			if redact.SecretName(p.text) {
				r.sensitive = append(r.sensitive, v)
				r.Scrubber.AddSecret(v)
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
			r.Scrubber.AddSecret(v)
			b.WriteString(v)
		}
	}
	return b.String(), nil
}

// HasReferences reports whether s holds a ${…} reference (or a $${ escape): whether
// expanding it can change it.
func HasReferences(s string) bool { return strings.Contains(s, "${") }
