package mcpmanager

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// A template is a string field of a server entry with ${…} references in it. The syntax:
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

// resolver expands references. It records every value it substitutes so that the
// manager can scrub them from text it publishes.
type resolver struct {
	lookupEnv func(string) (string, bool)
	// secrets returns the credentials provider, or an error saying why there is none.
	secrets func() (Credentials, error)

	creds      Credentials
	credsErr   error
	credsTried bool
	// substituted holds every substituted value; secretVals those that came from secrets.
	substituted []string
	secretVals  []string
}

// ErrMissingVariable is matched (errors.Is) by the error of a ${VAR} reference to an unset
// variable.
var ErrMissingVariable = errors.New("environment variable is not set")

// ErrNoCredentials is matched (errors.Is) by the error of a ${secret:NAME} reference when
// no credentials provider is available.
var ErrNoCredentials = errors.New("no credentials provider")

// expand returns t with its references substituted. Errors name the reference, never a
// value.
func (r *resolver) expand(t template) (string, error) {
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
			v, ok := r.lookupEnv(p.text)
			switch {
			case p.hasD && v == "":
				v = p.def
			case !ok:
				return "", fmt.Errorf("${%s}: %w (set it, or write ${%s:-default})", p.text, ErrMissingVariable, p.text)
			}
			r.substituted = append(r.substituted, v)
			b.WriteString(v)
		case partSecret:
			if !r.credsTried {
				r.credsTried = true
				r.creds, r.credsErr = r.secrets()
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
			b.WriteString(v)
		}
	}
	return b.String(), nil
}
